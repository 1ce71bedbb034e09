// The SMB3 ciphers and signing algorithms, one row each, in the style of
// MIT krb5's krb5int_enctypes_list[] (src/lib/crypto/krb/etypes.c): every
// fact about an algorithm that the KDF, the transform, the signers, the
// client, the legs, the harness and the benches need is in its row, and they
// read it here instead of switching on the id.
//
// Adding a cipher is: its CipherId and one row in kCipherProfiles
// (profiles.cc), its mode in harness/modes.cc, and a known-answer test in
// tests/smb/known_answer_test.cc. Everything that lists the ciphers
// (parsing mode names and wire ids, the transform's OpenSSL set-up, the
// "smb" section's bounds, smb_bench) walks the table.
//
// The tables are constant, ordered by wire id, and hold every value of
// CipherId and SigningAlgorithm exactly once. All functions are pure and
// thread-safe; the rows they return live as long as the process.
#ifndef SECMODE_SMB_PROFILES_H_
#define SECMODE_SMB_PROFILES_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/status.h"

namespace secmode::smb {

// Cipher ids as SMB2_ENCRYPTION_CAPABILITIES carries them (MS-SMB2 2.2.3.1.2).
enum class CipherId : uint16_t {
  kAes128Ccm = 0x0001,
  kAes128Gcm = 0x0002,
  kAes256Ccm = 0x0003,
  kAes256Gcm = 0x0004,
};

// How the AEAD is driven through OpenSSL: CCM is single-shot (the length is
// given before the AAD, the tag length set before the key); GCM streams (as
// does any AEAD OpenSSL drives the way it drives GCM).
enum class Aead { kCcm, kGcm };

struct CipherProfile {
  CipherId id;
  const char* name;      // "aes-128-gcm" (logs, errors, the "smb" section's rows)
  const char* mode;      // "smb-enc-aes-128-gcm": the mode that encrypts with it
  const char* evp_name;  // OpenSSL's EVP_CIPHER_fetch name, "AES-128-GCM"
  size_t key_bytes;      // 16, or 32: derived from the full GSS key (MS-SMB2 3.2.5.3.1)
  size_t nonce_bytes;    // the used part of the 16-byte Nonce field: 11 (CCM), 12 (GCM)
  Aead aead;
};

// Signing algorithm ids as SMB2_SIGNING_CAPABILITIES carries them (MS-SMB2
// 2.2.3.1.7). SMB 2.x signs with HMAC-SHA256 without negotiating it.
enum class SigningAlgorithm : uint16_t {
  kHmacSha256 = 0x0000,
  kAesCmac = 0x0001,
  kAesGmac = 0x0002,
};

struct SigningProfile {
  SigningAlgorithm id;
  const char* name;  // "aes-128-cmac" (logs, errors)
  const char* mode;  // "smb-sign-aes-cmac": the mode that signs with it
  // The dialect a client offers for this mode: 0x0210 for HMAC-SHA256 (SMB
  // 2.1), 0x0311 for the others (their keys from the preauth hash).
  uint16_t dialect;
  // The raw OpenSSL primitive under it: an EVP_MAC ("HMAC", "CMAC") with
  // the parameter that names its digest or cipher (OSSL_MAC_PARAM_DIGEST
  // "SHA256", OSSL_MAC_PARAM_CIPHER "AES-128-CBC"), or (evp_mac null) the
  // AEAD cipher evp_param whose tag over the message as AAD is the signature
  // (GMAC: "AES-128-GCM").
  const char* evp_mac;
  const char* evp_param_name;
  const char* evp_param;
  size_t key_bytes;  // 16; 0 = any non-empty length (HMAC)
};

std::span<const CipherProfile> CipherProfiles();
std::span<const SigningProfile> SigningProfiles();

// The row of a wire id (or of a CipherId cast from one); the error names the
// id.
common::Result<const CipherProfile*> ParseCipherId(uint16_t raw);
common::Result<const CipherProfile*> CipherProfileOf(CipherId id);
common::Result<const SigningProfile*> SigningProfileOf(SigningAlgorithm id);

// Readers of one field, for an id that may be unknown: the row's value, or
// "unknown" / 0 when there is no row.
const char* CipherName(CipherId id);                   // "aes-128-ccm", ...
size_t CipherKeyBytes(CipherId id);                    // 16 or 32
size_t NonceBytes(CipherId id);                        // 11 or 12
const char* SigningAlgorithmName(SigningAlgorithm a);  // "hmac-sha256", ...

}  // namespace secmode::smb

#endif  // SECMODE_SMB_PROFILES_H_
