#include "common/latency.h"

#include <gtest/gtest.h>

namespace secmode::common {
namespace {

TEST(LatencyTest, NearestRankPercentiles) {
  LatencySamples s;
  EXPECT_EQ(s.Percentile(0.5), 0u);
  for (uint64_t v = 100; v >= 1; --v) s.Add(v);  // 1..100, unsorted
  EXPECT_EQ(s.Percentile(0.5), 50u);
  EXPECT_EQ(s.Percentile(0.99), 99u);
  EXPECT_EQ(s.Percentile(0.999), 100u);
  EXPECT_EQ(s.Percentile(0.0), 1u);
  EXPECT_DOUBLE_EQ(s.Mean(), 50.5);
  LatencySamples t;
  t.Add(1000);
  s.Merge(t);
  EXPECT_EQ(s.Percentile(1.0), 1000u);
}

// Folding samples into counted values in steps, between percentile reads
// and merges, gives the same exact answers as keeping every sample, and keeps
// memory in proportion to the distinct values.
TEST(LatencyTest, CompactingInStepsKeepsPercentilesExact) {
  LatencySamples whole, steps, other;
  uint64_t x = 12345;
  for (int i = 0; i < 30000; ++i) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    const uint64_t ns = 50 + (x >> 60) * 10 + (i % 7 == 0 ? (x >> 40) % 5000 : 0);
    whole.Add(ns);
    (i % 3 == 0 ? other : steps).Add(ns);
    if (i % 4999 == 0) steps.Compact();
    if (i > 0 && i % 7001 == 0) {  // reads between steps
      EXPECT_GT(steps.Percentile(0.5), 0u);
    }
  }
  steps.Merge(other);
  EXPECT_EQ(steps.count(), whole.count());
  for (double q : {0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    EXPECT_EQ(steps.Percentile(q), whole.Percentile(q)) << q;
  }
  EXPECT_NEAR(steps.Mean(), whole.Mean(), 1e-9 * whole.Mean());
}

}  // namespace
}  // namespace secmode::common
