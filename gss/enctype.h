// The Kerberos enctypes secmode measures (the AES family of RFC 3962 and
// 8009), one row each, in the style of MIT krb5's krb5int_enctypes_list[]
// (src/lib/crypto/krb/etypes.c): the number, the name MIT's kdc.conf uses,
// the sizes and primitives of the RFC 3961 profile, and where the throwaway
// KDC lists it. Names, parsing, the native engine's crypto (kcrypto.h), the
// KDC's enctype lists (realm.h) and every loop over the enctypes read this
// table; adding an enctype is its number in Enctype, one row, its
// known-answer test in tests/gss/, and (if the native engine cannot do it)
// null native ciphers.
//
// kEnctypeProfiles is constant and ordered by number; every Enctype value
// has exactly one row. All functions are pure and thread-safe.
#ifndef SECMODE_GSS_ENCTYPE_H_
#define SECMODE_GSS_ENCTYPE_H_

#include <openssl/evp.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/hmac.h"
#include "common/status.h"

namespace secmode::gss {

enum class Enctype : int32_t {
  kAes128CtsHmacSha1 = 17,    // RFC 3962
  kAes256CtsHmacSha1 = 18,    // RFC 3962
  kAes128CtsHmacSha256 = 19,  // RFC 8009
  kAes256CtsHmacSha384 = 20,  // RFC 8009
};

struct EnctypeProfile {
  int32_t enctype = 0;       // the RFC 3961 number
  const char* name = "";     // as MIT's kdc.conf spells it
  size_t key_size = 0;       // 16 or 32
  size_t checksum_size = 0;  // h: 12, 16 or 24 bytes
  common::HashKind hash = common::HashKind::kSha1;
  bool rfc8009 = false;  // KDF-HMAC-SHA2 and HMAC over IV|C; else RFC 3962 DK, HMAC over plaintext
  // The native engine's block cipher in CBC and ECB (static OpenSSL
  // ciphers, not owned); null when only the MIT engines do this enctype.
  const EVP_CIPHER* (*cbc)() = nullptr;
  const EVP_CIPHER* (*ecb)() = nullptr;
  // Its place in the throwaway KDC's supported and permitted enctypes (1 =
  // first, the one a ticket gets when nothing else is asked for).
  int kdc_preference = 0;
};

// clang-format off
inline constexpr EnctypeProfile kEnctypeProfiles[] = {
    // number name                          key  h  hash                      8009   CBC               ECB               KDC
    {17, "aes128-cts-hmac-sha1-96",    16, 12, common::HashKind::kSha1,   false, &EVP_aes_128_cbc, &EVP_aes_128_ecb, 2},
    {18, "aes256-cts-hmac-sha1-96",    32, 12, common::HashKind::kSha1,   false, &EVP_aes_256_cbc, &EVP_aes_256_ecb, 1},
    {19, "aes128-cts-hmac-sha256-128", 16, 16, common::HashKind::kSha256, true,  &EVP_aes_128_cbc, &EVP_aes_128_ecb, 4},
    {20, "aes256-cts-hmac-sha384-192", 32, 24, common::HashKind::kSha384, true,  &EVP_aes_256_cbc, &EVP_aes_256_ecb, 3},
};
// clang-format on

// Every enctype, in the table's order.
inline constexpr auto kAllEnctypes = [] {
  std::array<Enctype, std::size(kEnctypeProfiles)> all{};
  for (size_t i = 0; i < all.size(); ++i) {
    all[i] = static_cast<Enctype>(kEnctypeProfiles[i].enctype);
  }
  return all;
}();
// The enctypes the native engine can do (their rows have its ciphers).
inline constexpr size_t kNativeEnctypeCount = [] {
  size_t n = 0;
  for (const EnctypeProfile& p : kEnctypeProfiles) n += p.cbc != nullptr ? 1 : 0;
  return n;
}();
inline constexpr auto kNativeEnctypes = [] {
  std::array<Enctype, kNativeEnctypeCount> native{};
  size_t i = 0;
  for (const EnctypeProfile& p : kEnctypeProfiles) {
    if (p.cbc != nullptr) native[i++] = static_cast<Enctype>(p.enctype);
  }
  return native;
}();
inline constexpr Enctype kDefaultEnctype = Enctype::kAes256CtsHmacSha1;

// The row of `number`, or null.
const EnctypeProfile* FindEnctype(int32_t number);
// "aes256-cts-hmac-sha1-96" etc., as MIT's kdc.conf spells them.
const char* EnctypeName(Enctype e);
// Accepts the MIT names and the numbers ("18").
common::Result<Enctype> ParseEnctype(std::string_view name);
// Known enctype number?
bool IsSupportedEnctype(int32_t number);
// Can the native engine do `e` (kNativeEnctypes)?
bool IsNativeEnctype(Enctype e);
// The enctypes as the throwaway KDC lists them, in kdc_preference order,
// separated by spaces, each followed by `suffix` (":normal" for
// supported_enctypes, "" for permitted_enctypes).
std::string KdcEnctypeList(const char* suffix);

}  // namespace secmode::gss

#endif  // SECMODE_GSS_ENCTYPE_H_
