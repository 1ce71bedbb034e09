#include "gss/enctype.h"

namespace secmode::gss {

const char* EnctypeName(Enctype e) {
  switch (e) {
    case Enctype::kAes128CtsHmacSha1: return "aes128-cts-hmac-sha1-96";
    case Enctype::kAes256CtsHmacSha1: return "aes256-cts-hmac-sha1-96";
    case Enctype::kAes128CtsHmacSha256: return "aes128-cts-hmac-sha256-128";
    case Enctype::kAes256CtsHmacSha384: return "aes256-cts-hmac-sha384-192";
  }
  return "unknown";
}

common::Result<Enctype> ParseEnctype(std::string_view name) {
  for (Enctype e : kAllEnctypes) {
    if (name == EnctypeName(e) || name == std::to_string(static_cast<int>(e))) return e;
  }
  std::string known;
  for (Enctype e : kAllEnctypes) known += std::string(known.empty() ? "" : ", ") + EnctypeName(e);
  return common::Status::InvalidArgument("unknown enctype '" + std::string(name) +
                                         "' (known: " + known + ")");
}

bool IsSupportedEnctype(int32_t number) {
  for (Enctype e : kAllEnctypes) {
    if (static_cast<int32_t>(e) == number) return true;
  }
  return false;
}

}  // namespace secmode::gss
