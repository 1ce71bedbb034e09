// The scheduler probes: bad arguments are refused with the reason; with more
// busy threads than cores every thread is descheduled at times, the
// distributions the nconnect model takes its pauses from are ordered, and
// the idle-core wakeup probe times every round and restores the caller's
// CPU mask.
// Their values depend on the machine and its load: reported by the
// validation, not asserted here.
#include "harness/sched_probe.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "sim/scenario.h"

namespace secmode::harness {
namespace {

TEST(SchedProbeTest, RefusesBadArguments) {
  EXPECT_NE(ProbeScheduler(0, 0.1).status().message().find("threads"), std::string::npos);
  EXPECT_NE(ProbeScheduler(2, 0).status().message().find("seconds"), std::string::npos);
  EXPECT_NE(ProbeWakeupPreemption(0, 0.1).status().message().find("wakers"), std::string::npos);
  EXPECT_FALSE(ProbeWakeupPreemption(2, 0.1, 0).ok());
  EXPECT_NE(ProbeWakeupPreemption(2, 0.1, 2000000).status().message().find("sleep"),
            std::string::npos);
  EXPECT_NE(ProbeCoreWake(0, false).status().message().find("rounds"), std::string::npos);
}

TEST(SchedProbeTest, MoreBusyThreadsThanCoresAreDescheduled) {
  const int cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  auto p = ProbeScheduler(2 * cores, 0.3);
  getrusage(RUSAGE_SELF, &after);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // Only gaps in which a thread was switched out count (an interrupt or the
  // hypervisor pausing the vCPU is no end of a time slice): no more of them
  // than the process's context switches meanwhile.
  EXPECT_TRUE(p->switches_only);
  EXPECT_EQ(p->ToJson().at("switches_only"), true);
  EXPECT_LE(p->gaps, (after.ru_nivcsw + after.ru_nvcsw) - (before.ru_nivcsw + before.ru_nvcsw));
  EXPECT_EQ(p->threads, 2 * cores);
  EXPECT_EQ(p->cores, cores);
  EXPECT_GT(p->gaps, 0);
  EXPECT_GT(p->run_p50_us, 0);
  EXPECT_LE(p->run_p50_us, p->run_p90_us);
  // Only gaps longer than the threshold count as time off the core.
  EXPECT_GE(p->gap_p50_us, kGapThresholdNs / 1e3);
  EXPECT_LE(p->gap_p50_us, p->gap_p90_us);
  EXPECT_LE(p->gap_p90_us, p->gap_p99_us);
  // Twice as many threads as cores: none can run much more than half the time.
  EXPECT_GT(p->running_share, 0);
  EXPECT_LT(p->running_share, 0.75);
  EXPECT_EQ(p->ToJson().at("threads"), 2 * cores);
}

TEST(SchedProbeTest, ThePauseProbeKeptIsTheOneWithTheMedianPausedShare) {
  std::vector<SchedProbe> tries(3);
  tries[0].running_share = 0.84;  // something else ran meanwhile
  tries[1].running_share = 0.94;
  tries[2].running_share = 0.92;
  tries[2].gaps_per_s = 1600;
  const SchedProbe& kept = MedianPausedShare(tries);
  EXPECT_DOUBLE_EQ(kept.running_share, 0.92);
  EXPECT_DOUBLE_EQ(kept.gaps_per_s, 1600);
  std::vector<SchedProbe> two(2);
  two[0].running_share = 0.5;
  two[1].running_share = 0.9;
  EXPECT_DOUBLE_EQ(MedianPausedShare(two).running_share, 0.9);  // the less paused of two
  std::vector<SchedProbe> one(1);
  one[0].running_share = 0.7;
  EXPECT_DOUBLE_EQ(MedianPausedShare(one).running_share, 0.7);
  EXPECT_EQ(one[0].ToJson().at("chosen_of"), 1);  // a single probe says so
}

TEST(SchedProbeTest, PauseProbeGivesOrderedQuantilesAboveItsThreshold) {
  auto p = ProbePauses(0.3);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->threads, p->cores);  // one busy thread per CPU
  EXPECT_FALSE(p->switches_only);   // every gap is a pause
  EXPECT_GE(p->gaps_per_s, 0);
  if (p->gaps == 0) {
    EXPECT_TRUE(p->gap_quantiles_ns.empty());
    return;
  }
  ASSERT_EQ(p->gap_quantiles_ns.size(), sim::kPauseQuantiles);
  EXPECT_GT(p->gap_quantiles_ns.front(), kPauseThresholdNs);
  for (size_t i = 1; i < p->gap_quantiles_ns.size(); ++i) {
    EXPECT_LE(p->gap_quantiles_ns[i - 1], p->gap_quantiles_ns[i]) << i;
  }
  EXPECT_GT(p->gaps_per_s, 0);
  // What the model takes must pass the scenario's own checks.
  sim::Scenario s;
  s.pause_per_s = p->gaps_per_s;
  s.pause_ns = p->gap_quantiles_ns;
  EXPECT_TRUE(s.Validate().ok()) << s.Validate().ToString();
}

TEST(SchedProbeTest, WakeupProbeOrdersItsDistributions) {
  auto p = ProbeWakeupPreemption(4, 0.3);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->wakers, 4);
  EXPECT_GT(p->runs, 0);
  EXPECT_LE(p->run_p10_us, p->run_p50_us);
  EXPECT_LE(p->run_p50_us, p->run_p90_us);
  // Wakers on busy cores take them: the busy threads are off them at times.
  EXPECT_GE(p->gap_p50_us, kGapThresholdNs / 1e3);
  EXPECT_LE(p->gap_p50_us, p->gap_p99_us);
  EXPECT_LE(p->late_p50_us, p->late_p99_us);
  EXPECT_TRUE(p->ToJson().contains("gap_p99_us"));
}

