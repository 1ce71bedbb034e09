// LatencySamples: per-operation times of one measurement, and percentiles.
//
// Percentiles are exact, not bucketed: Compact() folds the samples added so
// far into a sorted list of distinct values with their counts, so a
// measurement that stays alive over a whole run (interleaved repetitions)
// holds memory in proportion to the distinct times it saw, not to its
// operations. Add() itself only appends. Not thread-safe: one per measuring
// thread, Merge after.
#ifndef SECMODE_COMMON_LATENCY_H_
#define SECMODE_COMMON_LATENCY_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace secmode::common {

class LatencySamples {
 public:
  void Reserve(size_t n) { samples_.reserve(n); }
  void Add(uint64_t ns) { samples_.push_back(ns); }
  void Merge(const LatencySamples& other);
  // Folds the samples added since the last call into the counted values and
  // releases their memory. Percentile and Mean give the same answers before
  // and after.
  void Compact();
  size_t count() const { return samples_.size() + counted_; }
  // q in [0, 1]; nearest-rank percentile; 0 when empty.
  uint64_t Percentile(double q);
  double Mean() const;

 private:
  std::vector<uint64_t> samples_;                      // added, not yet counted
  std::vector<std::pair<uint64_t, uint64_t>> counts_;  // (ns, how many), ascending ns
  size_t counted_ = 0;                                 // the sum of counts_' counts
};

}  // namespace secmode::common

#endif  // SECMODE_COMMON_LATENCY_H_
