#include "smb/kdf.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "common/openssl_error.h"
#include "common/openssl_handles.h"

namespace secmode::smb {

using common::OpenSslError;
using common::OsslPtr;

using common::Bytes;
using common::ByteView;
using common::Result;
using common::SecretBytes;
using common::Status;

namespace {

void PutBe32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

Status CheckKdfArgs(ByteView key, size_t out_bits) {
  if (key.empty()) return Status::InvalidArgument("KDF key is empty");
  if (out_bits == 0 || out_bits % 8 != 0 || out_bits > 512) {
    return Status::InvalidArgument("KDF output of " + std::to_string(out_bits) +
                                   " bits; need a positive multiple of 8 up to 512");
  }
  return Status::Ok();
}

ByteView Label(const char* text_with_nul) {
  // MS-SMB2 labels and contexts include their terminating NUL.
  return ByteView(reinterpret_cast<const uint8_t*>(text_with_nul), strlen(text_with_nul) + 1);
}

}  // namespace

Result<SecretBytes> Sp800108HmacSha256(ByteView key, ByteView label, ByteView context,
                                       size_t out_bits) {
  SECMODE_RETURN_IF_ERROR(CheckKdfArgs(key, out_bits));
  OsslPtr<EVP_MAC> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!mac) return OpenSslError("EVP_MAC_fetch(HMAC)");
  OsslPtr<EVP_MAC_CTX> ctx(EVP_MAC_CTX_new(mac.get()));
  if (!ctx) return OpenSslError("EVP_MAC_CTX_new");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  const uint8_t zero = 0;
  uint8_t length_be[4];
  PutBe32(length_be, static_cast<uint32_t>(out_bits));
  const size_t out_bytes = out_bits / 8;
  SecretBytes out(out_bytes);
  SecretBytes block(size_t{32});  // K(i)
  for (size_t off = 0; off < out_bytes; off += 32) {
    uint8_t counter_be[4];
    PutBe32(counter_be, static_cast<uint32_t>(off / 32 + 1));  // i = 1, 2, ...
    if (EVP_MAC_init(ctx.get(), key.data(), key.size(), params) != 1) {
      return OpenSslError("EVP_MAC_init(HMAC-SHA256)");
    }
    if (EVP_MAC_update(ctx.get(), counter_be, 4) != 1 ||
        EVP_MAC_update(ctx.get(), label.data(), label.size()) != 1 ||
        EVP_MAC_update(ctx.get(), &zero, 1) != 1 ||
        EVP_MAC_update(ctx.get(), context.data(), context.size()) != 1 ||
        EVP_MAC_update(ctx.get(), length_be, 4) != 1) {
      return OpenSslError("EVP_MAC_update(HMAC-SHA256)");
    }
    size_t block_len = 0;
    if (EVP_MAC_final(ctx.get(), block.data(), &block_len, block.size()) != 1 || block_len != 32) {
      return OpenSslError("EVP_MAC_final(HMAC-SHA256)");
    }
    std::memcpy(out.data() + off, block.data(), std::min<size_t>(32, out_bytes - off));
  }
  return out;
}

Result<SecretBytes> Sp800108ViaOpenSslKbkdf(ByteView key, ByteView label, ByteView context,
                                            size_t out_bits) {
  SECMODE_RETURN_IF_ERROR(CheckKdfArgs(key, out_bits));
  OsslPtr<EVP_KDF> kdf(EVP_KDF_fetch(nullptr, "KBKDF", nullptr));
  if (!kdf) return OpenSslError("EVP_KDF_fetch(KBKDF)");
  OsslPtr<EVP_KDF_CTX> ctx(EVP_KDF_CTX_new(kdf.get()));
  if (!ctx) return OpenSslError("EVP_KDF_CTX_new");
  char mode[] = "counter", mac[] = "HMAC", digest[] = "SHA2-256";
  // KBKDF's "separator" (the 0x00 after the label) and "L" are on by default.
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MODE, mode, 0),
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MAC, mac, 0),
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<uint8_t*>(key.data()),
                                        key.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<uint8_t*>(label.data()),
                                        label.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<uint8_t*>(context.data()),
                                        context.size()),
      OSSL_PARAM_construct_end()};
  SecretBytes out(out_bits / 8);
  if (EVP_KDF_derive(ctx.get(), out.data(), out.size(), params) != 1) {
    return OpenSslError("EVP_KDF_derive(KBKDF)");
  }
  return out;
}

