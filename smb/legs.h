// The four Sealer/Opener legs (common/seal.h) of one SMB session, for the
// measured modes smb-plain, smb-sign-*, smb-enc-*.
//
// The payload given to a client leg's Seal becomes the data of a WRITE
// request (MS-SMB2 2.2.21); a server leg's Seal makes it the data of a READ
// response (2.2.20). Openers check the message shape and hand back the data.
//   plain:   the message as is (SMB2 without signing or encryption);
//   sign:    the message signed (SMB2_FLAGS_SIGNED), verified on open, and
//            each opener rejects a repeated MessageId (MessageIdWindow);
//   encrypt: the message sealed in a TRANSFORM_HEADER with the direction's
//            key (client-to-server for requests), unsigned inside as
//            MS-SMB2 3.1.4.3 says.
// Each sealer numbers its messages with its own MessageId counter.
//
// Thread safety: as common/seal.h: one thread per side at a time.
#ifndef SECMODE_SMB_LEGS_H_
#define SECMODE_SMB_LEGS_H_

#include <cstdint>
#include <string>

#include "common/seal.h"
#include "common/status.h"
#include "smb/kdf.h"
#include "smb/signing.h"

namespace secmode::smb {

enum class Protection { kPlain, kSign, kEncrypt };

// One measured SMB mode, parsed once where its name enters (the cli, the
// harness's mode registry, a results.json): the library takes this, never
// the name. `signing` / `cipher` point into the tables of profiles.h.
struct SmbMode {
  Protection protection = Protection::kPlain;
  const SigningProfile* signing = nullptr;  // kSign: the row it signs with; else null
  const CipherProfile* cipher = nullptr;    // kEncrypt: the row it encrypts with; else null
};

// The mode that signs with `a` / encrypts with `c` (its row null when the id
// has none, which CheckSmbMode refuses).
SmbMode SigningMode(SigningAlgorithm a);
SmbMode EncryptingMode(CipherId c);
// Checks that the mode has the row its protection needs.
common::Status CheckSmbMode(const SmbMode& mode);

// "smb-plain", "smb-sign-hmac-sha256", "smb-sign-aes-cmac",
// "smb-sign-aes-gmac", "smb-enc-aes-128-ccm", ... (the rows' `mode`) ->
// SmbMode, and back.
common::Result<SmbMode> ParseSmbModeName(const std::string& family);
const char* SmbModeName(const SmbMode& mode);
// Every mode name, for a help text: "smb-plain, ..., smb-enc-aes-256-gcm".
std::string SmbModeNames();

// The dialect a session of `mode` runs: 2.1 for HMAC-SHA256 signing (the
// dialect whose signing that is), 3.1.1 for everything else.
uint16_t SmbModeDialect(const SmbMode& mode);

// The legs for `mode` from already-derived keys. For kEncrypt the keys'
// cipher keys must fit mode.cipher.
common::Result<common::Association> MakeSmbAssociation(const SmbMode& mode, const SessionKeys& keys,
                                                       uint64_t session_id);

// Derives the keys a session of `mode` uses from the GSS session key the
// way the dialect that offers the mode does: HMAC-SHA256 signing with
// SMB 2.1 keys, everything else with SMB 3.1.1 keys (preauth hash given).
common::Result<SessionKeys> DeriveKeysForMode(const SmbMode& mode, common::ByteView gss_key,
                                              common::ByteView preauth_hash);

// A preauth-integrity hash for a measured session: the SHA-512 chain
// (MS-SMB2 3.2.5.2) over generated NEGOTIATE and SESSION_SETUP request and
// response messages carrying `gss_token_hash` (so each session's keys are
// distinct). The cost being measured does not depend on its value.
common::Result<common::Bytes> SyntheticPreauthHash(common::ByteView gss_token_hash);

}  // namespace secmode::smb

#endif  // SECMODE_SMB_LEGS_H_
