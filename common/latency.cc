#include "common/latency.h"

#include <algorithm>
#include <cmath>

namespace secmode::common {
namespace {

using Counts = std::vector<std::pair<uint64_t, uint64_t>>;

// Two ascending (ns, count) lists as one.
Counts MergeCounts(const Counts& x, const Counts& y) {
  Counts merged;
  merged.reserve(x.size() + y.size());
  auto a = x.begin(), b = y.begin();
  while (a != x.end() || b != y.end()) {
    if (b == y.end() || (a != x.end() && a->first < b->first)) {
      merged.push_back(*a++);
    } else if (a == x.end() || b->first < a->first) {
      merged.push_back(*b++);
    } else {
      merged.emplace_back(a->first, a->second + b->second);
      ++a;
      ++b;
    }
  }
  return merged;
}

}  // namespace

void LatencySamples::Merge(const LatencySamples& other) {
  samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
  counts_ = MergeCounts(counts_, other.counts_);
  counted_ += other.counted_;
}

void LatencySamples::Compact() {
  if (samples_.empty()) return;
  std::sort(samples_.begin(), samples_.end());
  Counts added;
  for (uint64_t ns : samples_) {
    if (added.empty() || added.back().first != ns) added.emplace_back(ns, 0);
    ++added.back().second;
  }
  counted_ += samples_.size();
  std::vector<uint64_t>().swap(samples_);
  counts_ = MergeCounts(counts_, added);
}

uint64_t LatencySamples::Percentile(double q) {
  Compact();
  if (counted_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(counted_)));
  if (rank == 0) rank = 1;
  uint64_t seen = 0;
  for (const auto& [ns, n] : counts_) {
    seen += n;
    if (seen >= rank) return ns;
  }
  return counts_.back().first;
}

double LatencySamples::Mean() const {
  if (count() == 0) return 0;
  long double sum = 0;
  for (uint64_t s : samples_) sum += s;
  for (const auto& [ns, n] : counts_) sum += static_cast<long double>(ns) * n;
  return static_cast<double>(sum / count());
}

}  // namespace secmode::common
