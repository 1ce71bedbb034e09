// LatencySamples: per-operation times of one measurement, and percentiles.
//
// Keeps every sample (measurements are bounded in count), so percentiles are
// exact, not bucketed. Not thread-safe: one per measuring thread, Merge after.
#ifndef SECMODE_COMMON_LATENCY_H_
#define SECMODE_COMMON_LATENCY_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace secmode::common {

class LatencySamples {
 public:
  void Reserve(size_t n) { samples_.reserve(n); }
  void Add(uint64_t ns) {
    samples_.push_back(ns);
    sorted_ = false;
  }
  void Merge(const LatencySamples& other);
  size_t count() const { return samples_.size(); }
  // q in [0, 1]; nearest-rank percentile; 0 when empty.
  uint64_t Percentile(double q);
  double Mean() const;

 private:
  std::vector<uint64_t> samples_;
  bool sorted_ = true;
};

}  // namespace secmode::common

#endif  // SECMODE_COMMON_LATENCY_H_
