// SMB 3.x key derivation: the SP800-108 counter-mode KDF with HMAC-SHA256
// (MS-SMB2 3.1.4.2), the SMB 3.1.1 preauth-integrity hash chain (MS-SMB2
// 3.2.5.2 / 3.3.5.4, SHA-512), and the per-dialect labels and contexts that
// turn a GSS session key into signing and cipher keys (MS-SMB2 3.2.5.3.1,
// 3.3.5.5.3).
//
// All functions are pure and thread-safe.
#ifndef SECMODE_SMB_KDF_H_
#define SECMODE_SMB_KDF_H_

#include <cstddef>

#include "common/bytes.h"
#include "common/secret_bytes.h"
#include "common/status.h"
#include "smb/profiles.h"

namespace secmode::smb {

// SP800-108 section 5.1, counter mode, PRF = HMAC-SHA256, r = 32:
//   K(i) = HMAC(key, [i]_32be || label || 0x00 || context || [L]_32be)
// Returns the first out_bits/8 bytes of K(1) || K(2) ... `label` and
// `context` are used exactly as given: MS-SMB2's labels carry their own
// terminating NUL, and the KDF adds the SP800-108 0x00 separator after them.
// out_bits must be a positive multiple of 8, at most 512. The output and
// each K(i) are wiped when let go of (common::SecretBytes).
common::Result<common::SecretBytes> Sp800108HmacSha256(common::ByteView key, common::ByteView label,
                                                       common::ByteView context, size_t out_bits);

// The same KDF computed by OpenSSL 3's EVP_KDF "KBKDF" (mode counter, MAC
// HMAC, digest SHA2-256), used only to cross-check the one above in tests.
common::Result<common::SecretBytes> Sp800108ViaOpenSslKbkdf(common::ByteView key,
                                                            common::ByteView label,
                                                            common::ByteView context,
                                                            size_t out_bits);

// The keys of one SMB session, named by direction so that neither side
// wonders whose "EncryptionKey" is meant: the client's EncryptionKey is
// client_to_server, its DecryptionKey server_to_client. Each is wiped when
// let go of (common::SecretBytes).
struct SessionKeys {
  common::SecretBytes signing;           // 16 bytes
  common::SecretBytes client_to_server;  // cipher key, 16 or 32 bytes
  common::SecretBytes server_to_client;
  common::SecretBytes application;  // 16 bytes
};

// Session.SessionKey: the first 16 bytes of the GSS key, right-padded with
// zeros when shorter (MS-SMB2 3.2.5.3.1).
common::SecretBytes SmbSessionKey(common::ByteView gss_key);

// SMB 2.0.2 / 2.1: the session key signs directly (HMAC-SHA256); there is no
// encryption. Only `signing` is set.
common::Result<SessionKeys> DeriveSmb2Keys(common::ByteView gss_key);

// SMB 3.0 / 3.0.2: labels "SMB2AESCMAC"/"SmbSign", "SMB2AESCCM"/"ServerIn "
// (client-to-server), "SMB2AESCCM"/"ServerOut", "SMB2APP"/"SmbRpc"; 128-bit.
common::Result<SessionKeys> DeriveSmb30Keys(common::ByteView gss_key);

// SMB 3.1.1: labels "SMBSigningKey", "SMBC2SCipherKey", "SMBS2CCipherKey",
// "SMBAppKey", context = the session's 64-byte preauth-integrity hash. For
// the AES-256 ciphers the cipher keys are 256-bit and derived from the full
// GSS key (Session.FullSessionKey) rather than its first 16 bytes.
common::Result<SessionKeys> DeriveSmb311Keys(common::ByteView gss_key,
                                             common::ByteView preauth_hash, CipherId cipher);

// One step of the preauth-integrity chain: hash = SHA-512(hash || message).
// `hash` must be 64 bytes (all zero at the start of a connection).
common::Status UpdatePreauthHash(common::Bytes* hash, common::ByteView message);

}  // namespace secmode::smb

#endif  // SECMODE_SMB_KDF_H_
