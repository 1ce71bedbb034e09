// The SHA-1/256/384 block functions below are OpenSSL's own (deprecated in
// 3.0 only in favour of EVP, which heap-allocates per HMAC re-init); see the
// comment in hmac.h.
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "common/hmac.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <cstring>
#include <string>

namespace secmode::common {

namespace {

size_t FullDigestSize(HashKind h) {
  switch (h) {
    case HashKind::kSha1: return SHA_DIGEST_LENGTH;
    case HashKind::kSha256: return SHA256_DIGEST_LENGTH;
    case HashKind::kSha384: return SHA384_DIGEST_LENGTH;
  }
  return 0;
}

size_t HashBlockSize(HashKind h) { return h == HashKind::kSha384 ? 128 : 64; }

}  // namespace

const char* HashName(HashKind h) {
  switch (h) {
    case HashKind::kSha1: return "SHA1";
    case HashKind::kSha256: return "SHA256";
    case HashKind::kSha384: return "SHA384";
  }
  return "?";
}

Hmac::~Hmac() {
  OPENSSL_cleanse(&inner_, sizeof inner_);
  OPENSSL_cleanse(&outer_, sizeof outer_);
  OPENSSL_cleanse(&work_, sizeof work_);
}

Status Hmac::Init(HashKind hash, ByteView key) {
  hash_ = hash;
  const size_t block = HashBlockSize(hash);
  uint8_t k[128] = {};
  if (key.size() > block) {
    // RFC 2104: keys longer than a block are hashed first. Kerberos keys
    // never are, but the class should not silently misbehave.
    switch (hash) {
      case HashKind::kSha1: SHA1(key.data(), key.size(), k); break;
      case HashKind::kSha256: SHA256(key.data(), key.size(), k); break;
      case HashKind::kSha384: SHA384(key.data(), key.size(), k); break;
    }
  } else {
    std::memcpy(k, key.data(), key.size());
  }
  uint8_t ipad[128], opad[128];
  for (size_t i = 0; i < block; ++i) {
    ipad[i] = k[i] ^ 0x36;
    opad[i] = k[i] ^ 0x5c;
  }
  int ok = 1;
  switch (hash) {
    case HashKind::kSha1:
      ok &= SHA1_Init(&inner_.sha1) & SHA1_Update(&inner_.sha1, ipad, block);
      ok &= SHA1_Init(&outer_.sha1) & SHA1_Update(&outer_.sha1, opad, block);
      break;
    case HashKind::kSha256:
      ok &= SHA256_Init(&inner_.sha256) & SHA256_Update(&inner_.sha256, ipad, block);
      ok &= SHA256_Init(&outer_.sha256) & SHA256_Update(&outer_.sha256, opad, block);
      break;
    case HashKind::kSha384:
      ok &= SHA384_Init(&inner_.sha512) & SHA384_Update(&inner_.sha512, ipad, block);
      ok &= SHA384_Init(&outer_.sha512) & SHA384_Update(&outer_.sha512, opad, block);
      break;
  }
  OPENSSL_cleanse(k, sizeof k);
  OPENSSL_cleanse(ipad, sizeof ipad);
  OPENSSL_cleanse(opad, sizeof opad);
  if (ok != 1) return Status::Internal(std::string("HMAC-") + HashName(hash) + " key setup failed");
  return Status::Ok();
}

void Hmac::Start() { work_ = inner_; }

void Hmac::Update(const uint8_t* data, size_t size) {
  if (size == 0) return;
  // The SHA*_Update functions cannot fail for in-memory input.
  switch (hash_) {
    case HashKind::kSha1: SHA1_Update(&work_.sha1, data, size); break;
    case HashKind::kSha256: SHA256_Update(&work_.sha256, data, size); break;
    case HashKind::kSha384: SHA384_Update(&work_.sha512, data, size); break;
  }
}

void Hmac::Finish(uint8_t* out) {
  uint8_t inner[SHA384_DIGEST_LENGTH];
  const size_t n = FullDigestSize(hash_);
  switch (hash_) {
    case HashKind::kSha1:
      SHA1_Final(inner, &work_.sha1);
      work_ = outer_;
      SHA1_Update(&work_.sha1, inner, n);
      SHA1_Final(out, &work_.sha1);
      break;
    case HashKind::kSha256:
      SHA256_Final(inner, &work_.sha256);
      work_ = outer_;
      SHA256_Update(&work_.sha256, inner, n);
      SHA256_Final(out, &work_.sha256);
      break;
    case HashKind::kSha384:
      SHA384_Final(inner, &work_.sha512);
      work_ = outer_;
      SHA384_Update(&work_.sha512, inner, n);
      SHA384_Final(out, &work_.sha512);
      break;
  }
}

size_t Hmac::digest_size() const { return FullDigestSize(hash_); }

}  // namespace secmode::common
