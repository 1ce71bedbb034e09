// Clocks for measurement: a monotonic nanosecond clock and the x86 TSC.
//
// Cycle figures in reports are TSC ticks (constant rate, not core cycles
// under turbo); TscGhz() says the rate so a reader can convert.
#ifndef SECMODE_COMMON_CLOCK_H_
#define SECMODE_COMMON_CLOCK_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace secmode::common {

// CLOCK_MONOTONIC in nanoseconds.
uint64_t NowNs();
// NowNs() time `ns` as a std::chrono::steady_clock time point (both are
// CLOCK_MONOTONIC in libstdc++), for wait_until / sleep_until.
std::chrono::steady_clock::time_point SteadyAt(uint64_t ns);
// CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID):
// what a bound or engine comparison costs in CPU, which other processes on
// a shared machine do not inflate the way they inflate wall time.
uint64_t ThreadCpuNs();
// Context switches of the calling thread so far (getrusage RUSAGE_THREAD):
// `voluntary` counts the times it blocked (waited on a socket, a lock or a
// condition), `involuntary` the times the scheduler took its core while it
// could run. Read at a thread's start and end, they say how often it slept.
struct ThreadSwitches {
  uint64_t voluntary = 0, involuntary = 0;
};
ThreadSwitches ThreadSwitchesNow();
// The scheduler's account of a thread (/proc/.../schedstat,
// CONFIG_SCHED_INFO): time on a CPU, time runnable but waiting for one
// (on a run queue), and how many times it was given a CPU. All zero where
// the file cannot be read (`known` false).
struct ThreadSchedStat {
  bool known = false;
  uint64_t run_ns = 0, wait_ns = 0, runs = 0;
};
// The file at `path` (e.g. /proc/<pid>/task/<tid>/schedstat).
ThreadSchedStat ReadSchedStat(const char* path);
// The calling thread's; also not `known` when it was never given a CPU by
// this count (it runs now): a kernel with schedstat switched off at boot
// writes "0 0 0". (run_ns may read 0 on a new thread: the time of the
// slice it runs in is added when the slice ends or a tick comes.)
ThreadSchedStat ThreadSchedStatNow();

// What a thread used from a ThreadUsageMeter's start until Elapsed(): its
// CPU time, its sleeps (voluntary context switches) and preemptions
// (involuntary ones), and from schedstat the time it waited runnable for a
// CPU and how many times it was given one (both 0 where schedstat is
// unknown).
struct ThreadUsage {
  uint64_t cpu_ns = 0, sleeps = 0, preemptions = 0, run_queue_wait_ns = 0, runs = 0;
};
// Made and read on the thread it measures. Without `scheduling` it counts
// CPU time only (no getrusage, no file opened: sleeps and the rest stay 0).
class ThreadUsageMeter {
 public:
  explicit ThreadUsageMeter(bool scheduling = true);
  ThreadUsage Elapsed() const;

 private:
  bool scheduling_;
  uint64_t cpu0_;
  ThreadSwitches switches0_;
  ThreadSchedStat sched0_;
};
// The usage of many threads summed; Add and Get from any thread.
class ThreadUsageTotal {
 public:
  void Add(const ThreadUsage& u);
  ThreadUsage Get() const;

 private:
  std::atomic<uint64_t> cpu_ns_{0}, sleeps_{0}, preemptions_{0}, run_queue_wait_ns_{0}, runs_{0};
};
// CPU time of the whole process, all its threads (CLOCK_PROCESS_CPUTIME_ID).
uint64_t ProcessCpuNs();
// TSC ticks, or NowNs() where there is no invariant TSC.
uint64_t ReadCycles();
// Ticks of ReadCycles() per nanosecond, calibrated once (about 20 ms) and
// cached; thread-safe.
double TscGhz();
// "tsc" or "monotonic-ns": what ReadCycles counts.
const char* CycleSource();
// The current UTC time in strftime `format`; by default ISO-8601 with
// seconds, "2026-11-29T18:40:00Z".
std::string UtcTimestamp(const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace secmode::common

#endif  // SECMODE_COMMON_CLOCK_H_
