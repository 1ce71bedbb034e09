// Byte buffers and views used on every data path.
//
// Bytes owns; ByteView and MutableByteView borrow and never outlive the owner.
#ifndef SECMODE_COMMON_BYTES_H_
#define SECMODE_COMMON_BYTES_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace secmode::common {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;
using MutableByteView = std::span<uint8_t>;

inline ByteView AsBytes(std::string_view s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// Deterministic filler so payloads are reproducible and not all-zero
// (some ciphers and checksums have fast paths nobody sees in practice).
Bytes PatternBytes(size_t size, uint32_t seed = 1);

}  // namespace secmode::common

#endif  // SECMODE_COMMON_BYTES_H_
