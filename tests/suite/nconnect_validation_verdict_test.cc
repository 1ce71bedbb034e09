// The validation's three-valued verdict (suite/nconnect_validation_verdict.h)
// on constructed intervals and runs: agrees only when the whole interval
// of the runs' median lies within the limit, disagrees only when none of it
// does, undecided when it straddles the limit.
#include "suite/nconnect_validation_verdict.h"

#include "suite/nconnect_validation.h"

#include <gtest/gtest.h>

#include <vector>

namespace secmode::suite {
namespace {

TEST(ValidationVerdictTest, AnIntervalAgreesWithinDisagreesOutsideAndStraddlingIsUndecided) {
  const Interval limit{1.0, 2.0};
  EXPECT_EQ(Judge({1.2, 1.8}, limit), Verdict::kAgrees);
  EXPECT_EQ(Judge({1.0, 2.0}, limit), Verdict::kAgrees);  // the limit is closed
  EXPECT_EQ(Judge({2.1, 3.0}, limit), Verdict::kDisagrees);
  EXPECT_EQ(Judge({0.1, 0.9}, limit), Verdict::kDisagrees);
  EXPECT_EQ(Judge({0.5, 1.5}, limit), Verdict::kUndecided);
  EXPECT_EQ(Judge({1.5, 2.5}, limit), Verdict::kUndecided);
  EXPECT_EQ(Judge({0.5, 2.5}, limit), Verdict::kUndecided);  // spans the whole limit
  EXPECT_EQ(Judge({0, 0}, {0, 0}), Verdict::kAgrees);        // a model's zero, runs all zero
  EXPECT_EQ(Judge({0, 3}, {0, 0}), Verdict::kUndecided);     // some runs lost calls
  EXPECT_EQ(Judge({2, 3}, {0, 0}), Verdict::kDisagrees);     // every run did
}

TEST(ValidationVerdictTest, APointDisagreesWhenEitherDoesAndAgreesOnlyWhenBothDo) {
  using V = Verdict;
  EXPECT_EQ(Combine(V::kAgrees, V::kAgrees), V::kAgrees);
  EXPECT_EQ(Combine(V::kAgrees, V::kUndecided), V::kUndecided);
  EXPECT_EQ(Combine(V::kUndecided, V::kAgrees), V::kUndecided);
  EXPECT_EQ(Combine(V::kUndecided, V::kDisagrees), V::kDisagrees);
  EXPECT_EQ(Combine(V::kDisagrees, V::kAgrees), V::kDisagrees);
}

sim::ScenarioResult Res(int64_t violations, double ops_per_s) {
  sim::ScenarioResult r;
  r.completed = 1000;
  r.violations = violations;
  r.ops_per_s = ops_per_s;
  return r;
}

TEST(ValidationVerdictTest, WithFewRunsAPointIsJudgedOverEveryRun) {
  const std::vector<sim::ScenarioResult> seeds = {Res(100, 1000), Res(100, 1000)};
  // Violations 100 (limit 66.7..150 at factor 1.5), goodput 1000 (limit
  // 769..1300 at factor 1.3).
  auto judge = [&](const std::vector<sim::ScenarioResult>& runs) {
    return JudgePoint(sim::CompareToRuns(seeds, runs), runs);
  };
  PointVerdict all_in = judge({Res(90, 950), Res(120, 1100), Res(140, 1250)});
  EXPECT_EQ(all_in.verdict, Verdict::kAgrees);
  EXPECT_DOUBLE_EQ(all_in.violations.lo, 90);
  EXPECT_DOUBLE_EQ(all_in.violations.hi, 140);
  EXPECT_DOUBLE_EQ(all_in.goodput_ratio.lo, 0.95);
  EXPECT_DOUBLE_EQ(all_in.goodput_ratio.hi, 1.25);
  // One run of three beyond the goodput limit: the old rule (the median)
  // agreed; the runs straddle it, so the point is undecided.
  PointVerdict one_out = judge({Res(100, 950), Res(100, 1100), Res(100, 1400)});
  EXPECT_TRUE(sim::CompareToRuns(seeds, {Res(100, 950), Res(100, 1100), Res(100, 1400)}).agree());
  EXPECT_EQ(one_out.goodput_verdict, Verdict::kUndecided);
  EXPECT_EQ(one_out.violations_verdict, Verdict::kAgrees);
  EXPECT_EQ(one_out.verdict, Verdict::kUndecided);
  // Every run far above the model's violations: disagrees, whatever the goodput.
  PointVerdict over = judge({Res(400, 1000), Res(500, 1000)});
  EXPECT_EQ(over.violations_verdict, Verdict::kDisagrees);
  EXPECT_EQ(over.verdict, Verdict::kDisagrees);
  // A few events off a small count are within the slack (5 events).
  const std::vector<sim::ScenarioResult> few = {Res(2, 1000)};
  const std::vector<sim::ScenarioResult> runs = {Res(0, 1000), Res(7, 1000)};
  EXPECT_EQ(JudgePoint(sim::CompareToRuns(few, runs), runs).violations_verdict, Verdict::kAgrees);
}

// Nine runs: the median's interval is the second smallest to the second
// largest run (coverage 1 - 2 x 10/512), so one unlucky run moves no
// verdict, two on one side do.
TEST(ValidationVerdictTest, NineRunsAreJudgedByTheIntervalOfTheirMedian) {
  const std::vector<sim::ScenarioResult> seeds = {Res(100, 1000), Res(100, 1000)};
  auto judge = [&](const std::vector<sim::ScenarioResult>& runs) {
    return JudgePoint(sim::CompareToRuns(seeds, runs), runs);
  };
  std::vector<sim::ScenarioResult> runs;
  for (int i = 0; i < 8; ++i) runs.push_back(Res(90 + 5 * i, 900 + 40 * i));
  runs.push_back(Res(100, 1500));  // one run beyond the goodput limit (1300)
  PointVerdict one_out = judge(runs);
  EXPECT_EQ(one_out.order.runs, 9u);
  EXPECT_EQ(one_out.order.k, 2u);
  EXPECT_NEAR(one_out.order.coverage, 1 - 2 * 10.0 / 512, 1e-12);
  EXPECT_DOUBLE_EQ(one_out.goodput_ratio.lo, 0.94);  // the second smallest
  EXPECT_DOUBLE_EQ(one_out.goodput_ratio.hi, 1.18);  // the second largest
  EXPECT_DOUBLE_EQ(one_out.violations.lo, 95);
  EXPECT_DOUBLE_EQ(one_out.violations.hi, 120);
  EXPECT_EQ(one_out.verdict, Verdict::kAgrees);
  EXPECT_EQ(one_out.ToJson()["order"], 2);
  EXPECT_EQ(one_out.ToJson()["runs"], 9);
  runs.front() = Res(100, 1450);  // a second one: the median's interval straddles 1.3
  EXPECT_EQ(judge(runs).goodput_verdict, Verdict::kUndecided);
  // A model's zero: one run of nine with a violation moves nothing, two do.
  const std::vector<sim::ScenarioResult> zero = {Res(0, 1000)};
  std::vector<sim::ScenarioResult> clean(9, Res(0, 1000));
  clean[4] = Res(3, 1000);
  EXPECT_EQ(JudgePoint(sim::CompareToRuns(zero, clean), clean).violations_verdict,
            Verdict::kAgrees);
  clean[6] = Res(1, 1000);
  EXPECT_EQ(JudgePoint(sim::CompareToRuns(zero, clean), clean).violations_verdict,
            Verdict::kUndecided);
}

TEST(ValidationVerdictTest, TheModelsZeroIsHeldExactly) {
  const std::vector<sim::ScenarioResult> zero = {Res(0, 1000), Res(0, 1000)};
  auto violations = [&](const std::vector<sim::ScenarioResult>& runs) {
    return JudgePoint(sim::CompareToRuns(zero, runs), runs).violations_verdict;
  };
  EXPECT_EQ(violations({Res(0, 1000), Res(0, 1000)}), Verdict::kAgrees);
  EXPECT_EQ(violations({Res(0, 1000), Res(1, 1000)}), Verdict::kUndecided);
  EXPECT_EQ(violations({Res(1, 1000), Res(3, 1000)}), Verdict::kDisagrees);
}

TEST(ValidationVerdictTest, NothingToJudgeDisagrees) {
  const std::vector<sim::ScenarioResult> seeds = {Res(0, 1000)};
  EXPECT_EQ(JudgePoint(sim::CompareToRuns(seeds, {}), {}).verdict, Verdict::kDisagrees);
  EXPECT_EQ(JudgePoint(sim::Comparison(), {Res(0, 1000)}).verdict, Verdict::kDisagrees);
}

// A point whose runs shared the machine is undecided whatever its runs
// say; below the limit, or unknown, the verdict stands, and results.json
// says which.
TEST(ValidationVerdictTest, RunsOnASharedMachineAreUndecided) {
  const std::vector<sim::ScenarioResult> seeds = {Res(0, 1000)};
  const std::vector<sim::ScenarioResult> runs = {Res(0, 1000), Res(0, 1000)};
  const PointVerdict agrees = JudgePoint(sim::CompareToRuns(seeds, runs), runs);
  ASSERT_EQ(agrees.verdict, Verdict::kAgrees);
  PointVerdict v = agrees;
  HoldShared(v, kCalmSteal, kCalmSteal);
  EXPECT_EQ(v.verdict, Verdict::kUndecided);
  EXPECT_TRUE(v.shared);
  EXPECT_EQ(v.ToJson()["machine_shared"], true);
  EXPECT_DOUBLE_EQ(v.ToJson()["others_fraction"].get<double>(), kCalmSteal);
  v = agrees;
  HoldShared(v, kCalmSteal / 2, kCalmSteal);
  EXPECT_EQ(v.verdict, Verdict::kAgrees);
  EXPECT_FALSE(v.shared);
  v = agrees;
  HoldShared(v, -1, kCalmSteal);
  EXPECT_EQ(v.verdict, Verdict::kAgrees);
  EXPECT_TRUE(v.ToJson()["others_fraction"].is_null());
  // A disagreement on a shared machine is not one either.
  const std::vector<sim::ScenarioResult> off = {Res(0, 400), Res(0, 400)};
  v = JudgePoint(sim::CompareToRuns(seeds, off), off);
  ASSERT_EQ(v.verdict, Verdict::kDisagrees);
  HoldShared(v, 0.5, kCalmSteal);
  EXPECT_EQ(v.verdict, Verdict::kUndecided);
}

// The calibration's waits are timed once per pass, spread over the rounds;
// the model takes each figure's median, and what derives from them again.
TEST(ValidationCalibrationTest, TheWaitsAreTheMediansOfThePasses) {
  ValidationOptions options;
  options.thread_model = false;  // no model of one call to run
  std::vector<Calibration> passes(3);
  const int64_t reconnect[] = {300, 100, 200}, client[] = {90, 80, 70}, setup[] = {5, 9, 7};
  const int64_t one_call[] = {60000, 40000, 50000};
  for (size_t i = 0; i < passes.size(); ++i) {
    passes[i].reconnect_cpu_ns = reconnect[i];
    passes[i].reconnect_client_cpu_ns = client[i];
    passes[i].gss_setup_ns = setup[i];
    passes[i].one_call_p50_ns = one_call[i];
    passes[i].sys_ns = 1000;
  }
  Calibration c = passes.front();
  ASSERT_TRUE(TakeMedianWaits(passes, options, c).ok());
  EXPECT_EQ(c.wait_passes, 3);
  EXPECT_EQ(c.reconnect_cpu_ns, 200);
  EXPECT_EQ(c.reconnect_client_cpu_ns, 80);
  EXPECT_EQ(c.gss_setup_ns, 7);
  EXPECT_EQ(c.one_call_p50_ns, 50000);
  EXPECT_EQ(c.rtt_ns, 49000);  // the median call less the sys time per call
  EXPECT_EQ(c.sys_ns, 1000);   // not a wait: kept
  // Medians taken apart keep the client's part of a reconnect's CPU within
  // the whole.
  passes[0].reconnect_client_cpu_ns = 250;
  passes[2].reconnect_client_cpu_ns = 240;
  ASSERT_TRUE(TakeMedianWaits(passes, options, c).ok());
  EXPECT_EQ(c.reconnect_client_cpu_ns, c.reconnect_cpu_ns);
}

TEST(ValidationVerdictTest, CountsSayEachVerdictApart) {
  VerdictCounts c;
  for (Verdict v : {Verdict::kAgrees, Verdict::kAgrees, Verdict::kDisagrees, Verdict::kUndecided})
    c.Add(v);
  EXPECT_EQ(c.ToString(), "2 agree, 1 disagrees, 1 undecided");
  EXPECT_EQ(c.ToJson(), (nlohmann::json{{"agrees", 2}, {"disagrees", 1}, {"undecided", 1}}));
}

}  // namespace
}  // namespace secmode::suite
