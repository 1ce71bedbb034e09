// Kerberos enctypes secmode measures (the AES family of RFC 3962 and 8009).
#ifndef SECMODE_GSS_ENCTYPE_H_
#define SECMODE_GSS_ENCTYPE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace secmode::gss {

enum class Enctype : int32_t {
  kAes128CtsHmacSha1 = 17,    // RFC 3962
  kAes256CtsHmacSha1 = 18,    // RFC 3962
  kAes128CtsHmacSha256 = 19,  // RFC 8009
  kAes256CtsHmacSha384 = 20,  // RFC 8009
};

inline constexpr Enctype kAllEnctypes[] = {Enctype::kAes128CtsHmacSha1, Enctype::kAes256CtsHmacSha1,
                                           Enctype::kAes128CtsHmacSha256,
                                           Enctype::kAes256CtsHmacSha384};
inline constexpr Enctype kDefaultEnctype = Enctype::kAes256CtsHmacSha1;

// "aes256-cts-hmac-sha1-96" etc., as MIT's kdc.conf spells them.
const char* EnctypeName(Enctype e);
// Accepts the MIT names and the numbers ("18").
common::Result<Enctype> ParseEnctype(std::string_view name);
// Known enctype number?
bool IsSupportedEnctype(int32_t number);

}  // namespace secmode::gss

#endif  // SECMODE_GSS_ENCTYPE_H_
