#include "common/machine.h"

#include <openssl/crypto.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "common/clock.h"

#ifndef SECMODE_KRB5_VERSION
#define SECMODE_KRB5_VERSION "unknown"
#endif
#ifndef SECMODE_BUILD_TYPE
#define SECMODE_BUILD_TYPE "unknown"
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
  info.tsc_ghz = TscGhz();
  return info;
}

}  // namespace secmode::common
