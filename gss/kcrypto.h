// kcrypto: the RFC 3961 simplified profile for the AES enctypes, with
// OpenSSL 3 primitives.
//   17/18 aes128/256-cts-hmac-sha1-96      RFC 3962: DK key derivation,
//         HMAC-SHA1-96 over the plaintext
//   19/20 aes128-cts-hmac-sha256-128 /     RFC 8009: KDF-HMAC-SHA2 key
//         aes256-cts-hmac-sha384-192       derivation, HMAC over IV | C
// Encryption is AES-CBC with ciphertext stealing (RFC 3962 section 5: the
// last two blocks swapped, also when the length is a block multiple) over
// confounder | plaintext, with a zero IV.
//
// UsageKeys holds everything one key usage needs (Ke, Ki, Kc, the AES-CBC
// contexts and the common::Hmac states), derived once; its per-message calls
// allocate nothing. The CBC contexts are never re-initialised per message
// (OpenSSL's IV reset costs as much as encrypting several blocks): each
// keeps chaining from the last ciphertext block it saw, which UsageKeys
// remembers, and a message's zero-IV chain is restored by XOR-ing that
// block into its first block (before encrypting, after decrypting). The
// stolen block of CTS is decrypted by an ECB context of its own, and a
// small message is encrypted or decrypted with one CBC call.
// Thread safety: a UsageKeys is used by one thread at a time (its cipher
// contexts carry per-call state); KAT helpers are stateless.
#ifndef SECMODE_GSS_KCRYPTO_H_
#define SECMODE_GSS_KCRYPTO_H_

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/bytes.h"
#include "common/hmac.h"
#include "common/openssl_handles.h"
#include "common/secret_bytes.h"
#include "common/status.h"
#include "gss/enctype.h"

namespace secmode::gss {

inline constexpr size_t kAesBlock = 16;
inline constexpr size_t kConfounderSize = 16;   // RFC 3962/8009: one block
inline constexpr size_t kMaxChecksumSize = 24;  // SHA-384-192

// The row of `enctype` (gss/enctype.h) when the native engine can do it;
// the error names the enctype and the ones it can do.
common::Result<EnctypeProfile> ProfileFor(int32_t enctype);

// RFC 3961 section 5.1 n-fold of `in` to `out_bits` bits (a multiple of 8).
common::Bytes NFold(common::ByteView in, size_t out_bits);

// RFC 3961 DK / RFC 8009 KDF-HMAC-SHA2: the key for `usage` and `kind`
// (0x99 = Kc, 0xAA = Ke, 0x55 = Ki). For RFC 8009, Ke has the key size and
// Kc/Ki the checksum size (RFC 8009 section 5). Derived keys, and every
// intermediate block of their derivation, are wiped when let go of
// (common::SecretBytes).
common::Result<common::SecretBytes> DeriveUsageKey(const EnctypeProfile& profile,
                                                   common::ByteView base_key, uint32_t usage,
                                                   uint8_t kind);
// The RFC 3961 DK for an arbitrary constant (RFC 3962 string-to-key uses
// "kerberos"); 17/18 only.
common::Result<common::SecretBytes> DeriveKeyDk(const EnctypeProfile& profile,
                                                common::ByteView base_key,
                                                common::ByteView constant);

// String-to-key (RFC 3962 section 4, RFC 8009 section 4); for known answers.
common::Result<common::SecretBytes> StringToKey(const EnctypeProfile& profile,
                                                std::string_view password, common::ByteView salt,
                                                uint32_t iterations);

class UsageKeys {
 public:
  UsageKeys() = default;
  UsageKeys(const UsageKeys&) = delete;
  UsageKeys& operator=(const UsageKeys&) = delete;

  // Derives Ke, Ki, Kc for `usage` from `base_key` and keys the contexts.
  common::Status Init(const EnctypeProfile& profile, common::ByteView base_key, uint32_t usage);
  // Keys the contexts with given Ke/Ki/Kc (known-answer tests start here).
  common::Status InitWithKeys(const EnctypeProfile& profile, common::ByteView ke,
                              common::ByteView ki, common::ByteView kc);
  size_t checksum_size() const { return profile_.checksum_size; }

  // Encrypts in place. buf[0..n) holds confounder | plaintext (n >= 16);
  // `capacity` >= n rounded up to 16 (the tail is used as zero padding).
  // Writes the n ciphertext bytes over buf and the checksum_size() tag to
  // `tag`, which must not overlap buf[0..capacity).
  common::Status EncryptInPlace(uint8_t* buf, size_t n, size_t capacity, uint8_t* tag);

  // Verifies and decrypts `in` = ciphertext | tag. The first 16 plaintext
  // bytes (the confounder) go to `confounder`, the rest to `rest`
  // (in.size() - tag - 16 bytes). Bad tag: kAuthFailed; too short: kCorrupt.
  common::Status Decrypt(common::ByteView in, uint8_t* confounder, uint8_t* rest);

  // Checksum (RFC 3961 get_mic with Kc) over a | b, truncated to h bytes.
  void Checksum(common::ByteView a, common::ByteView b, uint8_t* out);

 private:
  common::Status CbcUpdate(EVP_CIPHER_CTX* ctx, const uint8_t* in, size_t n, uint8_t* out,
                           const char* what);
  // After a failed cipher call the contexts' chain is unknown: both start
  // again from a zero IV.
  common::Status Rechain();
  EnctypeProfile profile_;
  common::OsslPtr<EVP_CIPHER_CTX> enc_;      // Ke, CBC encrypt, no padding
  common::OsslPtr<EVP_CIPHER_CTX> dec_;      // Ke, CBC decrypt, no padding
  common::OsslPtr<EVP_CIPHER_CTX> ecb_dec_;  // Ke, ECB decrypt: CTS's stolen block
  // The last ciphertext block enc_ and dec_ have seen: their chaining values.
  uint8_t enc_chain_[kAesBlock] = {}, dec_chain_[kAesBlock] = {};
  // A sealed message up to this long is decrypted in one CBC call through
  // these (its ciphertext blocks in CBC order, then its plaintext).
  static constexpr size_t kSmallMessage = 1024;
  uint8_t small_in_[kSmallMessage], small_out_[kSmallMessage];
  common::Hmac ki_, kc_;
};

}  // namespace secmode::gss

#endif  // SECMODE_GSS_KCRYPTO_H_