SecretBytes SmbSessionKey(ByteView gss_key) {
  SecretBytes key(size_t{16});
  if (!gss_key.empty()) memcpy(key.data(), gss_key.data(), std::min<size_t>(16, gss_key.size()));
  return key;
}

Result<SessionKeys> DeriveSmb2Keys(ByteView gss_key) {
  if (gss_key.empty()) return Status::InvalidArgument("GSS session key is empty");
  SessionKeys keys;
  keys.signing = SmbSessionKey(gss_key);
  return keys;
}

Result<SessionKeys> DeriveSmb30Keys(ByteView gss_key) {
  if (gss_key.empty()) return Status::InvalidArgument("GSS session key is empty");
  const SecretBytes k = SmbSessionKey(gss_key);
  SessionKeys keys;
  // MS-SMB2 3.2.5.3.1 / 3.3.5.5.3, dialects 3.0 and 3.0.2.
  SECMODE_ASSIGN_OR_RETURN(keys.signing,
                           Sp800108HmacSha256(k, Label("SMB2AESCMAC"), Label("SmbSign"), 128));
  SECMODE_ASSIGN_OR_RETURN(keys.client_to_server,
                           Sp800108HmacSha256(k, Label("SMB2AESCCM"), Label("ServerIn "), 128));
  SECMODE_ASSIGN_OR_RETURN(keys.server_to_client,
                           Sp800108HmacSha256(k, Label("SMB2AESCCM"), Label("ServerOut"), 128));
  SECMODE_ASSIGN_OR_RETURN(keys.application,
                           Sp800108HmacSha256(k, Label("SMB2APP"), Label("SmbRpc"), 128));
  return keys;
}

Result<SessionKeys> DeriveSmb311Keys(ByteView gss_key, ByteView preauth_hash, CipherId cipher) {
  if (gss_key.empty()) return Status::InvalidArgument("GSS session key is empty");
  if (preauth_hash.size() != 64) {
    return Status::InvalidArgument("preauth-integrity hash of " +
                                   std::to_string(preauth_hash.size()) +
                                   " bytes; SHA-512 gives 64");
  }
  SECMODE_ASSIGN_OR_RETURN(const CipherProfile* profile, CipherProfileOf(cipher));
  const SecretBytes k = SmbSessionKey(gss_key);
  // AES-256 ciphers: L = 256 and the key is Session.FullSessionKey
  // (MS-SMB2 3.2.5.3.1: "If Connection.CipherId is AES-256-CCM or
  // AES-256-GCM, ... Session.FullSessionKey").
  const bool wide = profile->key_bytes == 32;
  const ByteView cipher_kdk = wide ? gss_key : ByteView(k);
  const size_t cipher_bits = profile->key_bytes * 8;
  SessionKeys keys;
  SECMODE_ASSIGN_OR_RETURN(keys.signing,
                           Sp800108HmacSha256(k, Label("SMBSigningKey"), preauth_hash, 128));
  SECMODE_ASSIGN_OR_RETURN(
      keys.client_to_server,
      Sp800108HmacSha256(cipher_kdk, Label("SMBC2SCipherKey"), preauth_hash, cipher_bits));
  SECMODE_ASSIGN_OR_RETURN(
      keys.server_to_client,
      Sp800108HmacSha256(cipher_kdk, Label("SMBS2CCipherKey"), preauth_hash, cipher_bits));
  SECMODE_ASSIGN_OR_RETURN(keys.application,
                           Sp800108HmacSha256(k, Label("SMBAppKey"), preauth_hash, 128));
  return keys;
}

Status UpdatePreauthHash(Bytes* hash, ByteView message) {
  if (hash == nullptr || hash->size() != 64) {
    return Status::InvalidArgument("preauth-integrity hash must be 64 bytes, got " +
                                   std::to_string(hash == nullptr ? 0 : hash->size()));
  }
  OsslPtr<EVP_MD_CTX> ctx(EVP_MD_CTX_new());
  if (!ctx) return OpenSslError("EVP_MD_CTX_new");
  unsigned int len = 0;
  if (EVP_DigestInit_ex(ctx.get(), EVP_sha512(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), hash->data(), hash->size()) != 1 ||
      EVP_DigestUpdate(ctx.get(), message.data(), message.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), hash->data(), &len) != 1 || len != 64) {
    return OpenSslError("SHA-512 of the preauth-integrity chain");
  }
  return Status::Ok();
}

}  // namespace secmode::smb
