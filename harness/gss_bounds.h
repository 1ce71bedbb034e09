// Primitive bounds for the krb5 engines: what OpenSSL alone costs for the
// bytes an RFC 3961 encryption touches, so a report can say how close an
// engine gets. Shared by bench/gss_bench (Google Benchmark) and the
// `secmode run` gss section.
//
//   cbc-encrypt / cbc-decrypt   EVP AES-CBC over n bytes, IV reset per op
//   hmac                        HMAC-SHA1/256/384 over n bytes (OpenSSL's SHA
//                               with precomputed pads, common/hmac.h - the
//                               cheapest OpenSSL path per message)
//   cbc-encrypt+hmac            the seal bound of one enctype: both, in turn
//   cbc-decrypt+hmac            the open bound
// n must be a multiple of 16 (all benchmark sizes are).
// Thread safety: a BoundRunner is used by one thread at a time.
#ifndef SECMODE_HARNESS_GSS_BOUNDS_H_
#define SECMODE_HARNESS_GSS_BOUNDS_H_

#include <openssl/evp.h>

#include <string>

#include "common/bytes.h"
#include "common/hmac.h"
#include "common/openssl_handles.h"
#include "common/status.h"
#include "gss/enctype.h"
#include "gss/kcrypto.h"

namespace secmode::harness {

enum class BoundOp { kCbcEncrypt, kCbcDecrypt, kHmac, kCbcEncryptHmac, kCbcDecryptHmac };

class BoundRunner {
 public:
  BoundRunner() = default;

  // Keys AES (the enctype's key size) and HMAC (its hash) with fixed keys.
  common::Status Init(gss::Enctype enctype);
  // Runs `op` once over buf[0..n) (in place for the cipher).
  common::Status Run(BoundOp op, uint8_t* buf, size_t n);
  // "aes256-cbc-encrypt+hmac-sha1-96", "hmac-sha384-192", "aes128-cbc-decrypt".
  std::string Name(BoundOp op) const;

 private:
  gss::EnctypeProfile profile_;
  common::OsslPtr<EVP_CIPHER_CTX> enc_, dec_;
  common::Hmac hmac_;
};

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_GSS_BOUNDS_H_
