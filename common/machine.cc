#include "common/machine.h"

#include <link.h>
#include <openssl/crypto.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "secmode_source_version.h"  // generated: tools/source-version.cmake

#ifndef SECMODE_KRB5_VERSION
#define SECMODE_KRB5_VERSION "unknown"
#endif
#ifndef SECMODE_BUILD_TYPE
#define SECMODE_BUILD_TYPE "unknown"
#endif
#ifndef SECMODE_CXX_FLAGS
#define SECMODE_CXX_FLAGS "unknown"
#endif

namespace secmode::common {
namespace {

constexpr const char* kInterestingFlags[] = {"aes", "vaes",   "pclmulqdq", "vpclmulqdq", "sha_ni",
                                             "avx", "avx2",   "avx512f",   "avx512vl",   "bmi2",
                                             "adx", "sse4_1", "ssse3"};

std::string CompilerString() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "g++ " __VERSION__;
#else
  return "unknown";
#endif
}

std::string BuildType() {
  std::string t = SECMODE_BUILD_TYPE;
#if defined(__SANITIZE_ADDRESS__)
  t += "+asan";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  t += "+asan";
#endif
#endif
  return t;
}

// The shared objects this process loaded whose file names start with one
// of these: what the measured code runs (Kerberos, GSS-API, gssrpc,
// OpenSSL, ALGLIB), by file name, each with its resolved path.
constexpr const char* kLibraryPrefixes[] = {"libkrb5.",   "libgssapi_krb5.", "libk5crypto.",
                                            "libgssrpc.", "libcrypto.",      "libssl.",
                                            "libalglib."};

std::map<std::string, std::string> LoadedLibraries() {
  std::map<std::string, std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
        const std::string path = info->dlpi_name;
        const std::string name = path.substr(path.find_last_of('/') + 1);
        for (const char* prefix : kLibraryPrefixes) {
          if (name.rfind(prefix, 0) != 0) continue;
          char real[PATH_MAX];
          auto* out = static_cast<std::map<std::string, std::string>*>(data);
          (*out)[name] = realpath(path.c_str(), real) != nullptr ? std::string(real) : path;
        }
        return 0;
      },
      &found);
  return found;
}

// Runs a dpkg-query and returns what it printed ("" when it could not run).
std::string DpkgQuery(const std::vector<std::string>& args) {
  auto dir = MakeTempDirectory("secmode-dpkg");
  if (!dir.ok()) return "";
  Command c;
  c.argv = {"dpkg-query"};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  c.log_path = *dir + "/out";
  std::string text;
  if (!FindProgram("dpkg-query").empty() && RunAndWait(c, 10000).ok()) {
    auto read = ReadFile(c.log_path);
    if (read.ok()) text = *read;
  }
  (void)RemoveTree(*dir);
  return text;
}

// Each loaded library with its package's version, from dpkg at run time.
std::vector<std::pair<std::string, std::string>> LibraryVersions() {
  const std::map<std::string, std::string> libs = LoadedLibraries();
  std::vector<std::pair<std::string, std::string>> out;
  if (libs.empty()) return out;
  // "package:arch: /path" per file dpkg knows; then each package's version.
  std::vector<std::string> args = {"-S"};
  for (const auto& [name, path] : libs) args.push_back(path);
  std::map<std::string, std::string> package_of;  // path -> package
  std::istringstream owners(DpkgQuery(args));
  std::string line;
  while (std::getline(owners, line)) {
    const size_t sep = line.find(": /");
    if (sep != std::string::npos) package_of[line.substr(sep + 2)] = line.substr(0, sep);
  }
  std::vector<std::string> wanted = {"-W", "-f", "${binary:Package} ${Version}\n"};
  for (const auto& [path, package] : package_of) wanted.push_back(package);
  std::map<std::string, std::string> version_of;  // package -> version
  if (!package_of.empty()) {
    std::istringstream versions(DpkgQuery(wanted));
    while (std::getline(versions, line)) {
      const size_t sp = line.find(' ');
      if (sp != std::string::npos) version_of[line.substr(0, sp)] = line.substr(sp + 1);
    }
  }
  for (const auto& [name, path] : libs) {
    const auto p = package_of.find(path);
    if (p == package_of.end()) {
      out.emplace_back(name, "unknown (" + path + " belongs to no dpkg package)");
      continue;
    }
    const auto v = version_of.find(p->second);
    out.emplace_back(name, v == version_of.end()
                               ? "unknown (dpkg has no version of " + p->second + ")"
                               : v->second + " (" + p->second + ")");
  }
  return out;
}

}  // namespace

