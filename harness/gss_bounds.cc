#include "harness/gss_bounds.h"

#include <string>

namespace secmode::harness {

using common::Status;

Status BoundRunner::Init(gss::Enctype enctype) {
  SECMODE_ASSIGN_OR_RETURN(profile_, gss::ProfileFor(static_cast<int32_t>(enctype)));
  const common::Bytes key = common::PatternBytes(profile_.key_size, 77);
  const uint8_t iv[16] = {};
  enc_.reset(EVP_CIPHER_CTX_new());
  dec_.reset(EVP_CIPHER_CTX_new());
  if (enc_ == nullptr || dec_ == nullptr ||
      EVP_EncryptInit_ex(enc_.get(), profile_.cbc(), nullptr, key.data(), iv) != 1 ||
      EVP_CIPHER_CTX_set_padding(enc_.get(), 0) != 1 ||
      EVP_DecryptInit_ex(dec_.get(), profile_.cbc(), nullptr, key.data(), iv) != 1 ||
      EVP_CIPHER_CTX_set_padding(dec_.get(), 0) != 1) {
    return Status::Internal("AES-CBC setup failed for the bound");
  }
  return hmac_.Init(profile_.hash, common::PatternBytes(profile_.checksum_size, 78));
}

Status BoundRunner::Run(BoundOp op, uint8_t* buf, size_t n) {
  if (n % 16 != 0) return Status::InvalidArgument("bound size must be a multiple of 16");
  const uint8_t iv[16] = {};
  auto cipher = [&](EVP_CIPHER_CTX* ctx) -> Status {
    int outl = 0;
    if (EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, iv, -1) != 1 ||
        EVP_CipherUpdate(ctx, buf, &outl, buf, static_cast<int>(n)) != 1) {
      return Status::Internal("AES-CBC failed in the bound");
    }
    return Status::Ok();
  };
  auto mac = [&] {
    uint8_t out[64];
    hmac_.Start();
    hmac_.Update(buf, n);
    hmac_.Finish(out);
    buf[0] ^= out[0];  // keep the result live
  };
  switch (op) {
    case BoundOp::kCbcEncrypt: return cipher(enc_.get());
    case BoundOp::kCbcDecrypt: return cipher(dec_.get());
    case BoundOp::kHmac: mac(); return Status::Ok();
    case BoundOp::kCbcEncryptHmac:
      SECMODE_RETURN_IF_ERROR(cipher(enc_.get()));
      mac();
      return Status::Ok();
    case BoundOp::kCbcDecryptHmac:
      SECMODE_RETURN_IF_ERROR(cipher(dec_.get()));
      mac();
      return Status::Ok();
  }
  return Status::InvalidArgument("unknown bound op");
}

std::string BoundRunner::Name(BoundOp op) const {
  const std::string aes = profile_.key_size == 16 ? "aes128" : "aes256";
  std::string hmac;
  switch (profile_.hash) {
    case common::HashKind::kSha1: hmac = "hmac-sha1-96"; break;
    case common::HashKind::kSha256: hmac = "hmac-sha256-128"; break;
    case common::HashKind::kSha384: hmac = "hmac-sha384-192"; break;
  }
  switch (op) {
    case BoundOp::kCbcEncrypt: return aes + "-cbc-encrypt";
    case BoundOp::kCbcDecrypt: return aes + "-cbc-decrypt";
    case BoundOp::kHmac: return hmac;
    case BoundOp::kCbcEncryptHmac: return aes + "-cbc-encrypt+" + hmac;
    case BoundOp::kCbcDecryptHmac: return aes + "-cbc-decrypt+" + hmac;
  }
  return "?";
}

}  // namespace secmode::harness
