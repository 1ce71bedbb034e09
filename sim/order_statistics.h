// OrderStatistics: the values at given ranks of the sorted order of a set
// of non-negative integers (the simulator's latency and stage percentiles),
// without sorting and with few unpredictable branches: a histogram of the
// values' high bits finds the bucket each rank falls in, cut again by the
// next bits while it holds many values, selected among (std::nth_element)
// once it holds few. The result is the same as sorting and indexing: the
// value at a rank is unique whatever the method. Concurrent calls share
// nothing.
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

namespace order_statistics_detail {

inline constexpr int kBits = 12;
inline constexpr size_t kBuckets = size_t{1} << kBits;
// A bucket this small is selected among directly.
inline constexpr size_t kSelectAmong = 4096;

// count[b] = how many values v have (v - base) >> shift == b, among those
// with v - base below 2^(shift + kBits) (others are counted in an extra
// bucket, kBuckets, without a branch). Four histograms, values taken in
// turn: consecutive values in one bucket (most of them, for concentrated
// samples) do not wait for each other's increment.
template <typename T>
std::vector<uint32_t> Histogram(std::span<const T> values, uint64_t base, int shift) {
  constexpr size_t kStride = kBuckets + 1;
  std::vector<uint32_t> counts(4 * kStride, 0);
  const int bits = shift + kBits;
  const auto bucket = [base, shift, bits](T v) {
    const uint64_t d = static_cast<uint64_t>(v) - base;  // wraps for v < base: out of range
    const bool in = (d >> bits) == 0;  // bits <= 63: shift <= 51 (values < 2^63)
    return in ? static_cast<size_t>(d >> shift) : kBuckets;
  };
  const size_t n = values.size();
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    for (size_t j = 0; j < 4; ++j) ++counts[j * kStride + bucket(values[k + j])];
  }
  for (; k < n; ++k) ++counts[bucket(values[k])];
  std::vector<uint32_t> count(kBuckets);
  for (size_t b = 0; b < kBuckets; ++b) {
    count[b] = counts[b] + counts[kStride + b] + counts[2 * kStride + b] + counts[3 * kStride + b];
  }
  return count;
}

}  // namespace order_statistics_detail

// out[i] = the value at rank ranks[i] (0: the least) of `values`. Values
// must be in [0, most], ranks ascending and < values.size(), out as long as
// ranks. `values` is left as it was. T: a signed integer type.
//
// A histogram of the values' high bits (below `most`'s) finds the
// bucket each rank falls in; a bucket of kSelectAmong values or fewer is
// selected among directly, a larger one is cut again by the next bits
// (one more pass over the values), until a bucket holds one value only.
template <typename T>
void OrderStatistics(std::span<const T> values, T most, std::span<const size_t> ranks,
                     std::span<int64_t> out) {
  using order_statistics_detail::Histogram;
  using order_statistics_detail::kBits;
  using order_statistics_detail::kSelectAmong;
  if (values.empty() || ranks.empty()) return;
  const int width = std::bit_width(static_cast<uint64_t>(most));
  const int top_shift = width > kBits ? width - kBits : 0;
  const std::vector<uint32_t> top = Histogram(values, 0, top_shift);
  std::vector<T> among;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::vector<uint32_t>* count = &top;
    std::vector<uint32_t> finer;
    uint64_t base = 0;
    int shift = top_shift;
    size_t rank = ranks[i];
    while (true) {
      size_t b = 0;
      while ((*count)[b] <= rank) rank -= (*count)[b++];
      base += static_cast<uint64_t>(b) << shift;
      if (shift == 0) {  // a bucket per value: the bucket is the value
        out[i] = static_cast<int64_t>(base);
        break;
      }
      if ((*count)[b] <= kSelectAmong) {
        // The bucket's values, [base, base + 2^shift): each written, kept
        // if in it (no branch).
        among.resize((*count)[b] + 1);
        const uint64_t end = uint64_t{1} << shift;
        size_t kept = 0;
        for (const T v : values) {
          among[kept] = v;
          kept += static_cast<uint64_t>(v) - base < end ? 1 : 0;
        }
        const auto nth = among.begin() + static_cast<std::ptrdiff_t>(rank);
        std::nth_element(among.begin(), nth, among.begin() + static_cast<std::ptrdiff_t>(kept));
        out[i] = static_cast<int64_t>(*nth);
        break;
      }
      shift = shift > kBits ? shift - kBits : 0;
      finer = Histogram(values, base, shift);
      count = &finer;
    }
  }
}

}  // namespace secmode::sim

#endif  // SECMODE_SIM_ORDER_STATISTICS_H_
