#include "common/latency.h"

#include <algorithm>
#include <cmath>

namespace secmode::common {

void LatencySamples::Merge(const LatencySamples& other) {
  samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
  sorted_ = false;
}

uint64_t LatencySamples::Percentile(double q) {
  if (samples_.empty()) return 0;
  if (!sorted_) {
    std::sort(samples_.begin(), samples_.end());
    sorted_ = true;
  }
  q = std::clamp(q, 0.0, 1.0);
  size_t rank = static_cast<size_t>(std::ceil(q * samples_.size()));
  if (rank == 0) rank = 1;
  return samples_[rank - 1];
}

double LatencySamples::Mean() const {
  if (samples_.empty()) return 0;
  long double sum = 0;
  for (uint64_t s : samples_) sum += s;
  return static_cast<double>(sum / samples_.size());
}

}  // namespace secmode::common
