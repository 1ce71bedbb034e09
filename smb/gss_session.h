// The measured SMB modes' sessions: a real Kerberos-authenticated session
// key, as an SMB client and server get it, turned into the legs of a mode.
//
// MakeKerberosSmbAssociation establishes a GSS krb5 context pair in the
// throwaway realm (aes256-cts-hmac-sha1-96, as Windows negotiates by
// default), queries both sides' session keys with
// gss_inquire_sec_context_by_oid(GSS_C_INQ_SSPI_SESSION_KEY) (the acceptor
// subkey, MS-KILE), checks they agree, derives the mode's keys
// (legs.h: DeriveKeysForMode) and builds the four legs. The GSS contexts are
// released afterwards: SMB3 never uses them for per-message work.
//
// Thread safety: like ContextPair::Establish, one call at a time per realm is
// the tested use.
#ifndef SECMODE_SMB_GSS_SESSION_H_
#define SECMODE_SMB_GSS_SESSION_H_

#include "common/seal.h"
#include "common/secret_bytes.h"
#include "common/status.h"
#include "gss/realm.h"
#include "smb/kdf.h"
#include "smb/legs.h"

namespace secmode::smb {

// The keys are wiped when the session is let go of (common::SecretBytes).
struct KerberosSmbSession {
  common::SecretBytes gss_key;  // what GSS_C_INQ_SSPI_SESSION_KEY returned
  SessionKeys keys;
  uint64_t session_id = 0;
};

// Establishes the context pair and derives the keys for `mode`.
common::Result<KerberosSmbSession> EstablishKerberosSmbSession(const SmbMode& mode,
                                                               const gss::Realm& realm);

common::Result<common::Association> MakeKerberosSmbAssociation(const SmbMode& mode,
                                                               const gss::Realm& realm);

}  // namespace secmode::smb

#endif  // SECMODE_SMB_GSS_SESSION_H_
