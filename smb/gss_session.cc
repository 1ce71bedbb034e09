#include "smb/gss_session.h"

#include <openssl/evp.h>

#include <atomic>
#include <utility>

#include "gss/context_pair.h"
#include "smb/legs.h"

namespace secmode::smb {

using common::Result;
using common::Status;

Result<KerberosSmbSession> EstablishKerberosSmbSession(const SmbMode& mode,
                                                       const gss::Realm& realm) {
  SECMODE_RETURN_IF_ERROR(CheckSmbMode(mode));
  SECMODE_ASSIGN_OR_RETURN(auto pair, gss::ContextPair::Establish(realm, gss::kDefaultEnctype));
  SECMODE_ASSIGN_OR_RETURN(gss::SessionKey client_key, gss::InquireSessionKey(pair->initiator()));
  SECMODE_ASSIGN_OR_RETURN(gss::SessionKey server_key, gss::InquireSessionKey(pair->acceptor()));
  if (client_key.key != server_key.key || client_key.key.empty()) {
    return Status::Internal("initiator and acceptor report different GSS session keys (" +
                            std::to_string(client_key.key.size()) + " and " +
                            std::to_string(server_key.key.size()) + " bytes)");
  }
  KerberosSmbSession session;
  session.gss_key = std::move(client_key.key);
  // The preauth hash's input: a digest of the session key stands in for the
  // SESSION_SETUP messages (which carry the GSS tokens) so each session's
  // context differs, as it does on the wire.
  uint8_t digest[32];
  unsigned int digest_len = 0;
  if (EVP_Digest(session.gss_key.data(), session.gss_key.size(), digest, &digest_len, EVP_sha256(),
                 nullptr) != 1) {
    return Status::Internal("SHA-256 of the session key failed");
  }
  SECMODE_ASSIGN_OR_RETURN(common::Bytes preauth,
                           SyntheticPreauthHash(common::ByteView(digest, digest_len)));
  SECMODE_ASSIGN_OR_RETURN(session.keys, DeriveKeysForMode(mode, session.gss_key, preauth));
  // SessionIds as Windows servers hand them out (0x0000_1000_0000_00xx).
  static std::atomic<uint64_t> next_session{0x25};
  session.session_id = 0x0000100000000000ull | next_session.fetch_add(1);
  return session;
}

Result<common::Association> MakeKerberosSmbAssociation(const SmbMode& mode,
                                                       const gss::Realm& realm) {
  SECMODE_ASSIGN_OR_RETURN(KerberosSmbSession session, EstablishKerberosSmbSession(mode, realm));
  return MakeSmbAssociation(mode, session.keys, session.session_id);
}

}  // namespace secmode::smb