TEST(SchedProbeTest, IdleWakeProbeTimesEveryRoundOnTwoCpus) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  cpu_set_t before = allowed;
  auto p = ProbeCoreWake(100, false);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  if (CPU_COUNT(&allowed) < 2) {
    EXPECT_EQ(p->rounds, 0);  // no idle core to wake
    return;
  }
  EXPECT_EQ(p->rounds, 100);
  // A wakeup across cores takes some time, and the percentiles are ordered.
  EXPECT_GT(p->p10_us, 0);
  EXPECT_LE(p->p10_us, p->p50_us);
  EXPECT_LE(p->p50_us, p->p90_us);
  EXPECT_LE(p->p90_us, p->p99_us);
  // The waker kept its core busy 50..550 us: the woken thread waited at
  // least the shortest of those.
  EXPECT_GE(p->blocked_p50_us, 50);
  EXPECT_TRUE(p->ToJson().contains("p99_us"));
  // The calling thread gets its CPU mask back.
  cpu_set_t after;
  CPU_ZERO(&after);
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(SchedProbeTest, IdleWakeCurveRisesInIdleTimeAndEndsAtTheLongest) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  auto c = ProbeIdleWakeCurve(20);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  if (CPU_COUNT(&allowed) < 2) {
    EXPECT_TRUE(c->idle_ns.empty());
    EXPECT_EQ(IdleWakeNs(*c), 0);
    return;
  }
  ASSERT_EQ(c->points.size(), std::size(kIdleWakeAfterUs));
  ASSERT_FALSE(c->idle_ns.empty());
  ASSERT_EQ(c->idle_ns.size(), c->wake_ns.size());
  for (size_t i = 1; i < c->idle_ns.size(); ++i) EXPECT_GT(c->idle_ns[i], c->idle_ns[i - 1]);
  // Each point's waiter waited at least as long as its waker was busy.
  for (size_t i = 0; i < c->points.size(); ++i) {
    EXPECT_GE(c->points[i].blocked_p50_us, kIdleWakeAfterUs[i]) << i;
    EXPECT_GT(c->points[i].p50_us, 0) << i;
  }
  EXPECT_EQ(IdleWakeNs(*c), c->wake_ns.back());
  // The model takes it as it is.
  sim::Scenario s;
  s.thread_model = true;
  s.cores = 2;
  s.per_core_queues = true;
  s.idle_wake_after_ns = c->idle_ns;
  s.idle_wake_curve_ns = c->wake_ns;
  EXPECT_TRUE(s.Validate().ok()) << s.Validate().ToString();
  EXPECT_NE(ProbeCoreWake(10, false, 5, 1).status().message().find("busy time"), std::string::npos);
}