std::string Hostname() {
  char host[256] = {};
  return gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
}

int LogicalCpus() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

CpuTimes ReadCpuTimes() {
  CpuTimes t;
  std::ifstream stat("/proc/stat");
  std::string label;
  if (!(stat >> label) || label != "cpu") return t;
  // user nice system idle iowait irq softirq steal (guest time is already
  // counted in user and nice).
  uint64_t v[8];
  for (int i = 0; i < 8; ++i) {
    if (!(stat >> v[i])) return t;
  }
  t.idle = v[3] + v[4];
  t.steal = v[7];
  t.task = v[0] + v[1] + v[2];
  for (uint64_t x : v) t.total += x;
  t.known = true;
  return t;
}

double IdleFraction(const CpuTimes& before, const CpuTimes& after) {
  if (!before.known || !after.known || after.total <= before.total || after.idle < before.idle) {
    return -1;
  }
  return static_cast<double>(after.idle - before.idle) /
         static_cast<double>(after.total - before.total);
}

double StealFraction(const CpuTimes& before, const CpuTimes& after) {
  if (!before.known || !after.known || after.total <= before.total || after.steal < before.steal) {
    return -1;
  }
  return static_cast<double>(after.steal - before.steal) /
         static_cast<double>(after.total - before.total);
}

double OwnCpuSeconds() {
  auto seconds = [](int who) {
    rusage r{};
    if (getrusage(who, &r) != 0) return 0.0;
    return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
           static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
  };
  return seconds(RUSAGE_SELF) + seconds(RUSAGE_CHILDREN);
}

// Interrupts (where the kernel counts TCP's work) are on neither side;
// children still running, and kernel threads working for this process,
// count as others.
CpuShare OthersShare(const CpuTimes& before, const CpuTimes& after, double own_seconds) {
  if (!before.known || !after.known || after.total <= before.total || after.task < before.task) {
    return {};
  }
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  const double task_s = static_cast<double>(after.task - before.task) * tick;
  return {task_s - own_seconds, static_cast<double>(after.total - before.total) * tick};
}

CpuShare StealShare(const CpuTimes& before, const CpuTimes& after) {
  if (!before.known || !after.known || after.total <= before.total || after.steal < before.steal) {
    return {};
  }
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  return {static_cast<double>(after.steal - before.steal) * tick,
          static_cast<double>(after.total - before.total) * tick};
}

double CpuShare::Fraction() const { return all_s > 0 ? std::max(0.0, part_s) / all_s : -1; }

double OthersFraction(const CpuTimes& before, const CpuTimes& after, double own_seconds) {
  return OthersShare(before, after, own_seconds).Fraction();
}

LoadAverage ReadLoadAverage() {
  LoadAverage l;
  std::ifstream in("/proc/loadavg");
  if (in >> l.one >> l.five >> l.fifteen) l.known = true;
  return l;
}

namespace {

// /proc/.../stat: "pid (comm) state ppid pgrp session tty tpgid flags
// minflt cminflt majflt cmajflt utime stime ..."; comm may hold spaces and
// parentheses, so the fields are counted from its last ')'.
struct StatLine {
  std::string comm;
  long ppid = 0;
  unsigned long long utime = 0, stime = 0;
};
bool ParseStat(const std::string& text, StatLine* out) {
  const size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  out->comm = text.substr(open + 1, close - open - 1);
  std::istringstream rest(text.substr(close + 1));
  std::string state;
  long pgrp = 0, session = 0, tty = 0, tpgid = 0;
  unsigned long long flags = 0, minflt = 0, cminflt = 0, majflt = 0, cmajflt = 0;
  return static_cast<bool>(rest >> state >> out->ppid >> pgrp >> session >> tty >> tpgid >> flags >>
                           minflt >> cminflt >> majflt >> cmajflt >> out->utime >> out->stime);
}

bool ReadStat(const std::string& path, StatLine* out) {
  const Result<std::string> text = ReadFile(path);
  return text.ok() && ParseStat(*text, out);
}

// The names in `dir`; what could not be listed is left out (a process or
// thread that ended meanwhile), never an exception.
std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  return names;
}

