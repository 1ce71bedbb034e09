// The thread model's scheduler parameters (sim/scenario.h,
// Scenario::thread_model) from the scheduler probes of
// harness/sched_probe.h, measured on this machine: one calibration for every
// user, the nconnect validation (suite/nconnect_validation.h, whose
// Calibration keeps each probe for its report) and `secmode nconnect
// --recommend` (which probes only what its flags do not give).
//
//   probe                                  the model's parameters
//   ProbeSchedulerFor(slice_threads)       slice_ns (SliceNs)
//   ProbeWakeups                           wakeup_preempt_ns (WakeupPreemptNs)
//   ProbeIdleWakes                         idle_wake_ns (IdleWakeNs),
//                                          idle_wake_after_ns, idle_wake_curve_ns
//   ProbeBusyWakes                         busy_wake_ns (BusyWakeNs)
//   ProbeWakeOrder                         woken_first_share
//   ProbeMachinePauses                     pause_per_s (PausePerS), pause_ns (PauseNs)
//
// Thread safety: reentrant, as the probes are (each starts and joins its own
// threads); the probes time the machine, so two at once measure each other.
#ifndef SECMODE_HARNESS_THREAD_MODEL_CALIBRATION_H_
#define SECMODE_HARNESS_THREAD_MODEL_CALIBRATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "harness/sched_probe.h"
#include "sim/scenario.h"

namespace secmode::harness {

// Which probes to run (a parameter given otherwise is not probed).
struct ThreadModelProbes {
  int slice_threads = 0;  // busy threads of the scheduler probe; 0: not run
  bool wakeup = true;
  bool idle_wake = true;
  bool busy_wake = true;
  bool wake_order = true;
  bool pauses = true;
};

// What the probes that ran measured, and the model's parameters from each;
// a probe that did not run leaves its members as they are.
struct ThreadModelCalibration {
  ThreadModelProbes ran;  // the probes run (slice_threads: with how many threads)
  SchedProbe slice;
  int64_t slice_ns = 0;
  WakeupProbe wakeup;
  int64_t wakeup_preempt_ns = 0;
  IdleWakeCurve idle_wake;
  int64_t idle_wake_ns = 0;
  CoreWakeProbe busy_wake;
  std::vector<int64_t> busy_wake_ns;
  WakeOrderProbe wake_order;
  SchedProbe pauses;
  double pause_per_s = 0;
  std::vector<int64_t> pause_ns;

  // Sets the scenario's parameters of the probes that ran; the others stay.
  void ApplyTo(sim::Scenario& s) const;
  // One row per probe that ran: the parameter and what measured it.
  struct Row {
    std::string parameter, how;
  };
  std::vector<Row> Rows() const;
  // Rows() as lines, each "  <parameter>: <what measured it>\n".
  std::string Description() const;
};

// Runs the probes `which` names, in the table's order. Fails at the first
// probe that fails, the error naming it ("wakeup probe: ...").
common::Result<ThreadModelCalibration> CalibrateThreadModel(const ThreadModelProbes& which);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_THREAD_MODEL_CALIBRATION_H_
