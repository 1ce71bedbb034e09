#include "common/clock.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace secmode::common {

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

std::chrono::steady_clock::time_point SteadyAt(uint64_t ns) {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
}

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

ThreadSwitches ThreadSwitchesNow() {
  rusage u{};
  ThreadSwitches s;
  if (getrusage(RUSAGE_THREAD, &u) == 0) {
    s.voluntary = static_cast<uint64_t>(u.ru_nvcsw);
    s.involuntary = static_cast<uint64_t>(u.ru_nivcsw);
  }
  return s;
}

ThreadSchedStat ReadSchedStat(const char* path) {
  ThreadSchedStat s;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return s;
  char buf[128];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return s;
  buf[n] = 0;
  unsigned long long run = 0, wait = 0, runs = 0;
  if (std::sscanf(buf, "%llu %llu %llu", &run, &wait, &runs) == 3) {
    s.known = true;
    s.run_ns = run;
    s.wait_ns = wait;
    s.runs = runs;
  }
  return s;
}

ThreadSchedStat ThreadSchedStatNow() {
  const ThreadSchedStat s = ReadSchedStat("/proc/thread-self/schedstat");
  return s.runs > 0 ? s : ThreadSchedStat{};
}

ThreadUsageMeter::ThreadUsageMeter(bool scheduling)
    : scheduling_(scheduling),
      cpu0_(ThreadCpuNs()),
      switches0_(scheduling ? ThreadSwitchesNow() : ThreadSwitches{}),
      sched0_(scheduling ? ThreadSchedStatNow() : ThreadSchedStat{}) {}

ThreadUsage ThreadUsageMeter::Elapsed() const {
  ThreadUsage u;
  u.cpu_ns = ThreadCpuNs() - cpu0_;
  if (!scheduling_) return u;
  const ThreadSwitches switches = ThreadSwitchesNow();
  u.sleeps = switches.voluntary - switches0_.voluntary;
  u.preemptions = switches.involuntary - switches0_.involuntary;
  const ThreadSchedStat sched = ThreadSchedStatNow();
  if (sched0_.known && sched.known) {
    u.run_queue_wait_ns = sched.wait_ns - sched0_.wait_ns;
    u.runs = sched.runs - sched0_.runs;
  }
  return u;
}

void ThreadUsageTotal::Add(const ThreadUsage& u) {
  cpu_ns_ += u.cpu_ns;
  sleeps_ += u.sleeps;
  preemptions_ += u.preemptions;
  run_queue_wait_ns_ += u.run_queue_wait_ns;
  runs_ += u.runs;
}

ThreadUsage ThreadUsageTotal::Get() const {
  return {cpu_ns_.load(), sleeps_.load(), preemptions_.load(), run_queue_wait_ns_.load(),
          runs_.load()};
}

uint64_t ProcessCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

uint64_t ReadCycles() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return NowNs();
#endif
}

const char* CycleSource() {
#if defined(__x86_64__)
  return "tsc";
#else
  return "monotonic-ns";
#endif
}

double TscGhz() {
  static const double ghz = [] {
    uint64_t t0 = NowNs(), c0 = ReadCycles();
    uint64_t t1;
    do {
      t1 = NowNs();
    } while (t1 - t0 < 20000000);
    uint64_t c1 = ReadCycles();
    return static_cast<double>(c1 - c0) / static_cast<double>(t1 - t0);
  }();
  return ghz;
}

std::string UtcTimestamp(const char* format) {
  time_t now = time(nullptr);
  tm utc;
  gmtime_r(&now, &utc);
  char buf[32];
  strftime(buf, sizeof buf, format, &utc);
  return buf;
}

}  // namespace secmode::common
