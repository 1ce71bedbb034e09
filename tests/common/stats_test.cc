#include "common/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace secmode::common {
namespace {

TEST(StatsTest, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

TEST(StatsTest, SummarizeGivesTheSampleCoefficientOfVariation) {
  // mean 10, sample standard deviation sqrt(((-2)^2 + 0 + 2^2) / 2) = 2.
  const Spread s = Summarize({8, 10, 12});
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.median, 10);
  EXPECT_DOUBLE_EQ(s.mean, 10);
  EXPECT_DOUBLE_EQ(s.min, 8);
  EXPECT_DOUBLE_EQ(s.max, 12);
  EXPECT_NEAR(s.cv, 0.2, 1e-12);
  EXPECT_EQ(Summarize({5}).cv, 0);
  EXPECT_EQ(Summarize({}).n, 0u);
}

TEST(StatsTest, FitLineRecoversAnExactLineAndItsZeroError) {
  const LineFit f = FitLine({0, 1, 2, 3}, {5, 7, 9, 11});
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(f.n, 4u);
  EXPECT_NEAR(f.slope, 2, 1e-9);
  EXPECT_NEAR(f.intercept, 5, 1e-9);
  EXPECT_NEAR(f.slope_se, 0, 1e-6);
}

TEST(StatsTest, FitLineOfScatteredPointsHasTheLeastSquaresSlopeAndAnError) {
  // x 0,1,2,3 and y 1,3,2,5: mean x 1.5, mean y 2.75, Sxy = 5.5, Sxx = 5,
  // slope 1.1, intercept 1.1; residuals -0.1, 0.8, -1.3, 0.6 (RSS 2.7): the
  // slope's standard error sqrt(RSS / (n - 2) / Sxx) = 0.52 or, with the
  // RMS error as ALGLIB takes it, sqrt(RSS / n / Sxx) = 0.37.
  const LineFit f = FitLine({0, 1, 2, 3}, {1, 3, 2, 5});
  ASSERT_TRUE(f.ok);
  EXPECT_NEAR(f.slope, 1.1, 1e-9);
  EXPECT_NEAR(f.intercept, 1.1, 1e-9);
  EXPECT_GT(f.slope_se, 0.3);
  EXPECT_LT(f.slope_se, 0.6);
}

TEST(StatsTest, FitLineOfTwoPointsIsTheLineThroughThem) {
  const LineFit f = FitLine({4096, 1048576}, {1000, 7266.88});
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(f.n, 2u);
  EXPECT_NEAR(f.slope, 0.006, 1e-12);
  EXPECT_NEAR(f.intercept, 975.424, 1e-9);
  EXPECT_TRUE(std::isnan(f.slope_se));  // no residual to take an error from
}

TEST(StatsTest, FitLineRefusesWhatCannotMakeALine) {
  EXPECT_FALSE(FitLine({1}, {1}).ok);                // too few points
  EXPECT_FALSE(FitLine({2, 2}, {1, 2}).ok);          // x does not vary
  EXPECT_FALSE(FitLine({2, 2, 2}, {1, 2, 3}).ok);    // x does not vary
  EXPECT_FALSE(FitLine({1, 2, 3}, {1, 2}).ok);       // lengths differ
  EXPECT_FALSE(FitLine({1, 2, NAN}, {1, 2, 3}).ok);  // not finite
  EXPECT_FALSE(FitLine({1, 2, 3}, {1, INFINITY, 3}).ok);
}

TEST(StatsTest, UTestSeparatesDisjointSamplesAtTheExactP) {
  // 5 and 5 values with no overlap: the smallest two-sided p, 2 / C(10, 5).
  auto t = MannWhitneyU({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->applicable);
  EXPECT_NEAR(t->p, 2.0 / 252.0, 1e-6);
}

TEST(StatsTest, UTestDoesNotSeparateInterleavedOrEqualSamples) {
  auto mixed = MannWhitneyU({1, 3, 5, 7, 9}, {2, 4, 6, 8, 10});
  ASSERT_TRUE(mixed.ok());
  EXPECT_GT(mixed->p, 0.3);
  auto equal = MannWhitneyU({5, 5, 5, 5, 5}, {5, 5, 5, 5, 5});
  ASSERT_TRUE(equal.ok());
  EXPECT_TRUE(equal->applicable);
  EXPECT_EQ(equal->p, 1);
}

TEST(StatsTest, UTestIsNotApplicableBelowFiveSamplesASide) {
  auto t = MannWhitneyU({1, 2, 3}, {7, 8, 9});
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->applicable);
  EXPECT_EQ(t->p, 1);
}

TEST(StatsTest, UTestRefusesANonFiniteValue) {
  auto t = MannWhitneyU({1, 2, 3, 4, std::numeric_limits<double>::quiet_NaN()}, {1, 2, 3, 4, 5});
  EXPECT_FALSE(t.ok());
  EXPECT_NE(t.status().ToString().find("not finite"), std::string::npos);
}

}  // namespace
}  // namespace secmode::common
