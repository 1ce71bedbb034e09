#include "common/hex.h"

namespace secmode::common {
namespace {

int Nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string ToHex(ByteView bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

Result<Bytes> FromHex(std::string_view hex) {
  Bytes out;
  out.reserve(hex.size() / 2);
  int high = -1;
  for (size_t i = 0; i < hex.size(); ++i) {
    char c = hex[i];
    if (c == ' ' || c == '\n' || c == '\t') continue;
    int v = Nibble(c);
    if (v < 0) {
      return Status::InvalidArgument("not a hex digit '" + std::string(1, c) + "' at offset " +
                                     std::to_string(i));
    }
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<uint8_t>(high << 4 | v));
      high = -1;
    }
  }
  if (high >= 0) return Status::InvalidArgument("odd number of hex digits");
  return out;
}

}  // namespace secmode::common
