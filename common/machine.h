// MachineInfo: the fingerprint that labels every published number.
#ifndef SECMODE_COMMON_MACHINE_H_
#define SECMODE_COMMON_MACHINE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace secmode::common {

struct MachineInfo {
  std::string cpu_model;
  int logical_cpus = 0;
  // The flags that matter for this work's crypto, those the CPU has:
  // aes, vaes, pclmulqdq, vpclmulqdq, sha_ni, avx2, avx512f ...
  std::vector<std::string> cpu_flags;
  std::string kernel;  // uname -srm
  std::string hostname;
  std::string openssl;         // runtime OpenSSL_version()
  std::string krb5;            // MIT krb5 version the binary was built against
  std::string compiler;        // "g++ 12.2.0" / "clang 14.0.6"
  std::string build_type;      // CMAKE_BUILD_TYPE, plus "+asan" etc.
  std::string compiler_flags;  // CMAKE_CXX_FLAGS and the build type's flags
  // secmode's own source: the git commit it was built from, and whether
  // its tracked files differed from that commit ("clean" / "dirty"); both
  // "unknown" when it was not built from a git checkout.
  std::string secmode_commit, secmode_tree;
  // The libraries the measured code uses, as loaded by this process: each
  // file's name and what dpkg says of it at run time ("1.20.1-2+deb12u2
  // (libkrb5-3:amd64)", or "unknown" with the reason), by file name.
  std::vector<std::pair<std::string, std::string>> libraries;
  double tsc_ghz = 0;
};

// Logical CPUs the threads of this process can run on (at least 1).
int LogicalCpus();

// The whole machine's CPU time from /proc/stat's "cpu" line, in clock
// ticks: idle (idle + iowait) and the sum of every state (steal included).
struct CpuTimes {
  uint64_t idle = 0, total = 0;
  uint64_t steal = 0;  // time the hypervisor ran something else on our vCPUs
  // user + nice + system: what processes and kernel threads ran (neither
  // interrupts nor steal), the time a process's rusage can be held against.
  uint64_t task = 0;
  bool known = false;  // false: /proc/stat could not be read
};
CpuTimes ReadCpuTimes();

// The share of the machine's CPU time spent idle between two readings; -1
// when either is unknown or no tick passed.
double IdleFraction(const CpuTimes& before, const CpuTimes& after);
// The share of it the hypervisor took (steal); -1 likewise.
double StealFraction(const CpuTimes& before, const CpuTimes& after);
// The CPU seconds this process and its waited-for children have run (user
// and system, getrusage), to hold against CpuTimes::task.
double OwnCpuSeconds();
// The share of the machine's CPU time that other processes (and kernel
// threads) ran between two readings: the task time less `own_seconds`
// (OwnCpuSeconds over the same span), over all of it, at least 0; -1 when
// either reading is unknown or no tick passed.
double OthersFraction(const CpuTimes& before, const CpuTimes& after, double own_seconds);
// A part of the machine's CPU time between two readings, in CPU seconds,
// to add up over several short spans before dividing once (a span of 50 ms
// is 10 clock ticks of 2 CPUs, and one tick of rounding is then a tenth of
// it): the part (which rounding can take below 0) and all of the machine's
// CPU time; both 0 when either reading is unknown or no tick passed.
struct CpuShare {
  double part_s = 0, all_s = 0;
  void Add(const CpuShare& o) {
    part_s += o.part_s;
    all_s += o.all_s;
  }
  // part_s / all_s, at least 0; -1 when all_s is 0.
  double Fraction() const;
};
// OthersFraction's parts: what others ran (the task time less
// `own_seconds`) and all of the machine's CPU time.
CpuShare OthersShare(const CpuTimes& before, const CpuTimes& after, double own_seconds);
// StealFraction's parts: what the hypervisor took and all of the time.
CpuShare StealShare(const CpuTimes& before, const CpuTimes& after);

// One thread's CPU time since it started. cpu_ns is the scheduler's own
// count, in ns (/proc/<pid>/task/<tid>/schedstat, its first field), or
// utime + stime where the kernel keeps no schedstat. system_ns is its
// kernel part (.../stat: stime, in whole clock ticks, USER_HZ, here in
// ns): short work does not move it, so only cpu_ns counts that.
struct TaskCpu {
  int pid = 0, tid = 0;
  std::string name;  // the thread's comm
  uint64_t system_ns = 0, cpu_ns = 0;
};
// Every thread of process `root` and of its descendants (daemons that
// start sessions of their own included; threads that end while it reads
// are left out); empty when there is no such process or /proc cannot be
// read.
std::vector<TaskCpu> ReadProcessTreeTaskCpu(int root);

// What threads spent between two readings (cpu_ns): in all, and the one
// thread that spent most of those `candidate` accepts (all when it is
// empty; a thread that started in between counts from zero, one that ended
// is left out). busiest_system_seconds is that thread's stime ticks in
// between, at most busiest_seconds.
struct TaskCpuSpent {
  double seconds = 0;
  int threads = 0;      // that spent anything
  std::string busiest;  // "<comm> (tid N)"; empty when none of them spent anything
  double busiest_seconds = 0, busiest_system_seconds = 0;
};
TaskCpuSpent SpentBetween(const std::vector<TaskCpu>& before, const std::vector<TaskCpu>& after,
                          const std::function<bool(const TaskCpu&)>& candidate = {});

// /proc/loadavg: runnable threads averaged over 1, 5 and 15 minutes.
struct LoadAverage {
  double one = 0, five = 0, fifteen = 0;
  bool known = false;  // false: /proc/loadavg could not be read
};
LoadAverage ReadLoadAverage();

// This machine's host name, or "unknown".
std::string Hostname();

// Reads /proc/cpuinfo, uname and library versions. Never fails: unknown
// fields are "unknown".
MachineInfo ReadMachineInfo();

}  // namespace secmode::common

#endif  // SECMODE_COMMON_MACHINE_H_
