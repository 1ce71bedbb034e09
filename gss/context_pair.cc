#include "gss/context_pair.h"

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>

#include <atomic>
#include <string>

#include "common/clock.h"
#include "gss/gss_error.h"

namespace secmode::gss {

using common::Result;
using common::Status;

namespace {

// RAII holders so every early return releases what was acquired.
struct Name {
  gss_name_t n = GSS_C_NO_NAME;
  ~Name() {
    OM_uint32 minor;
    if (n != GSS_C_NO_NAME) gss_release_name(&minor, &n);
  }
};
struct Cred {
  gss_cred_id_t c = GSS_C_NO_CREDENTIAL;
  ~Cred() {
    OM_uint32 minor;
    if (c != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &c);
  }
};
struct Buffer {
  gss_buffer_desc b = GSS_C_EMPTY_BUFFER;
  ~Buffer() {
    OM_uint32 minor;
    gss_release_buffer(&minor, &b);
  }
};

Result<gss_name_t> ImportName(const std::string& text, gss_OID type) {
  gss_buffer_desc buf{text.size(), const_cast<char*>(text.data())};
  OM_uint32 minor = 0;
  gss_name_t name = GSS_C_NO_NAME;
  OM_uint32 major = gss_import_name(&minor, &buf, type, &name);
  if (GSS_ERROR(major)) return GssError("gss_import_name(" + text + ")", major, minor);
  return name;
}

// Each pair gets its own MEMORY ccache holding a copy of the TGT, so a
// service ticket cached for one enctype is never reused for another.
Result<std::string> PrivateCcacheWithTgt(const Realm& realm) {
  static std::atomic<int> counter{0};
  std::string name = "MEMORY:secmode-pair-" + std::to_string(++counter);
  krb5_context kctx = nullptr;
  krb5_error_code err = krb5_init_context(&kctx);
  if (err) return Status::Internal("krb5_init_context failed: " + std::to_string(err));
  krb5_ccache from = nullptr, to = nullptr;
  std::string failure;
  if ((err = krb5_cc_resolve(kctx, realm.ccache().c_str(), &from)) != 0) {
    failure = "krb5_cc_resolve(" + realm.ccache() + ")";
  } else if ((err = krb5_cc_resolve(kctx, name.c_str(), &to)) != 0) {
    failure = "krb5_cc_resolve(" + name + ")";
  } else if ((err = krb5_cc_copy_creds(kctx, from, to)) != 0) {
    failure = "krb5_cc_copy_creds(" + realm.ccache() + " -> " + name + ")";
  }
  std::string detail;
  if (err) {
    const char* msg = krb5_get_error_message(kctx, err);
    detail = msg;
    krb5_free_error_message(kctx, msg);
  }
  if (from) krb5_cc_close(kctx, from);
  // Closing a MEMORY ccache keeps its contents until destroyed; the GSS
  // credential resolves it again by name.
  if (to) krb5_cc_close(kctx, to);
  krb5_free_context(kctx);
  if (err) return Status::Unavailable(failure + ": " + detail);
  return name;
}

void DestroyCcache(const std::string& name) {
  krb5_context kctx = nullptr;
  if (krb5_init_context(&kctx) != 0) return;
  krb5_ccache cc = nullptr;
  if (krb5_cc_resolve(kctx, name.c_str(), &cc) == 0) krb5_cc_destroy(kctx, cc);
  krb5_free_context(kctx);
}

}  // namespace

Result<SessionKey> InquireSessionKey(gss_ctx_id_t context) {
  OM_uint32 minor = 0;
  gss_buffer_set_t data = GSS_C_NO_BUFFER_SET;
  OM_uint32 major =
      gss_inquire_sec_context_by_oid(&minor, context, GSS_C_INQ_SSPI_SESSION_KEY, &data);
  if (GSS_ERROR(major))
    return GssError("gss_inquire_sec_context_by_oid(session key)", major, minor);
  if (data == GSS_C_NO_BUFFER_SET || data->count < 1) {
    gss_release_buffer_set(&minor, &data);
    return Status::Internal("GSS_C_INQ_SSPI_SESSION_KEY returned no key");
  }
  SessionKey out;
  const auto* key = static_cast<const uint8_t*>(data->elements[0].value);
  out.key.assign(key, key + data->elements[0].length);
  // MIT appends the enctype as the last arc of OID 1.2.840.113554.1.2.2.4.<enctype>;
  // the AES enctypes (17..20) encode as one byte.
  if (data->count >= 2 && data->elements[1].length > 0) {
    const auto* oid = static_cast<const uint8_t*>(data->elements[1].value);
    out.enctype = oid[data->elements[1].length - 1];
  }
  gss_release_buffer_set(&minor, &data);
  return out;
}

Result<std::unique_ptr<ContextPair>> ContextPair::Establish(const Realm& realm, Enctype enctype) {
  uint64_t t0 = common::NowNs();
  std::unique_ptr<ContextPair> pair(new ContextPair());
  pair->enctype_ = enctype;
  SECMODE_ASSIGN_OR_RETURN(std::string ccache, PrivateCcacheWithTgt(realm));
  struct CcacheGuard {
    std::string name;
    ~CcacheGuard() { DestroyCcache(name); }
  } ccache_guard{ccache};

  OM_uint32 major, minor = 0;
  Name user, service, target;
  SECMODE_ASSIGN_OR_RETURN(
      user.n, ImportName(realm.user_principal(), const_cast<gss_OID>(GSS_KRB5_NT_PRINCIPAL_NAME)));
  SECMODE_ASSIGN_OR_RETURN(service.n, ImportName(realm.service_principal(),
                                                 const_cast<gss_OID>(GSS_KRB5_NT_PRINCIPAL_NAME)));
  SECMODE_ASSIGN_OR_RETURN(target.n,
                           ImportName(realm.service_hostbased(), GSS_C_NT_HOSTBASED_SERVICE));

  gss_OID_set_desc mechs{1, const_cast<gss_OID>(gss_mech_krb5)};
  Cred icred, acred;
  std::string keytab = "FILE:" + realm.service_keytab();
  gss_key_value_element_desc ielems[] = {{"ccache", ccache.c_str()}};
  gss_key_value_set_desc istore{1, ielems};
  major = gss_acquire_cred_from(&minor, user.n, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE, &istore,
                                &icred.c, nullptr, nullptr);
  if (GSS_ERROR(major))
    return GssError("gss_acquire_cred_from(initiator " + ccache + ")", major, minor);
  krb5_enctype allowed = static_cast<krb5_enctype>(enctype);
  major = gss_krb5_set_allowable_enctypes(&minor, icred.c, 1, &allowed);
  if (GSS_ERROR(major)) return GssError("gss_krb5_set_allowable_enctypes", major, minor);
  gss_key_value_element_desc aelems[] = {{"keytab", keytab.c_str()}};
  gss_key_value_set_desc astore{1, aelems};
  major = gss_acquire_cred_from(&minor, service.n, GSS_C_INDEFINITE, &mechs, GSS_C_ACCEPT, &astore,
                                &acred.c, nullptr, nullptr);
  if (GSS_ERROR(major))
    return GssError("gss_acquire_cred_from(acceptor " + keytab + ")", major, minor);

  const OM_uint32 flags = GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG |
                          GSS_C_REPLAY_FLAG | GSS_C_SEQUENCE_FLAG;
  OM_uint32 init_major = GSS_S_CONTINUE_NEEDED, accept_major = GSS_S_CONTINUE_NEEDED;
  Buffer to_acceptor, to_initiator;
  for (int round = 0; round < 5; ++round) {
    Buffer out;
    if (init_major == GSS_S_CONTINUE_NEEDED) {
      init_major = gss_init_sec_context(
          &minor, icred.c, &pair->initiator_, target.n, const_cast<gss_OID>(gss_mech_krb5), flags,
          0, GSS_C_NO_CHANNEL_BINDINGS, round == 0 ? GSS_C_NO_BUFFER : &to_initiator.b, nullptr,
          &out.b, nullptr, nullptr);
      if (GSS_ERROR(init_major)) return GssError("gss_init_sec_context", init_major, minor);
      std::swap(to_acceptor.b, out.b);
    }
    if (to_acceptor.b.length > 0) {
      Buffer reply;
      accept_major = gss_accept_sec_context(&minor, &pair->acceptor_, acred.c, &to_acceptor.b,
                                            GSS_C_NO_CHANNEL_BINDINGS, nullptr, nullptr, &reply.b,
                                            nullptr, nullptr, nullptr);
      if (GSS_ERROR(accept_major)) return GssError("gss_accept_sec_context", accept_major, minor);
      OM_uint32 m;
      gss_release_buffer(&m, &to_acceptor.b);
      std::swap(to_initiator.b, reply.b);
      ++pair->round_trips_;
    }
    if (init_major == GSS_S_COMPLETE && accept_major == GSS_S_COMPLETE) break;
  }
  if (init_major != GSS_S_COMPLETE || accept_major != GSS_S_COMPLETE) {
    return Status::Internal("GSS context establishment did not complete after 5 rounds");
  }
  SECMODE_ASSIGN_OR_RETURN(SessionKey key, InquireSessionKey(pair->initiator_));
  if (key.enctype != static_cast<int32_t>(enctype)) {
    return Status::Internal(std::string("asked for enctype ") + EnctypeName(enctype) +
                            " but the context's session key has enctype " +
                            std::to_string(key.enctype));
  }
  pair->establish_ns_ = common::NowNs() - t0;
  return pair;
}

ContextPair::~ContextPair() {
  OM_uint32 minor;
  if (initiator_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &initiator_, GSS_C_NO_BUFFER);
  if (acceptor_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &acceptor_, GSS_C_NO_BUFFER);
}

gss_ctx_id_t ContextPair::ReleaseInitiator() {
  gss_ctx_id_t c = initiator_;
  initiator_ = GSS_C_NO_CONTEXT;
  return c;
}

gss_ctx_id_t ContextPair::ReleaseAcceptor() {
  gss_ctx_id_t c = acceptor_;
  acceptor_ = GSS_C_NO_CONTEXT;
  return c;
}

}  // namespace secmode::gss
