#include "common/bytes.h"

namespace secmode::common {

Bytes PatternBytes(size_t size, uint32_t seed) {
  Bytes out(size);
  uint32_t x = seed * 2654435761u + 0x9e3779b9u;
  for (size_t i = 0; i < size; ++i) {
    // xorshift32: cheap, deterministic, full-period.
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = static_cast<uint8_t>(x);
  }
  return out;
}

}  // namespace secmode::common
