// The scheduler probe: how long a thread runs before it is descheduled, and
// how long it then waits, when a given number of busy threads share this
// machine's cores. The nconnect model's thread mechanism (sim/scenario.h,
// Scenario::thread_model) takes its time slice from here, measured on the
// machine that runs the validation, not fitted to it.
//
// Each probe thread spins reading the monotonic clock; a gap between two
// reads longer than `gap_threshold_ns` is time the thread was not running.
// For the time slice only the gaps in which the kernel switched the thread
// out count (its context switch count, getrusage(RUSAGE_THREAD), moved):
// an interrupt or the hypervisor holding the vCPU stops a thread without a
// switch, and on a VM those pauses can come often and in bursts, so
// counting them would make the median run between gaps swing from one
// probe to the next. Those pauses are the pause probe's (every gap counts
// there) and a mechanism of the model of their own. Run lengths are the
// times between two counted gaps.
// Thread safety: reentrant; it starts and joins its own threads.
#ifndef SECMODE_HARNESS_SCHED_PROBE_H_
#define SECMODE_HARNESS_SCHED_PROBE_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"

namespace secmode::harness {

struct SchedProbe {
  int threads = 0;
  int cores = 0;                          // logical CPUs online
  double seconds = 0;                     // wall time of the probe
  int64_t gaps = 0;                       // descheduled periods seen, all threads
  double run_p50_us = 0, run_p90_us = 0;  // run between two counted gaps
  double gap_p50_us = 0, gap_p90_us = 0, gap_p99_us = 0;
  double running_share = 0;      // of wall time a thread ran, mean over threads
  // Of the machine's CPU time over the probe, the hypervisor's (steal in
  // /proc/stat); -1 when the kernel does not say.
  double steal_fraction = -1;
  int64_t gap_threshold_ns = 0;  // shorter gaps between two clock reads do not count
  bool switches_only = true;     // only gaps with a context switch count
  // Gaps per second a thread spun, and their lengths at sim::kPauseProbs.
  double gaps_per_s = 0;
  std::vector<int64_t> gap_quantiles_ns;
  // How many probes this one was chosen from (ProbeMachinePauses: the one
  // with the median paused share); 1: a single probe.
  int chosen_of = 1;
  nlohmann::json ToJson() const;
};

// A gap between two clock reads longer than this is time off the core.
inline constexpr int64_t kGapThresholdNs = 20000;

// `threads` busy threads for `seconds`; `switches_only`: count only the gaps
// in which a thread was switched out (the time slice), else every gap (the
// pauses). Fails on a thread that cannot start or a bad argument.
common::Result<SchedProbe> ProbeScheduler(int threads, double seconds,
                                          int64_t gap_threshold_ns = kGapThresholdNs,
                                          bool switches_only = true);

// Wakeup preemption: how soon a thread that wakes takes a core from one that
// is running. One busy thread per core runs while `wakers` threads sleep
// about `sleep_us` (each sleep drawn from half to one and a half times it,
// so the wakers do not wake in step), wake, work `burst_us` and sleep
// again, so wakeups keep
// arriving while every core is busy. The busy threads' runs between two
// deschedulings then end at wakeups; their lower tail (p10) bounds how long
// a thread runs before a wakeup can take its core (the thread model's
// Scenario::wakeup_preempt_ns). Waker lateness: how long after its sleep
// ended a waker ran.
struct WakeupProbe {
  int cores = 0, wakers = 0;
  double seconds = 0;
  int64_t runs = 0;
  double run_p10_us = 0, run_p50_us = 0, run_p90_us = 0;
  // How long a busy thread then stays off its core (descheduled).
  double gap_p50_us = 0, gap_p90_us = 0, gap_p99_us = 0;
  double late_p50_us = 0, late_p99_us = 0;
  nlohmann::json ToJson() const;
};
common::Result<WakeupProbe> ProbeWakeupPreemption(int wakers, double seconds, int sleep_us = 100,
                                                  int burst_us = 30);

// Waking a core: how long after a thread makes another runnable the other
// starts. One thread sleeps in read() on an eventfd, pinned to one CPU;
// another, pinned to a second CPU, keeps its core busy for a random
// `waker_busy_min_us`..`waker_busy_max_us` (so the first one has waited
// about that long), notes the time and writes; the reader takes the time when
// read() returns, and answers on a second eventfd. `busy` false: nothing
// else runs on the reader's CPU, so the wakeup goes to a core that sits idle
// (on a VM the wakeup of a halted vCPU, on bare metal the exit from a
// C-state). `busy` true: a third thread, pinned to the reader's CPU, spins
// there for the whole probe, so the reader is woken onto a core that runs
// a thread that has run long: the time until the scheduler lets it take
// that core (the IPI, the wakeup preemption's decision, the switch), what a
// receiver or server thread of the load waits when it is woken while every
// core is busy. With fewer than two CPUs to pin to there is no second core
// to wake: rounds = 0.
struct CoreWakeProbe {
  bool busy = false;
  int rounds = 0;
  double p10_us = 0, p50_us = 0, p90_us = 0, p99_us = 0;
  // How long the woken thread had waited in read() when it was woken
  // (median): without `busy`, how long its core had been idle.
  double blocked_p50_us = 0;
  // The wakeups' quantiles at sim::kPauseProbs (empty when rounds = 0).
  std::vector<int64_t> quantiles_ns;
  nlohmann::json ToJson() const;
};
common::Result<CoreWakeProbe> ProbeCoreWake(int rounds, bool busy, int waker_busy_min_us = 50,
                                            int waker_busy_max_us = 550);

// An idle core's wakeup by how long it has been idle: a core that has idled
// briefly still polls (a guest's haltpoll, a shallow C-state) and wakes
// sooner than one that has halted. The idle-core probe above with the
// waker busy for exactly each of kIdleWakeAfterUs, `rounds` wakeups each:
// per point the median idle time (blocked_p50_us) and the median wakeup,
// the model's Scenario::idle_wake_after_ns and idle_wake_curve_ns (points
// whose idle time does not rise above the one before are left out of
// those). Empty with fewer than two CPUs.
inline constexpr int kIdleWakeAfterUs[] = {2, 10, 30, 60, 100, 200, 500};
struct IdleWakeCurve {
  std::vector<CoreWakeProbe> points;
  std::vector<int64_t> idle_ns, wake_ns;
  nlohmann::json ToJson() const;
};
common::Result<IdleWakeCurve> ProbeIdleWakeCurve(int rounds);

// Who waits first: a busy thread spins on one CPU; a thread that sleeps
// there is woken (from a second CPU) and preempts it, and while that one
// works its 30 us a second sleeper on the same CPU is woken too. Per round:
// does the busy thread stay off its core until both have run (the
// scheduler puts the woken thread ahead of the one it preempted, as a
// scheduler that credits sleepers does), or does it run between them (in
// order of arrival)? `woken_first_share`: the first's share of the rounds
// that were one or the other, the model's Scenario::woken_first_share.
// With fewer than two CPUs: rounds = 0.
struct WakeOrderProbe {
  int rounds = 0;       // rounds that were one or the other
  int woken_first = 0;  // of them: the busy thread off across both
  double woken_first_share = 0;
  nlohmann::json ToJson() const;
};
common::Result<WakeOrderProbe> ProbeWakeOrder(int rounds = 200);

// Pauses of a busy core that no thread of the model causes (the thread
// model's Scenario::pause_per_s and pause_ns): one busy thread per CPU for
// `seconds`, so that no two probe threads share a core; every gap longer
// than kPauseThresholdNs is then an interrupt, the timer tick, the
// hypervisor taking the vCPU or another process.
inline constexpr int64_t kPauseThresholdNs = 5000;
common::Result<SchedProbe> ProbePauses(double seconds = 2.0);
// The standard pause probe for the model: ProbePauses for 1 s, three times,
// the one whose paused share (1 - running_share) is the median. Something
// else running for a moment (one probe pausing far more than the probes
// before and after it) would otherwise slow the model of every point that
// takes its pauses from that probe.
common::Result<SchedProbe> ProbeMachinePauses();
// Of `tries` (not empty), the one whose paused share is the median (the
// lower middle one of an even count).
const SchedProbe& MedianPausedShare(std::vector<SchedProbe>& tries);

// The thread model's pauses from the probes, one rule for every user (the
// validation, `secmode nconnect --recommend`): the time slice is the median
// run of busy threads between deschedulings (at least 1 us), the wakeup
// preemption the p10 run of a busy thread among waking ones. The standard
// probes: `threads` busy threads for 0.3 s; 4 x the CPUs waking threads
// for 0.4 s, three times, the one whose p10 run is the median (one such
// probe can catch the wakers' timers in step, and then its p10 run is the
// timers' period, not the scheduler's).
int64_t SliceNs(const SchedProbe& probe);
int64_t WakeupPreemptNs(const WakeupProbe& probe);
// Scenario::pause_per_s and pause_ns: the pause probe's gaps per second and
// their quantiles (none when it saw no gap).
double PausePerS(const SchedProbe& pauses);
// Scenario::pause_per_s for a run in which the hypervisor took `steal` of
// the CPU time (a real run's StealFraction): the probe's pauses that were not
// the hypervisor's, plus as many more of the same lengths as make up
// `steal`, so the model's cores are paused for the share they were in that
// run. The probe's own steal is taken off its paused share (none when it
// is unknown). PausePerS when `steal` is unknown (< 0) or the probe saw no
// pause to take the lengths from.
double PausePerSWithSteal(const SchedProbe& pauses, double steal);
std::vector<int64_t> PauseNs(const SchedProbe& pauses);
// Scenario::idle_wake_ns: the curve's wakeup after the longest idle (for
// the model without per-core queues, which does not know a core's idle
// time). The standard curve: 200 rounds per point.
int64_t IdleWakeNs(const IdleWakeCurve& curve);
common::Result<IdleWakeCurve> ProbeIdleWakes();
// Scenario::busy_wake_ns: the busy-core wakeup probe's quantiles (500
// rounds); empty when it could not run.
std::vector<int64_t> BusyWakeNs(const CoreWakeProbe& probe);
common::Result<CoreWakeProbe> ProbeBusyWakes();

// Keeps every CPU out of its sleeping idle states while it lives: a PM QoS
// CPU latency request of 0 us (/dev/cpu_dma_latency held open with 0, as
// cyclictest does), so an idle CPU polls instead of halting and a thread
// woken onto it starts without the wakeup of a halted vCPU or a C-state exit
// that CoreWakeProbe measures. What runs meanwhile is timed as on a machine
// whose cores are awake and free. The thread model adds that wakeup itself
// where its cores are idle (Scenario::idle_wake_ns), so the waits it is given
// (the loopback's round trip, a reconnect, a context creation) are measured
// under a CoresAwake. It costs no CPU time of this process and does not
// compete with other processes (the KDC) for the cores. Needs write access
// to /dev/cpu_dma_latency (root).
// Thread safety: create and destroy on one thread.
class CoresAwake {
 public:
  // Fails, naming the device and errno, when the request cannot be made.
  static common::Result<std::unique_ptr<CoresAwake>> Start();
  ~CoresAwake();
  CoresAwake(const CoresAwake&) = delete;
  CoresAwake& operator=(const CoresAwake&) = delete;

 private:
  explicit CoresAwake(int fd) : fd_(fd) {}
  int fd_ = -1;
};
// The system's current CPU latency limit in us (reading
// /dev/cpu_dma_latency): 0 while a CoresAwake lives.
common::Result<int32_t> CpuLatencyLimitUs();

common::Result<SchedProbe> ProbeSchedulerFor(int threads);
common::Result<WakeupProbe> ProbeWakeups();

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_SCHED_PROBE_H_
