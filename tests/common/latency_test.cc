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

}  // namespace
}  // namespace secmode::common
