// OsslPtr<T>: the one way secmode owns an OpenSSL object. OpenSslFree has an
// overload per type the project creates, each calling that type's *_free, so
// `OsslPtr<EVP_CIPHER_CTX> ctx(EVP_CIPHER_CTX_new());` frees on every path
// and a member needs no destructor. Pass `.get()` to OpenSSL calls; the
// pointer stays owned. Static objects (EVP_sha256(), EVP_aes_128_cbc()) are
// not owned and are never put in an OsslPtr.
//
// Thread safety: that of the owned object. Contexts (*_CTX) are used by one
// thread at a time; fetched algorithms (EVP_CIPHER, EVP_MAC, ...) are
// reference counted and may be read from several threads.
#ifndef SECMODE_COMMON_OPENSSL_HANDLES_H_
#define SECMODE_COMMON_OPENSSL_HANDLES_H_

#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <memory>

namespace secmode::common {

struct OpenSslFree {
  void operator()(EVP_CIPHER_CTX* p) const { EVP_CIPHER_CTX_free(p); }
  void operator()(EVP_CIPHER* p) const { EVP_CIPHER_free(p); }
  void operator()(EVP_MAC_CTX* p) const { EVP_MAC_CTX_free(p); }
  void operator()(EVP_MAC* p) const { EVP_MAC_free(p); }
  void operator()(EVP_KDF_CTX* p) const { EVP_KDF_CTX_free(p); }
  void operator()(EVP_KDF* p) const { EVP_KDF_free(p); }
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
  void operator()(EVP_MD* p) const { EVP_MD_free(p); }
};

template <typename T>
using OsslPtr = std::unique_ptr<T, OpenSslFree>;

}  // namespace secmode::common

#endif  // SECMODE_COMMON_OPENSSL_HANDLES_H_
