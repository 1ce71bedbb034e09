#include "sim/order_statistics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/random.h"

namespace secmode::sim {
namespace {

// Each rank's value against sorting and indexing.
void ExpectAsSorted(const std::vector<int64_t>& values, const std::vector<size_t>& ranks) {
  std::vector<int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> out(ranks.size(), -1);
  OrderStatistics<int64_t>(values, sorted.back(), ranks, out);
  for (size_t i = 0; i < ranks.size(); ++i) {
    EXPECT_EQ(out[i], sorted[ranks[i]]) << "rank " << ranks[i] << " of " << values.size();
  }
}

std::vector<size_t> Percentiles(size_t n) {
  std::vector<size_t> r;
  for (const double q : {0.0, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    r.push_back(std::min(n - 1, static_cast<size_t>(q * static_cast<double>(n))));
  }
  return r;
}

TEST(OrderStatisticsTest, SameAsSortingForEveryShapeTheSimulatorProduces) {
  Rng rng(11);
  for (const size_t n : {size_t{1}, size_t{2}, size_t{3}, size_t{17}, size_t{4096},
                         size_t{100000}}) {
    std::vector<int64_t> exp_values, heavy, narrow, equal, wide, concentrated;
    for (size_t i = 0; i < n; ++i) {
      exp_values.push_back(static_cast<int64_t>(rng.Exponential(1e6)));
      // A lognormal tail: a few values thousands of times the median.
      heavy.push_back(static_cast<int64_t>(rng.LogNormal(1e5, 2.5)));
      // Large values close together: everything above a big minimum.
      narrow.push_back(int64_t{1} << 40 | static_cast<int64_t>(rng.Next() % 300));
      equal.push_back(1720);
      // From 0 to near the largest int64.
      wide.push_back(static_cast<int64_t>(rng.Next() >> 1));
      // Most values one figure (a fixed CPU cost), the rest spread far
      // above it: the figure's bucket is cut again, more than once.
      concentrated.push_back(rng.Next() % 10 != 0 ? 20000
                                                  : 20000 + static_cast<int64_t>(rng.Next() % 3000000000));
    }
    for (const auto* v : {&exp_values, &heavy, &narrow, &equal, &wide, &concentrated}) {
      ExpectAsSorted(*v, Percentiles(n));
    }
  }
}

// The 32-bit samples the simulator keeps stage times in: the same ranks as
// sorting, for a spread and a concentrated shape up to the largest int32.
TEST(OrderStatisticsTest, ThirtyTwoBitValuesAsSorted) {
  Rng rng(13);
  std::vector<int32_t> spread, concentrated;
  for (int i = 0; i < 50000; ++i) {
    spread.push_back(static_cast<int32_t>(rng.Next() >> 33));
    concentrated.push_back(i % 7 != 0 ? 1720 : static_cast<int32_t>(rng.Next() >> 33));
  }
  for (const auto* v : {&spread, &concentrated}) {
    std::vector<int32_t> sorted = *v;
    std::sort(sorted.begin(), sorted.end());
    const std::vector<size_t> ranks = Percentiles(v->size());
    std::vector<int64_t> out(ranks.size(), -1);
    OrderStatistics<int32_t>(*v, sorted.back(), ranks, out);
    for (size_t i = 0; i < ranks.size(); ++i) EXPECT_EQ(out[i], sorted[ranks[i]]) << ranks[i];
  }
}

TEST(OrderStatisticsTest, SeveralRanksInOneBucketAndEveryRank) {
  // Two values only, many times each: every rank falls in one of two
  // buckets, several ranks in the same one.
  std::vector<int64_t> v;
  for (int i = 0; i < 500; ++i) v.push_back(i % 3 == 0 ? 7 : 5);
  std::vector<size_t> all;
  for (size_t r = 0; r < v.size(); ++r) all.push_back(r);
  ExpectAsSorted(v, all);
}

TEST(OrderStatisticsTest, NothingToDoLeavesOutAsItWas) {
  std::vector<int64_t> out = {-1};
  const std::vector<size_t> ranks = {0};
  OrderStatistics<int64_t>({}, 0, ranks, out);
  EXPECT_EQ(out[0], -1);
}

}  // namespace
}  // namespace secmode::sim
