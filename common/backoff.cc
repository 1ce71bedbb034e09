#include "common/backoff.h"

#include <algorithm>

namespace secmode::common {

Backoff::Backoff(Options options, uint64_t seed) : o_(options), rng_(seed) {
  o_.initial_ns = std::max<uint64_t>(o_.initial_ns, 1);
  o_.max_ns = std::max(o_.max_ns, o_.initial_ns);
}

uint64_t Backoff::Next() {
  const uint32_t n = failures_;
  if (failures_ < UINT32_MAX) ++failures_;
  if (n == 0) return 0;
  // initial * 2^(n-1), capped; the shift stops growing once past the cap.
  uint64_t wait = o_.initial_ns;
  for (uint32_t i = 1; i < n && wait < o_.max_ns; ++i) wait *= 2;
  wait = std::min(wait, o_.max_ns);
  std::uniform_int_distribution<uint64_t> jitter(wait / 2, wait);
  return jitter(rng_);
}

}  // namespace secmode::common
