#include "gss/context_pair.h"

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>
#include <openssl/crypto.h>

#include <atomic>
#include <string>

#include "common/clock.h"
#include "gss/gss_error.h"
#include "gss/gss_handles.h"
#include "gss/private_ccache.h"

namespace secmode::gss {

using common::Result;
using common::Status;

namespace {

Result<NamePtr> ImportName(const std::string& text, gss_OID type) {
  gss_buffer_desc buf{text.size(), const_cast<char*>(text.data())};
  OM_uint32 minor = 0;
  NamePtr name;
  OM_uint32 major = gss_import_name(&minor, &buf, type, Out(name));
  if (GSS_ERROR(major)) return GssError("gss_import_name(" + text + ")", major, minor);
  return name;
}

}  // namespace

Result<SessionKey> InquireSessionKey(gss_ctx_id_t context) {
  OM_uint32 minor = 0;
  BufferSetPtr data;
  OM_uint32 major =
      gss_inquire_sec_context_by_oid(&minor, context, GSS_C_INQ_SSPI_SESSION_KEY, Out(data));
  if (GSS_ERROR(major))
    return GssError("gss_inquire_sec_context_by_oid(session key)", major, minor);
  if (!data || data->count < 1) {
    return Status::Internal("GSS_C_INQ_SSPI_SESSION_KEY returned no key");
  }
  SessionKey out;
  auto* key = static_cast<uint8_t*>(data->elements[0].value);
  out.key.Assign(common::ByteView(key, data->elements[0].length));
  // gss_release_buffer_set frees without wiping.
  if (key != nullptr) OPENSSL_cleanse(key, data->elements[0].length);
  // MIT appends the enctype as the last arc of OID 1.2.840.113554.1.2.2.4.<enctype>;
  // the AES enctypes (17..20) encode as one byte.
  if (data->count >= 2 && data->elements[1].length > 0) {
    const auto* oid = static_cast<const uint8_t*>(data->elements[1].value);
    out.enctype = oid[data->elements[1].length - 1];
  }
  return out;
}

Result<std::unique_ptr<ContextPair>> ContextPair::Establish(const Realm& realm, Enctype enctype) {
  auto pair = EstablishOnce(realm, enctype);
  if (!pair.ok()) return realm.ExplainKdcFailure(pair.status());
  return pair;
}

Result<std::unique_ptr<ContextPair>> ContextPair::EstablishOnce(const Realm& realm,
                                                                Enctype enctype) {
  std::unique_ptr<ContextPair> pair(new ContextPair());
  pair->enctype_ = enctype;
  // A private copy of the TGT, so a service ticket cached for one enctype is
  // never reused for another.
  PrivateCcache private_ccache;
  SECMODE_RETURN_IF_ERROR(private_ccache.Make(realm.ccache()));
  const std::string& ccache = private_ccache.name();

  OM_uint32 major, minor = 0;
  SECMODE_ASSIGN_OR_RETURN(
      NamePtr user,
      ImportName(realm.user_principal(), const_cast<gss_OID>(GSS_KRB5_NT_PRINCIPAL_NAME)));
  SECMODE_ASSIGN_OR_RETURN(
      NamePtr service,
      ImportName(realm.service_principal(), const_cast<gss_OID>(GSS_KRB5_NT_PRINCIPAL_NAME)));
  SECMODE_ASSIGN_OR_RETURN(NamePtr target,
                           ImportName(realm.service_hostbased(), GSS_C_NT_HOSTBASED_SERVICE));

  gss_OID_set_desc mechs{1, const_cast<gss_OID>(gss_mech_krb5)};
  CredPtr icred, acred;
  std::string keytab = "FILE:" + realm.service_keytab();
  gss_key_value_element_desc ielems[] = {{"ccache", ccache.c_str()}};
  gss_key_value_set_desc istore{1, ielems};
  major = gss_acquire_cred_from(&minor, user.get(), GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE,
                                &istore, Out(icred), nullptr, nullptr);
  if (GSS_ERROR(major))
    return GssError("gss_acquire_cred_from(initiator " + ccache + ")", major, minor);
  krb5_enctype allowed = static_cast<krb5_enctype>(enctype);
  major = gss_krb5_set_allowable_enctypes(&minor, icred.get(), 1, &allowed);
  if (GSS_ERROR(major)) return GssError("gss_krb5_set_allowable_enctypes", major, minor);
  gss_key_value_element_desc aelems[] = {{"keytab", keytab.c_str()}};
  gss_key_value_set_desc astore{1, aelems};
  major = gss_acquire_cred_from(&minor, service.get(), GSS_C_INDEFINITE, &mechs, GSS_C_ACCEPT,
                                &astore, Out(acred), nullptr, nullptr);
  if (GSS_ERROR(major))
    return GssError("gss_acquire_cred_from(acceptor " + keytab + ")", major, minor);

  const OM_uint32 flags = GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG |
                          GSS_C_REPLAY_FLAG | GSS_C_SEQUENCE_FLAG;
  OM_uint32 init_major = GSS_S_CONTINUE_NEEDED, accept_major = GSS_S_CONTINUE_NEEDED;
  BufferHandle to_acceptor, to_initiator;
  for (int round = 0; round < 5; ++round) {
    BufferHandle out;
    if (init_major == GSS_S_CONTINUE_NEEDED) {
      init_major = gss_init_sec_context(
          &minor, icred.get(), Out(pair->initiator_), target.get(),
          const_cast<gss_OID>(gss_mech_krb5), flags, 0, GSS_C_NO_CHANNEL_BINDINGS,
          round == 0 ? GSS_C_NO_BUFFER : &to_initiator.h, nullptr, &out.h, nullptr, nullptr);
      if (GSS_ERROR(init_major)) return GssError("gss_init_sec_context", init_major, minor);
      std::swap(to_acceptor.h, out.h);
    }
    if (to_acceptor.h.length > 0) {
      BufferHandle reply;
      accept_major = gss_accept_sec_context(&minor, Out(pair->acceptor_), acred.get(),
                                            &to_acceptor.h, GSS_C_NO_CHANNEL_BINDINGS, nullptr,
                                            nullptr, &reply.h, nullptr, nullptr, nullptr);
      if (GSS_ERROR(accept_major)) return GssError("gss_accept_sec_context", accept_major, minor);
      to_acceptor.reset();
      std::swap(to_initiator.h, reply.h);
      ++pair->round_trips_;
    }
    if (init_major == GSS_S_COMPLETE && accept_major == GSS_S_COMPLETE) break;
  }
  if (init_major != GSS_S_COMPLETE || accept_major != GSS_S_COMPLETE) {
    return Status::Internal("GSS context establishment did not complete after 5 rounds");
  }
  SECMODE_ASSIGN_OR_RETURN(SessionKey key, InquireSessionKey(pair->initiator()));
  if (key.enctype != static_cast<int32_t>(enctype)) {
    return Status::Internal(std::string("asked for enctype ") + EnctypeName(enctype) +
                            " but the context's session key has enctype " +
                            std::to_string(key.enctype));
  }
  return pair;
}

}  // namespace secmode::gss