TEST(SchedProbeTest, WakeOrderProbeCountsItsRoundsAndEnds) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof before, &before), 0);
  auto p = ProbeWakeOrder(50);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  if (CPU_COUNT(&allowed) < 2) {
    EXPECT_EQ(p->rounds, 0);
    return;
  }
  // Most rounds are one order or the other; the share is of those.
  EXPECT_GT(p->rounds, 25);
  EXPECT_LE(p->rounds, 50);
  EXPECT_LE(p->woken_first, p->rounds);
  EXPECT_DOUBLE_EQ(p->woken_first_share,
                   static_cast<double>(p->woken_first) / static_cast<double>(p->rounds));
  EXPECT_TRUE(p->ToJson().contains("woken_first_share"));
  cpu_set_t after;
  CPU_ZERO(&after);
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  EXPECT_NE(ProbeWakeOrder(0).status().message().find("rounds"), std::string::npos);
}

TEST(SchedProbeTest, BusyWakeProbeWakesOntoABusyCoreAndKeepsItsQuantiles) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  auto p = ProbeCoreWake(100, true);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->busy);
  if (CPU_COUNT(&allowed) < 2) {
    EXPECT_EQ(p->rounds, 0);
    EXPECT_TRUE(BusyWakeNs(*p).empty());
    return;
  }
  EXPECT_EQ(p->rounds, 100);
  const std::vector<int64_t> q = BusyWakeNs(*p);
  ASSERT_EQ(q.size(), sim::kPauseQuantiles);
  EXPECT_GT(q.front(), 0);
  EXPECT_TRUE(std::is_sorted(q.begin(), q.end()));
  EXPECT_NEAR(static_cast<double>(q[sim::kPauseMedian]), p->p50_us * 1e3, 1.0);
  EXPECT_TRUE(p->ToJson().value("busy", false));
  // It ends: the spinner on the reader's CPU stops with the probe.
  auto again = ProbeCoreWake(1, true);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->rounds, 1);
}

TEST(SchedProbeTest, CoresAwakeHoldsACpuLatencyLimitOfZeroWhileItLives) {
  if (geteuid() != 0) GTEST_SKIP() << "/dev/cpu_dma_latency needs root";
  auto before = CpuLatencyLimitUs();
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_GT(*before, 0) << "another process holds the CPUs awake";
  {
    auto awake = CoresAwake::Start();
    ASSERT_TRUE(awake.ok()) << awake.status().ToString();
    auto during = CpuLatencyLimitUs();
    ASSERT_TRUE(during.ok());
    EXPECT_EQ(*during, 0);
  }
  auto after = CpuLatencyLimitUs();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, *before);
}

TEST(SchedProbeTest, TheModelsPausesComeFromTheProbesByOneRule) {
  SchedProbe busy;
  busy.run_p50_us = 3000;
  EXPECT_EQ(SliceNs(busy), 3000000);
  busy.run_p50_us = 0.2;  // never below the 1 us a scenario accepts
  EXPECT_EQ(SliceNs(busy), 1000);
  WakeupProbe wake;
  wake.run_p10_us = 6.5;
  EXPECT_EQ(WakeupPreemptNs(wake), 6500);
}

TEST(SchedProbeTest, ARunsStealPausesTheModelForThatShare) {
  SchedProbe p;
  p.running_share = 0.96;  // 4% paused, of it 1% the hypervisor's
  p.steal_fraction = 0.01;
  p.gaps_per_s = 500;
  p.gap_quantiles_ns = {5000, 10000, 20000};
  EXPECT_DOUBLE_EQ(PausePerS(p), 500);
  // A run in which the hypervisor took 13%: 3% + 13% paused, four times 4%.
  EXPECT_NEAR(PausePerSWithSteal(p, 0.13), 2000, 1e-9);
  // No steal in the run: only the probe's pauses that were not the hypervisor's.
  EXPECT_NEAR(PausePerSWithSteal(p, 0), 375, 1e-9);
  // A probe whose steal is unknown counts all of its pauses as not the hypervisor's.
  p.steal_fraction = -1;
  EXPECT_NEAR(PausePerSWithSteal(p, 0.04), 1000, 1e-9);
  // Unknown steal in the run, or no pause seen to take the lengths from: the probe's rate.
  EXPECT_DOUBLE_EQ(PausePerSWithSteal(p, -1), 500);
  p.gap_quantiles_ns.clear();
  EXPECT_DOUBLE_EQ(PausePerSWithSteal(p, 0.2), 0);
}

}  // namespace
}  // namespace secmode::harness
