// ContextPair: a real initiator/acceptor GSS-API krb5 context pair,
// established in-process against a Realm for one chosen enctype.
//
// Flags requested: mutual authentication, integrity, confidentiality, replay
// and sequence detection. The enctype is forced by restricting the
// initiator's credential (gss_krb5_set_allowable_enctypes), so the service
// ticket's session key and the acceptor subkey are of that enctype; the pair
// checks it after establishment.
//
// Thread safety: the two contexts are independent; each is used by one thread
// at a time. The pair owns both contexts; initiator()/acceptor() lend one,
// Release*() hands one over (to a Protector, which then owns it).
#ifndef SECMODE_GSS_CONTEXT_PAIR_H_
#define SECMODE_GSS_CONTEXT_PAIR_H_

#include <gssapi/gssapi.h>

#include <memory>
#include <utility>

#include "common/bytes.h"
#include "common/secret_bytes.h"
#include "common/status.h"
#include "gss/enctype.h"
#include "gss/gss_handles.h"
#include "gss/realm.h"

namespace secmode::gss {

// The context's session key as gss_inquire_sec_context_by_oid
// (GSS_C_INQ_SSPI_SESSION_KEY) gives it: the acceptor subkey when there is
// one, which is what a Kerberos-authenticated SMB session uses. The copy
// GSS-API handed over is wiped once `key` holds it; `key` wipes itself.
struct SessionKey {
  common::SecretBytes key;
  int32_t enctype = 0;
};
common::Result<SessionKey> InquireSessionKey(gss_ctx_id_t context);

class ContextPair {
 public:
  // A failure caused by the realm's KDC names it (Realm::ExplainKdcFailure).
  static common::Result<std::unique_ptr<ContextPair>> Establish(const Realm& realm,
                                                                Enctype enctype);
  ContextPair(const ContextPair&) = delete;
  ContextPair& operator=(const ContextPair&) = delete;

  gss_ctx_id_t initiator() const { return initiator_.get(); }
  gss_ctx_id_t acceptor() const { return acceptor_.get(); }
  Enctype enctype() const { return enctype_; }
  // Round trips of tokens it took (1 with mutual auth: AP-REQ, AP-REP).
  int round_trips() const { return round_trips_; }

  // The pair no longer holds the context afterwards.
  ContextPtr ReleaseInitiator() { return std::move(initiator_); }
  ContextPtr ReleaseAcceptor() { return std::move(acceptor_); }

 private:
  ContextPair() = default;
  static common::Result<std::unique_ptr<ContextPair>> EstablishOnce(const Realm& realm,
                                                                    Enctype enctype);
  ContextPtr initiator_;
  ContextPtr acceptor_;
  Enctype enctype_ = kDefaultEnctype;
  int round_trips_ = 0;
};

}  // namespace secmode::gss

#endif  // SECMODE_GSS_CONTEXT_PAIR_H_
