#include "sim/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace secmode::sim {
namespace {

TEST(PortableLogTest, MatchesLibmClosely) {
  for (double x : {1e-300, 1e-10, 0.001, 0.3, 0.7071, 1.0, 1.4142, 2.0, 3.5, 1e6, 1e300}) {
    EXPECT_NEAR(PortableLog(x), std::log(x), 1e-13 * std::max(1.0, std::fabs(std::log(x)))) << x;
  }
  EXPECT_EQ(PortableLog(1.0), 0.0);
  EXPECT_LT(PortableLog(0.0), -1e300);
  EXPECT_LT(PortableLog(-1.0), -1e300);
  // Every table interval, both ends and the middle, and a sweep of the
  // uniform draws the exponential distribution feeds it.
  for (int i = 0; i <= 2 * 128 * 8; ++i) {
    const double x = 0.5 + i / (2.0 * 128 * 8) * 1.5;
    EXPECT_NEAR(PortableLog(x), std::log(x), 1e-15 * std::max(1.0, std::fabs(std::log(x)))) << x;
  }
  Rng rng(7);
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.Uniform();
    ASSERT_NEAR(PortableLog(u), std::log(u), 1e-14 * std::max(1.0, std::fabs(std::log(u)))) << u;
  }
  // Subnormal input.
  EXPECT_NEAR(PortableLog(5e-320), std::log(5e-320), 1e-11);
}

TEST(PortableExpTest, MatchesLibmClosely) {
  for (double x : {-700.0, -20.0, -1.0, -0.3, 0.0, 0.25, 1.0, 10.0, 300.0}) {
    EXPECT_NEAR(PortableExp(x) / std::exp(x), 1.0, 1e-14) << x;
  }
  EXPECT_EQ(PortableExp(-800), 0.0);
}

TEST(RngTest, SameSeedSameSequenceDifferentSeedDifferent) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
}

TEST(RngTest, UniformIsOpenInterval) {
  Rng r(7);
  for (int i = 0; i < 100000; ++i) {
    double u = r.Uniform();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

// The ziggurat's draws against the exponential distribution: the largest
// gap between their empirical CDF and 1 - e^-x (Kolmogorov-Smirnov; 1.95 /
// sqrt(n) is its 0.1% critical value), and how often they land in the
// parts the fast path does not cover: the tail beyond r (e^-r) and further
// in it, each within four binomial standard deviations (at 9, about 120
// draws expected: the check can fail either way).
TEST(RngTest, ExponentialFollowsItsDistribution) {
  Rng r(3);
  const int n = 1000000;
  std::vector<double> v(n);
  for (double& x : v) {
    x = r.StandardExponential();
    ASSERT_GE(x, 0.0);
  }
  std::sort(v.begin(), v.end());
  double d = 0;
  for (int i = 0; i < n; ++i) {
    const double cdf = 1 - std::exp(-v[static_cast<size_t>(i)]);
    d = std::max({d, std::fabs(cdf - static_cast<double>(i) / n),
                  std::fabs(cdf - static_cast<double>(i + 1) / n)});
  }
  EXPECT_LT(d, 1.95 / std::sqrt(static_cast<double>(n)));
  for (const double at : {0.05, 1.0, 7.69711747013104972, 9.0}) {
    const double p = std::exp(-at);
    const double above = static_cast<double>(v.end() - std::upper_bound(v.begin(), v.end(), at));
    EXPECT_NEAR(above / n, p, 4 * std::sqrt(p * (1 - p) / n) + 1.0 / n) << "P(X > " << at << ")";
  }
}

TEST(RngTest, DistributionMeans) {
  Rng r(1);
  const int n = 200000;
  double se = 0, sl = 0, sn = 0, sn2 = 0;
  for (int i = 0; i < n; ++i) {
    se += r.Exponential(100.0);
    sl += r.LogNormal(100.0, 0.5);
    double z = r.Normal();
    sn += z;
    sn2 += z * z;
  }
  EXPECT_NEAR(se / n, 100.0, 1.5);
  EXPECT_NEAR(sl / n, 100.0, 1.0);
  EXPECT_NEAR(sn / n, 0.0, 0.01);
  EXPECT_NEAR(sn2 / n, 1.0, 0.02);
}

}  // namespace
}  // namespace secmode::sim
