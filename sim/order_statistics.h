// OrderStatistics: the values at given ranks of the sorted order of a set
// of non-negative integers (the simulator's latency and stage percentiles),
// without sorting and with few unpredictable branches: a histogram of the
// values' high bits (above their minimum) finds the bucket each rank falls
// in, and only the values of those buckets are then selected among
// (std::nth_element). The result is the same as sorting and indexing: the
// value at a rank is unique whatever the method.
// Not thread-safe in the sense that concurrent calls share nothing.
#ifndef SECMODE_SIM_ORDER_STATISTICS_H_
#define SECMODE_SIM_ORDER_STATISTICS_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace secmode::sim {

// out[i] = the value at rank ranks[i] (0: the least) of `values`. Values
// must be >= 0, ranks ascending and < values.size(), out as long as ranks.
// `values` is left as it was. T: a signed integer type.
template <typename T>
void OrderStatistics(std::span<const T> values, std::span<const size_t> ranks,
                     std::span<int64_t> out) {
  if (values.empty() || ranks.empty()) return;
  constexpr int kBits = 12;
  constexpr size_t kBuckets = size_t{1} << kBits;
  const auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  const uint64_t lo = static_cast<uint64_t>(*lo_it);
  const uint64_t span = static_cast<uint64_t>(*hi_it) - lo;
  const int width = std::bit_width(span);
  const int shift = width > kBits ? width - kBits : 0;
  // Four histograms, values taken in turn: consecutive values in one
  // bucket (most of them, for concentrated samples) do not wait for each
  // other's increment. Summed after.
  std::vector<uint32_t> counts(4 * kBuckets, 0);
  const size_t n = values.size();
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    for (size_t j = 0; j < 4; ++j) {
      ++counts[j * kBuckets + ((static_cast<uint64_t>(values[k + j]) - lo) >> shift)];
    }
  }
  for (; k < n; ++k) ++counts[(static_cast<uint64_t>(values[k]) - lo) >> shift];
  std::vector<uint32_t> count(kBuckets);
  for (size_t b = 0; b < kBuckets; ++b) {
    count[b] = counts[b] + counts[kBuckets + b] + counts[2 * kBuckets + b] + counts[3 * kBuckets + b];
  }
  // The bucket of each rank, and the rank within it.
  std::vector<int32_t> target(kBuckets, -1);  // bucket -> index into `gathered`
  std::vector<std::vector<T>> gathered;
  std::vector<size_t> bucket_of(ranks.size()), within(ranks.size());
  size_t bucket = 0, before = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    while (before + count[bucket] <= ranks[i]) before += count[bucket++];
    bucket_of[i] = bucket;
    within[i] = ranks[i] - before;
    if (shift == 0) {  // a bucket per value: the bucket is the value
      out[i] = static_cast<int64_t>(lo + bucket);
      continue;
    }
    if (target[bucket] < 0) {
      target[bucket] = static_cast<int32_t>(gathered.size());
      gathered.emplace_back().reserve(count[bucket]);
    }
  }
  if (shift == 0) return;
  for (const T v : values) {
    const int32_t g = target[(static_cast<uint64_t>(v) - lo) >> shift];
    if (g >= 0) gathered[static_cast<size_t>(g)].push_back(v);
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    std::vector<T>& b = gathered[static_cast<size_t>(target[bucket_of[i]])];
    const auto nth = b.begin() + static_cast<std::ptrdiff_t>(within[i]);
    std::nth_element(b.begin(), nth, b.end());
    out[i] = *nth;
  }
}

}  // namespace secmode::sim

#endif  // SECMODE_SIM_ORDER_STATISTICS_H_
