// The deterministic twin of planted_slowdown_timing_test.cc, in the unit
// label: the same 3 + 3 run directories, comparison and checks
// (tests/harness/planted_runs.h), with each run's figures drawn from a seeded
// model of run-to-run noise instead of the clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "suite/suite.h"
#include "tests/harness/planted_runs.h"

namespace secmode::harness::planted {
namespace {

// Each row's true figure, shifted per run by a factor shared by that run's
// repetitions (sd 3%; the repetitions vary 1% around it), the planted row
// 10% slower in side B.
using PlantedSlowdownTest = PlantedRunsTest;

// The timing test's rule for a miss that is the machine's: the interval
// reaches further than the planted share on either side of the ratio. An
// interval that reaches further below its ratio than the planted share,
// and less far above it, holds both no change and the planted one.
TEST(PlantedIntervalTest, TheReachIsTheFartherSideOfTheInterval) {
  RowComparison r;
  r.ratio = 1.028;
  r.ratio_low = 0.896;
  r.ratio_high = 1.112;
  EXPECT_NEAR(IntervalReach(r), 1.028 / 0.896, 1e-12);
  EXPECT_GT(IntervalReach(r), 1.10);
  r.ratio_low = 0.99;  // narrow below: 3.8% below, 8.2% above
  EXPECT_NEAR(IntervalReach(r), 1.112 / 1.028, 1e-12);
  EXPECT_LT(IntervalReach(r), 1.10);
  r.ratio_low = 0;  // no interval
  EXPECT_EQ(IntervalReach(r), 0);
}

TEST_F(PlantedSlowdownTest, SeededRunsFindThePlantedSlowdown) {
  std::mt19937_64 rng(20261206);
  std::normal_distribution<double> run_shift(0, 0.03), repetition(0, 0.01);
  const MakeRows seeded = [&](bool planted) -> common::Result<std::vector<MicroRow>> {
    std::vector<MicroRow> rows;
    for (size_t size : suite::kDefaultSizes) {
      for (common::Leg leg : common::kAllLegs) {
        const bool slowed = planted && leg == kLeg && size == kSize;
        const double truth = (500 + static_cast<double>(size)) * (slowed ? 1.10 : 1.0);
        const double shift = std::exp(run_shift(rng));
        LegMeasurement m;
        for (size_t k = 0; k < suite::kQuickRepetitions; ++k) {
          m.repetitions_ns.push_back(truth * shift * std::exp(repetition(rng)));
        }
        m.ns_per_op = *std::min_element(m.repetitions_ns.begin(), m.repetitions_ns.end());
        m.samples = 30;
        rows.push_back(
            {"krb5p", "native", "aes256-cts-hmac-sha1-96", common::LegName(leg), size, 1, m});
      }
    }
    return rows;
  };
  auto c = PlantAndCompare(root(), seeded);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ExpectPlantedRowFound(*c);
  // The runs were written in turn and read back in order, each side's own.
  ASSERT_EQ(c->a_labels.size(), kRunsPerSide);
  ASSERT_EQ(c->b_labels.size(), kRunsPerSide);
  for (size_t i = 0; i < kRunsPerSide; ++i) {
    EXPECT_NE(c->a_labels[i].find("side a"), std::string::npos) << c->a_labels[i];
    EXPECT_NE(c->b_labels[i].find("side b"), std::string::npos) << c->b_labels[i];
  }
}

}  // namespace
}  // namespace secmode::harness::planted
