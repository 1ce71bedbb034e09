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

// Two samples whose Welch test is known by hand: means 3 and 5, variances
// 2.5 and 2.5 over 5 values each, so t = 2 on 8 degrees of freedom
// (p = 0.0805) and the 95% interval is 2 +- 2.306.
TEST(StatsTest, WelchTTestMatchesAWorkedExample) {
  auto t = WelchTTest({1, 2, 3, 4, 5}, {3, 4, 5, 6, 7});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->applicable);
  EXPECT_NEAR(t->df, 8, 1e-9);
  EXPECT_NEAR(t->p, 0.0805, 1e-3);
  EXPECT_DOUBLE_EQ(t->difference, 2);
  EXPECT_NEAR(t->low, 2 - 2.306, 1e-3);
  EXPECT_NEAR(t->high, 2 + 2.306, 1e-3);
  // Unequal variances and sizes: the Welch-Satterthwaite degrees of freedom
  // lie between the smaller side's n - 1 and the pooled n - 2.
  auto u = WelchTTest({10, 11, 9}, {20, 30, 25, 35, 15, 25});
  ASSERT_TRUE(u.ok());
  EXPECT_GT(u->df, 2);
  EXPECT_LT(u->df, 7);
  EXPECT_LT(u->p, 0.05);
  EXPECT_LT(u->low, u->difference);
  EXPECT_GT(u->high, u->difference);
}

TEST(StatsTest, StudentTQuantileMatchesTables) {
  EXPECT_NEAR(StudentTQuantile(8, 0.05), 2.306, 1e-3);
  EXPECT_NEAR(StudentTQuantile(2, 0.05), 4.303, 1e-3);
  EXPECT_NEAR(StudentTQuantile(1e6, 0.05), 1.960, 1e-3);
  EXPECT_EQ(StudentTQuantile(0, 0.05), 0);
  EXPECT_EQ(StudentTQuantile(5, 1), 0);
}

TEST(StatsTest, WelchTTestCannotTellWithoutSpreadOrSamples) {
  auto one = WelchTTest({1}, {2, 3, 4});
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(one->applicable);
  EXPECT_EQ(one->p, 1);
  EXPECT_EQ(one->difference, 2);
  auto flat = WelchTTest({5, 5, 5}, {6, 6, 6});
  ASSERT_TRUE(flat.ok());
  EXPECT_FALSE(flat->applicable);
  auto empty = WelchTTest({}, {1, 2});
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->applicable);
}

TEST(StatsTest, WelchTTestRefusesBadInput) {
  auto nan = WelchTTest({1, 2, std::numeric_limits<double>::quiet_NaN()}, {1, 2, 3});
  ASSERT_FALSE(nan.ok());
  EXPECT_NE(nan.status().ToString().find("not finite"), std::string::npos);
  EXPECT_FALSE(WelchTTest({1, 2}, {3, 4}, 0).ok());
  EXPECT_FALSE(WelchTTest({1, 2}, {3, 4}, 1).ok());
}


// Order statistics of a median: the coverage 1 - 2 P(Binomial(n, 1/2) <= k - 1)
// worked by hand: n = 9, k = 2: 1 - 2 (1 + 9) / 512; n = 17, k = 5:
// 1 - 2 (1 + 17 + 136 + 680 + 2380) / 131072 (k = 6 would hold 0.856 only).
TEST(StatsTest, MedianIntervalTakesTheWidestOrderStatisticsThatHoldTheConfidence) {
  auto nine = MedianConfidenceInterval({9, 1, 8, 2, 7, 3, 6, 4, 5});
  ASSERT_TRUE(nine.ok()) << nine.status().ToString();
  EXPECT_EQ(nine->n, 9u);
  EXPECT_EQ(nine->k, 2u);
  EXPECT_EQ(nine->lo, 2);
  EXPECT_EQ(nine->hi, 8);
  EXPECT_NEAR(nine->coverage, 1 - 2 * 10.0 / 512, 1e-12);
  std::vector<double> v;
  for (int i = 17; i >= 1; --i) v.push_back(i * 10.0);
  auto seventeen = MedianConfidenceInterval(v);
  ASSERT_TRUE(seventeen.ok());
  EXPECT_EQ(seventeen->k, 5u);
  EXPECT_EQ(seventeen->lo, 50);
  EXPECT_EQ(seventeen->hi, 130);
  EXPECT_NEAR(seventeen->coverage, 1 - 2 * 3214.0 / 131072, 1e-12);
  // A lower confidence narrows it.
  auto looser = MedianConfidenceInterval(v, 0.80);
  ASSERT_TRUE(looser.ok());
  EXPECT_GT(looser->k, seventeen->k);
  EXPECT_GE(looser->coverage, 0.80);
}

TEST(StatsTest, MedianIntervalOfFewValuesIsTheRangeWithTheCoverageItHas) {
  auto five = MedianConfidenceInterval({3, 1, 2, 5, 4});
  ASSERT_TRUE(five.ok());
  EXPECT_EQ(five->k, 1u);
  EXPECT_EQ(five->lo, 1);
  EXPECT_EQ(five->hi, 5);
  EXPECT_NEAR(five->coverage, 1 - 2.0 / 32, 1e-12);  // below 0.95: said, not hidden
  auto one = MedianConfidenceInterval({7});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->k, 1u);
  EXPECT_EQ(one->lo, 7);
  EXPECT_EQ(one->hi, 7);
  EXPECT_EQ(one->coverage, 0);
  auto none = MedianConfidenceInterval({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->n, 0u);
  EXPECT_EQ(none->k, 0u);
}

TEST(StatsTest, MedianIntervalRefusesBadInput) {
  EXPECT_FALSE(MedianConfidenceInterval({1, 2, 3}, 1.0).ok());
  EXPECT_FALSE(MedianConfidenceInterval({1, 2, 3}, 0).ok());
  EXPECT_FALSE(MedianConfidenceInterval({1, std::nan(""), 3}).ok());
}

}  // namespace
}  // namespace secmode::common