bool AllDigits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::vector<TaskCpu> ReadProcessTreeTaskCpu(int root) {
  std::vector<TaskCpu> tasks;
  if (root <= 0) return tasks;
  const long hz = sysconf(_SC_CLK_TCK);
  if (hz <= 0) return tasks;
  const uint64_t ns_per_tick = 1000000000ull / static_cast<uint64_t>(hz);
  // schedstat's ns where the kernel keeps them (ThreadSchedStatNow).
  static const bool has_schedstat = ThreadSchedStatNow().known;
  // Every process's parent, then those that descend from `root`.
  std::map<long, long> parent;
  for (const std::string& pid : Names("/proc")) {
    StatLine p;
    if (AllDigits(pid) && ReadStat("/proc/" + pid + "/stat", &p)) {
      parent[std::atol(pid.c_str())] = p.ppid;
    }
  }
  for (const auto& [pid, ppid] : parent) {
    long up = pid;
    for (int depth = 0; up > 0 && up != root && depth < 64; ++depth) {
      const auto it = parent.find(up);
      up = it == parent.end() ? 0 : it->second;
    }
    if (up != root) continue;
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    for (const std::string& tid : Names(dir)) {
      StatLine t;
      if (!AllDigits(tid) || !ReadStat(dir + "/" + tid + "/stat", &t)) continue;
      TaskCpu c;
      c.pid = static_cast<int>(pid);
      c.tid = std::atoi(tid.c_str());
      c.name = t.comm;
      c.system_ns = t.stime * ns_per_tick;
      c.cpu_ns = (t.utime + t.stime) * ns_per_tick;
      if (has_schedstat) {
        const ThreadSchedStat run = ReadSchedStat((dir + "/" + tid + "/schedstat").c_str());
        // Unread: the thread ended after its stat was read, or could not
        // be read; left out (its ticks' sum, below its ns, would count it
        // as a new thread).
        if (!run.known) continue;
        c.cpu_ns = run.run_ns;
      }
      tasks.push_back(std::move(c));
    }
  }
  return tasks;
}

TaskCpuSpent SpentBetween(const std::vector<TaskCpu>& before, const std::vector<TaskCpu>& after,
                          const std::function<bool(const TaskCpu&)>& candidate) {
  std::map<int, const TaskCpu*> was;
  for (const TaskCpu& t : before) was[t.tid] = &t;
  TaskCpuSpent s;
  for (const TaskCpu& t : after) {
    const auto w = was.find(t.tid);
    // A tid reused by another process's thread in between is a new thread.
    const bool same = w != was.end() && w->second->pid == t.pid && w->second->cpu_ns <= t.cpu_ns;
    const uint64_t cpu = t.cpu_ns - (same ? w->second->cpu_ns : 0);
    const uint64_t was_system = same ? w->second->system_ns : 0;
    const uint64_t system = std::min(cpu, t.system_ns - std::min(t.system_ns, was_system));
    const double spent = static_cast<double>(cpu) / 1e9;
    if (spent <= 0) continue;
    s.seconds += spent;
    ++s.threads;
    if (spent > s.busiest_seconds && (!candidate || candidate(t))) {
      s.busiest_seconds = spent;
      s.busiest_system_seconds = static_cast<double>(system) / 1e9;
      s.busiest = t.name + " (tid " + std::to_string(t.tid) + ")";
    }
  }
  return s;
}

MachineInfo ReadMachineInfo() {
  MachineInfo info;
  info.cpu_model = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(cpuinfo, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && info.cpu_model == "unknown") info.cpu_model = value;
    if (key == "flags" && flags.empty()) {
      std::istringstream in(value);
      std::string f;
      while (in >> f) flags.insert(f);
    }
  }
  for (const char* f : kInterestingFlags) {
    if (flags.count(f)) info.cpu_flags.push_back(f);
  }
  info.logical_cpus = LogicalCpus();
  utsname u;
  if (uname(&u) == 0) {
    info.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  } else {
    info.kernel = "unknown";
  }
  info.hostname = Hostname();
  info.openssl = OpenSSL_version(OPENSSL_VERSION);
  info.krb5 = std::string("MIT krb5 ") + SECMODE_KRB5_VERSION;
  info.compiler = CompilerString();
  info.build_type = BuildType();
  info.compiler_flags = SECMODE_CXX_FLAGS;
  info.secmode_commit = SECMODE_SOURCE_COMMIT;
  info.secmode_tree = SECMODE_SOURCE_TREE;
  info.libraries = LibraryVersions();
  info.tsc_ghz = TscGhz();
  return info;
}

}  // namespace secmode::common
