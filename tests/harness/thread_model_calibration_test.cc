// The thread model's calibration from the scheduler probes: only the probes
// asked for run, and a scenario takes the parameters of those and keeps
// its own for the others. The probes' values depend on the machine: only
// that a probe ran and what the model took from it are checked.
#include "harness/thread_model_calibration.h"

#include <gtest/gtest.h>

#include "sim/scenario.h"

namespace secmode::harness {
namespace {

ThreadModelProbes None() { return {0, false, false, false, false, false}; }

TEST(ThreadModelCalibrationTest, NoProbeAskedForRunsNoneAndChangesNothing) {
  auto t = CalibrateThreadModel(None());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->Description(), "");
  sim::Scenario s;
  s.slice_ns = 123;
  s.wakeup_preempt_ns = 456;
  s.pause_per_s = 7;
  s.woken_first_share = 0.25;
  sim::Scenario applied = s;
  t->ApplyTo(applied);
  EXPECT_EQ(applied.ToJson(), s.ToJson());
}

TEST(ThreadModelCalibrationTest, AScenarioTakesOnlyTheProbesThatRan) {
  ThreadModelCalibration t;
  t.ran = None();
  t.ran.wakeup = true;
  t.ran.pauses = true;
  t.wakeup_preempt_ns = 777;
  t.pause_per_s = 300;
  t.pause_ns = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  t.slice_ns = 999;                    // not run: not taken
  t.busy_wake_ns = {1, 2};             // not run: not taken
  t.wake_order.woken_first_share = 1;  // not run: not taken
  sim::Scenario s;
  s.slice_ns = 5;
  s.woken_first_share = 0.5;
  t.ApplyTo(s);
  EXPECT_EQ(s.wakeup_preempt_ns, 777);
  EXPECT_EQ(s.pause_per_s, 300);
  EXPECT_EQ(s.pause_ns, t.pause_ns);
  EXPECT_EQ(s.slice_ns, 5);
  EXPECT_TRUE(s.busy_wake_ns.empty());
  EXPECT_EQ(s.woken_first_share, 0.5);
  const std::string d = t.Description();
  EXPECT_NE(d.find("wakeup preemption"), std::string::npos) << d;
  EXPECT_NE(d.find("core pauses"), std::string::npos) << d;
  EXPECT_EQ(d.find("time slice"), std::string::npos) << d;
}

TEST(ThreadModelCalibrationTest, RunsTheProbesAskedForAndDerivesTheirParameters) {
  ThreadModelProbes which = None();
  which.slice_threads = 2;
  which.wake_order = true;
  auto t = CalibrateThreadModel(which);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->slice.threads, 2);
  EXPECT_EQ(t->slice_ns, SliceNs(t->slice));
  EXPECT_GE(t->wake_order.rounds, 0);
  EXPECT_EQ(t->wakeup.runs, 0) << "the wakeup probe was not asked for";
  EXPECT_TRUE(t->pause_ns.empty()) << "the pause probe was not asked for";
  sim::Scenario s;
  t->ApplyTo(s);
  EXPECT_EQ(s.slice_ns, t->slice_ns);
  EXPECT_EQ(s.woken_first_share, t->wake_order.woken_first_share);
  EXPECT_EQ(t->Description().find("time slice: median run of 2 busy threads"), 2u)
      << t->Description();
}

}  // namespace
}  // namespace secmode::harness
