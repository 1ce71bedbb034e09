#include "trace/most_over_time.h"

#include <algorithm>

namespace secmode::trace {

void MostOverTime::Add(int64_t ts_ns, uint32_t value) {
  if (bins_.empty()) start_ns_ = ts_ns;
  const uint64_t at = ts_ns > start_ns_ ? static_cast<uint64_t>(ts_ns - start_ns_) : 0;
  uint64_t i = at / static_cast<uint64_t>(width_ns_);
  while (i >= kBins) {
    for (size_t j = 0; j < bins_.size(); j += 2) {
      const uint32_t right = j + 1 < bins_.size() ? bins_[j + 1] : 0;
      bins_[j / 2] = std::max(bins_[j], right);
    }
    bins_.resize((bins_.size() + 1) / 2);
    width_ns_ *= 2;
    i = at / static_cast<uint64_t>(width_ns_);
  }
  if (bins_.size() <= i) bins_.resize(i + 1, 0);
  const uint32_t stored = std::min<uint32_t>(value, UINT32_MAX - 1) + 1;
  bins_[i] = std::max(bins_[i], stored);
}

std::vector<uint32_t> MostOverTime::bins() const {
  std::vector<uint32_t> out;
  out.reserve(bins_.size());
  for (uint32_t b : bins_) out.push_back(b == 0 ? kNone : b - 1);
  return out;
}

}  // namespace secmode::trace
