#include "harness/thread_model_calibration.h"

#include "common/format.h"

namespace secmode::harness {

common::Result<ThreadModelCalibration> CalibrateThreadModel(const ThreadModelProbes& which) {
  ThreadModelCalibration t;
  t.ran = which;
  if (which.slice_threads > 0) {
    auto probe = ProbeSchedulerFor(which.slice_threads);
    if (!probe.ok()) return probe.status().Annotate("scheduler probe");
    t.slice = *probe;
    t.slice_ns = SliceNs(t.slice);
  }
  if (which.wakeup) {
    auto probe = ProbeWakeups();
    if (!probe.ok()) return probe.status().Annotate("wakeup probe");
    t.wakeup = *probe;
    t.wakeup_preempt_ns = WakeupPreemptNs(t.wakeup);
  }
  if (which.idle_wake) {
    auto probe = ProbeIdleWakes();
    if (!probe.ok()) return probe.status().Annotate("idle wake probe");
    t.idle_wake = *probe;
    t.idle_wake_ns = IdleWakeNs(t.idle_wake);
  }
  if (which.busy_wake) {
    auto probe = ProbeBusyWakes();
    if (!probe.ok()) return probe.status().Annotate("busy wake probe");
    t.busy_wake = *probe;
    t.busy_wake_ns = BusyWakeNs(t.busy_wake);
  }
  if (which.wake_order) {
    auto probe = ProbeWakeOrder();
    if (!probe.ok()) return probe.status().Annotate("wake order probe");
    t.wake_order = *probe;
  }
  if (which.pauses) {
    auto probe = ProbeMachinePauses();
    if (!probe.ok()) return probe.status().Annotate("pause probe");
    t.pauses = *probe;
    t.pause_per_s = PausePerS(t.pauses);
    t.pause_ns = PauseNs(t.pauses);
  }
  return t;
}

void ThreadModelCalibration::ApplyTo(sim::Scenario& s) const {
  if (ran.slice_threads > 0) s.slice_ns = slice_ns;
  if (ran.wakeup) s.wakeup_preempt_ns = wakeup_preempt_ns;
  if (ran.idle_wake) {
    s.idle_wake_ns = idle_wake_ns;
    s.idle_wake_after_ns = idle_wake.idle_ns;
    s.idle_wake_curve_ns = idle_wake.wake_ns;
  }
  if (ran.busy_wake) s.busy_wake_ns = busy_wake_ns;
  if (ran.wake_order) s.woken_first_share = wake_order.woken_first_share;
  if (ran.pauses) {
    s.pause_per_s = pause_per_s;
    s.pause_ns = pause_ns;
  }
}

std::vector<ThreadModelCalibration::Row> ThreadModelCalibration::Rows() const {
  std::vector<Row> rows;
  if (ran.slice_threads > 0) {
    rows.push_back({"time slice", "median run of " + std::to_string(slice.threads) +
                                      " busy threads on " + std::to_string(slice.cores) +
                                      " cores"});
  }
  if (ran.wakeup) {
    rows.push_back({"wakeup preemption",
                    "p10 run of a busy thread while " + std::to_string(wakeup.wakers) +
                        " threads keep waking on " + std::to_string(wakeup.cores) + " cores"});
  }
  if (ran.idle_wake) {
    rows.push_back({"idle-core wakeup", "medians of wakeups of a thread on a core idle for " +
                                            std::to_string(idle_wake.idle_ns.size()) +
                                            " lengths of time"});
  }
  if (ran.busy_wake) {
    rows.push_back({"busy-core wakeup", "quantiles of " + std::to_string(busy_wake.rounds) +
                                            " wakeups of a thread onto a core a busy thread "
                                            "runs on"});
  }
  if (ran.wake_order) {
    rows.push_back(
        {"woken threads ahead of preempted ones", std::to_string(wake_order.woken_first) + " of " +
                                                      std::to_string(wake_order.rounds) +
                                                      " rounds of two wakeups on a busy core"});
  }
  if (ran.pauses) {
    rows.push_back({"core pauses", "gaps over " + std::to_string(kPauseThresholdNs / 1000) +
                                       " us while one busy thread per CPU spins for " +
                                       common::Fmt("%.1f", pauses.seconds) +
                                       " s (the one of three whose paused share was the median)"});
  }
  return rows;
}

std::string ThreadModelCalibration::Description() const {
  std::string out;
  for (const Row& row : Rows())
    out.append("  ").append(row.parameter).append(": ").append(row.how).append("\n");
  return out;
}

}  // namespace secmode::harness
