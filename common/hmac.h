// Hmac: HMAC-SHA1/256/384 (RFC 2104) keyed once and reused per message, for
// the per-message paths of Kerberos (gss/kcrypto) and SMB 2.x signing.
//
// HMAC over a SHA-1/256/384 state captured after the inner and outer key
// pads, so each message costs only the hash of its own bytes plus two state
// copies. OpenSSL 3.0's EVP_MAC/HMAC re-init duplicates the digest context
// on the heap per message, which the per-message path must not do; this
// class uses OpenSSL's own SHA implementations (the same code EVP runs),
// only the two-line HMAC construction is ours, and tests cross-check it
// against EVP_MAC for every hash.
//
// An Hmac is a plain value that owns no heap memory. Its inner and outer
// pad states are as good as the key: the destructor wipes them, and the
// working state, with OPENSSL_cleanse (Init wipes its own key pads). A copy
// wipes its own. Thread safety: one thread at a time (Start/Update/Finish
// share the working state).
#ifndef SECMODE_COMMON_HMAC_H_
#define SECMODE_COMMON_HMAC_H_

#include <openssl/sha.h>

#include <cstddef>
#include <cstdint>

#include "common/bytes.h"
#include "common/status.h"

namespace secmode::common {

enum class HashKind { kSha1, kSha256, kSha384 };

// "SHA1", "SHA256", "SHA384": the names OpenSSL's fetch calls take.
const char* HashName(HashKind hash);

class Hmac {
 public:
  Hmac() = default;
  Hmac(const Hmac&) = default;
  Hmac& operator=(const Hmac&) = default;
  ~Hmac();
  Status Init(HashKind hash, ByteView key);
  void Start();  // begin a message (reuses the key)
  void Update(const uint8_t* data, size_t size);
  // Writes the full digest (20/32/48 bytes) to `out`.
  void Finish(uint8_t* out);
  size_t digest_size() const;

 private:
  union State {
    SHA_CTX sha1;
    SHA256_CTX sha256;
    SHA512_CTX sha512;
  };
  HashKind hash_ = HashKind::kSha1;
  State inner_{}, outer_{}, work_{};
};

}  // namespace secmode::common

#endif  // SECMODE_COMMON_HMAC_H_
