#include "smb/profiles.h"

#include <openssl/core_names.h>

#include <cstdio>
#include <string>

#include "smb/client_messages.h"

namespace secmode::smb {

using common::Result;
using common::Status;

namespace {

// clang-format off
constexpr CipherProfile kCipherProfiles[] = {
    // id                   name           mode                   EVP name       key nonce AEAD
    {CipherId::kAes128Ccm, "aes-128-ccm", "smb-enc-aes-128-ccm", "AES-128-CCM", 16, 11, Aead::kCcm},
    {CipherId::kAes128Gcm, "aes-128-gcm", "smb-enc-aes-128-gcm", "AES-128-GCM", 16, 12, Aead::kGcm},
    {CipherId::kAes256Ccm, "aes-256-ccm", "smb-enc-aes-256-ccm", "AES-256-CCM", 32, 11, Aead::kCcm},
    {CipherId::kAes256Gcm, "aes-256-gcm", "smb-enc-aes-256-gcm", "AES-256-GCM", 32, 12, Aead::kGcm},
};

constexpr SigningProfile kSigningProfiles[] = {
    // id                            name            mode                    dialect      EVP MAC  its parameter                     key
    {SigningAlgorithm::kHmacSha256, "hmac-sha256",  "smb-sign-hmac-sha256", kDialect210, "HMAC",  OSSL_MAC_PARAM_DIGEST, "SHA256",      0},
    {SigningAlgorithm::kAesCmac,    "aes-128-cmac", "smb-sign-aes-cmac",    kDialect311, "CMAC",  OSSL_MAC_PARAM_CIPHER, "AES-128-CBC", 16},
    {SigningAlgorithm::kAesGmac,    "aes-128-gmac", "smb-sign-aes-gmac",    kDialect311, nullptr, nullptr,               "AES-128-GCM", 16},
};
// clang-format on

const CipherProfile* FindCipher(uint16_t raw) {
  for (const CipherProfile& c : kCipherProfiles) {
    if (static_cast<uint16_t>(c.id) == raw) return &c;
  }
  return nullptr;
}

const SigningProfile* FindSigning(SigningAlgorithm id) {
  for (const SigningProfile& s : kSigningProfiles) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

std::string Hex16(uint16_t v) {
  char buf[8];
  snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}

}  // namespace

std::span<const CipherProfile> CipherProfiles() { return kCipherProfiles; }
std::span<const SigningProfile> SigningProfiles() { return kSigningProfiles; }

Result<const CipherProfile*> ParseCipherId(uint16_t raw) {
  if (const CipherProfile* c = FindCipher(raw)) return c;
  std::string known;
  for (const CipherProfile& c : kCipherProfiles) {
    known += (known.empty() ? "" : ", ") + Hex16(static_cast<uint16_t>(c.id));
  }
  return Status::InvalidArgument("unknown cipher id " + Hex16(raw) + " (known: " + known + ")");
}

Result<const CipherProfile*> CipherProfileOf(CipherId id) {
  return ParseCipherId(static_cast<uint16_t>(id));
}

Result<const SigningProfile*> SigningProfileOf(SigningAlgorithm id) {
  if (const SigningProfile* s = FindSigning(id)) return s;
  return Status::InvalidArgument("unknown signing algorithm " +
                                 std::to_string(static_cast<int>(id)));
}

const char* CipherName(CipherId id) {
  const CipherProfile* c = FindCipher(static_cast<uint16_t>(id));
  return c ? c->name : "unknown";
}

size_t CipherKeyBytes(CipherId id) {
  const CipherProfile* c = FindCipher(static_cast<uint16_t>(id));
  return c ? c->key_bytes : 0;
}

size_t NonceBytes(CipherId id) {
  const CipherProfile* c = FindCipher(static_cast<uint16_t>(id));
  return c ? c->nonce_bytes : 0;
}

const char* SigningAlgorithmName(SigningAlgorithm a) {
  const SigningProfile* s = FindSigning(a);
  return s ? s->name : "unknown";
}

}  // namespace secmode::smb
