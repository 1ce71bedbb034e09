#include "sim/compare.h"

#include <gtest/gtest.h>

namespace secmode::sim {
namespace {

ScenarioResult R(int64_t completed, int64_t violations, double ops_per_s) {
  ScenarioResult r;
  r.completed = completed;
  r.violations = violations;
  r.ops_per_s = ops_per_s;
  return r;
}

TEST(CompareTest, ZeroMustMatchTheMedianRun) {
  EXPECT_TRUE(CompareToRuns(R(1000, 0, 5000), {R(1000, 0, 5000)}).agree());
  Comparison c = CompareToRuns(R(1000, 0, 5000), {R(1000, 1, 5000)});
  EXPECT_FALSE(c.violations_agree);  // the only run is the median
  EXPECT_NE(c.detail.find("model says zero"), std::string::npos);
  // One run of nine with a call lost (a thread held while the other slots
  // cycled) does not refute the model's zero; most runs do.
  std::vector<ScenarioResult> runs(8, R(1000, 0, 5000));
  runs.push_back(R(1000, 1, 5000));
  c = CompareToRuns(R(1000, 0, 5000), runs);
  EXPECT_TRUE(c.violations_agree) << c.detail;
  EXPECT_NE(c.detail.find("measured 0.0..1.0 in 9 run(s)"), std::string::npos) << c.detail;
  for (int i = 0; i < 3; ++i) runs[i].violations = 2;
  EXPECT_TRUE(CompareToRuns(R(1000, 0, 5000), runs).violations_agree);  // 4 of 9: median 0
  runs[3].violations = 1;
  EXPECT_FALSE(CompareToRuns(R(1000, 0, 5000), runs).violations_agree);  // 5 of 9
  // One run of many lost calls refutes it too: beyond the slack of 5.
  std::vector<ScenarioResult> one_many(8, R(1000, 0, 5000));
  one_many.push_back(R(1000, 5, 5000));
  EXPECT_TRUE(CompareToRuns(R(1000, 0, 5000), one_many).violations_agree);
  one_many.back().violations = 6;
  EXPECT_FALSE(CompareToRuns(R(1000, 0, 5000), one_many).violations_agree);
}

TEST(CompareTest, SmallCountsWithinFiveEvents) {
  EXPECT_TRUE(CompareToRuns(R(1000, 3, 100), {R(1000, 0, 100)}).violations_agree);
  EXPECT_TRUE(CompareToRuns(R(1000, 1, 100), {R(1000, 6, 100)}).violations_agree);
  EXPECT_FALSE(CompareToRuns(R(1000, 1, 100), {R(1000, 7, 100)}).violations_agree);
}

TEST(CompareTest, LargeCountsWithinTheWidenedRange) {
  // One run: 1.5x either way.
  EXPECT_TRUE(CompareToRuns(R(1000, 100, 100), {R(1000, 150, 100)}).violations_agree);
  EXPECT_TRUE(CompareToRuns(R(1000, 150, 100), {R(1000, 100, 100)}).violations_agree);
  EXPECT_FALSE(CompareToRuns(R(1000, 100, 100), {R(1000, 160, 100)}).violations_agree);
  EXPECT_FALSE(CompareToRuns(R(1000, 160, 100), {R(1000, 100, 100)}).violations_agree);
  // Three runs spread 100..200: the model may say 67..300.
  const std::vector<ScenarioResult> runs = {R(1000, 100, 100), R(1000, 200, 100),
                                            R(1000, 150, 100)};
  EXPECT_TRUE(CompareToRuns(R(1000, 290, 100), runs).violations_agree);
  EXPECT_TRUE(CompareToRuns(R(1000, 70, 100), runs).violations_agree);
  EXPECT_FALSE(CompareToRuns(R(1000, 310, 100), runs).violations_agree);
  EXPECT_FALSE(CompareToRuns(R(1000, 60, 100), runs).violations_agree);
  Comparison c = CompareToRuns(R(1000, 150, 100), runs);
  EXPECT_DOUBLE_EQ(c.measured_violations_min, 100);
  EXPECT_DOUBLE_EQ(c.measured_violations_max, 200);
  EXPECT_DOUBLE_EQ(c.measured_violations_scaled, 150);
}

TEST(CompareTest, ModelZeroAgainstThreeRuns) {
  std::vector<ScenarioResult> runs = {R(1000, 0, 100), R(1000, 1, 100), R(1000, 0, 100)};
  EXPECT_TRUE(CompareToRuns(R(1000, 0, 100), runs).violations_agree);
  runs[2].violations = 3;
  EXPECT_FALSE(CompareToRuns(R(1000, 0, 100), runs).violations_agree);
  EXPECT_TRUE(CompareToRuns(R(1000, 0, 100), {R(1000, 0, 100), R(1000, 0, 90)}).violations_agree);
}

TEST(CompareTest, MeasuredViolationsScaledToSimulatedOps) {
  // 300 violations in 3000 measured ops = 100 per the simulated 1000 ops.
  Comparison c = CompareToRuns(R(1000, 100, 100), {R(3000, 300, 100)});
  EXPECT_DOUBLE_EQ(c.measured_violations_scaled, 100.0);
  EXPECT_TRUE(c.violations_agree);
}

TEST(CompareTest, GoodputWithinStatedFactor) {
  EXPECT_TRUE(CompareToRuns(R(1000, 0, 1000), {R(1000, 0, 1299)}).goodput_agree);
  EXPECT_TRUE(CompareToRuns(R(1000, 0, 1000), {R(1000, 0, 770)}).goodput_agree);
  EXPECT_FALSE(CompareToRuns(R(1000, 0, 1000), {R(1000, 0, 1310)}).goodput_agree);
  EXPECT_FALSE(CompareToRuns(R(1000, 0, 1000), {R(1000, 0, 760)}).goodput_agree);
  // Against several runs: their median.
  EXPECT_TRUE(CompareToRuns(R(1000, 0, 1000), {R(1000, 0, 500), R(1000, 0, 1100), R(1000, 0, 5000)})
                  .goodput_agree);
  Tolerance tight;
  tight.goodput_factor = 1.2;
  EXPECT_FALSE(CompareToRuns(R(1000, 0, 1000), {R(1000, 0, 1250)}, tight).goodput_agree);
  EXPECT_DOUBLE_EQ(CompareToRuns(R(1000, 0, 1000), {R(1000, 0, 1250)}).goodput_ratio, 1.25);
}

TEST(CompareTest, SeveralSeedsCompareByTheirMean) {
  const std::vector<ScenarioResult> runs = {R(1000, 40, 100), R(1000, 60, 100)};
  // One seed at 20 is outside 40..60 widened (26.7..90); the mean of 20 and
  // 80 is inside.
  EXPECT_FALSE(CompareToRuns(R(1000, 20, 100), runs).violations_agree);
  Comparison c =
      CompareToRuns(std::vector<ScenarioResult>{R(1000, 20, 100), R(1000, 80, 300)}, runs);
  EXPECT_TRUE(c.violations_agree) << c.detail;
  EXPECT_EQ(c.seeds, 2);
  EXPECT_DOUBLE_EQ(c.simulated_violations, 50);
  EXPECT_DOUBLE_EQ(c.simulated_violations_min, 20);
  EXPECT_DOUBLE_EQ(c.simulated_violations_max, 80);
  // Goodput: the seeds' mean (200) against the runs' median (100).
  EXPECT_DOUBLE_EQ(c.simulated_ops_per_s, 200);
  EXPECT_DOUBLE_EQ(c.goodput_ratio, 0.5);
  EXPECT_FALSE(c.goodput_agree);
  EXPECT_NE(c.detail.find("mean of 2 seeds, 20..80"), std::string::npos) << c.detail;
  // Each seed's count is scaled to the first seed's operations.
  c = CompareToRuns(std::vector<ScenarioResult>{R(1000, 10, 100), R(2000, 40, 100)}, runs);
  EXPECT_DOUBLE_EQ(c.simulated_violations, 15);
}

TEST(CompareTest, SeedsSayZeroOnlyWhenEverySeedDoes) {
  const std::vector<ScenarioResult> one_event = {R(1000, 0, 100), R(1000, 1, 100)};
  // Every seed at zero: the model's zero, refuted: the median of two runs is not zero.
  Comparison c =
      CompareToRuns(std::vector<ScenarioResult>{R(1000, 0, 100), R(1000, 0, 100)}, one_event);
  EXPECT_FALSE(c.violations_agree);
  EXPECT_NE(c.detail.find("model says zero"), std::string::npos);
  // One seed of five with an event: a rare count, not a zero; within 5 events.
  std::vector<ScenarioResult> seeds(4, R(1000, 0, 100));
  seeds.push_back(R(1000, 2, 100));
  c = CompareToRuns(seeds, one_event);
  EXPECT_DOUBLE_EQ(c.simulated_violations, 0.4);
  EXPECT_TRUE(c.violations_agree) << c.detail;
  // And a rare count is still refuted by many.
  EXPECT_FALSE(CompareToRuns(seeds, {R(1000, 30, 100)}).violations_agree);
}

TEST(CompareTest, NoSimulatedSeedNeverAgrees) {
  Comparison c = CompareToRuns(std::vector<ScenarioResult>{}, {R(1000, 0, 100)});
  EXPECT_FALSE(c.agree());
  EXPECT_NE(c.detail.find("simulated"), std::string::npos);
  c = CompareToRuns(std::vector<ScenarioResult>{R(1000, 0, 100), R(0, 0, 0)}, {R(1000, 0, 100)});
  EXPECT_FALSE(c.agree());
}

TEST(CompareTest, NoCompletedOperationsNeverAgrees) {
  Comparison c = CompareToRuns(R(1000, 0, 100), {R(0, 0, 0)});
  EXPECT_FALSE(c.agree());
  EXPECT_NE(c.detail.find("measured"), std::string::npos);
}

}  // namespace
}  // namespace secmode::sim
