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

TEST(CompareTest, ZeroMustMatchZero) {
  EXPECT_TRUE(CompareToRuns(R(1000, 0, 5000), {R(1000, 0, 5000)}).agree());
  Comparison c = CompareToRuns(R(1000, 0, 5000), {R(1000, 1, 5000)});
  EXPECT_FALSE(c.violations_agree);  // the model's zero is refuted by one event
  EXPECT_NE(c.detail.find("model says zero"), std::string::npos);
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

TEST(CompareTest, ModelZeroNeedsEveryRunAtZero) {
  const std::vector<ScenarioResult> runs = {R(1000, 0, 100), R(1000, 1, 100), R(1000, 0, 100)};
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

TEST(CompareTest, NoCompletedOperationsNeverAgrees) {
  Comparison c = CompareToRuns(R(1000, 0, 100), {R(0, 0, 0)});
  EXPECT_FALSE(c.agree());
  EXPECT_NE(c.detail.find("measured"), std::string::npos);
}

}  // namespace
}  // namespace secmode::sim
