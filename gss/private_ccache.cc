#include "gss/private_ccache.h"

#include <krb5/krb5.h>

#include <atomic>
#include <ctime>

#include "gss/gss_handles.h"

namespace secmode::gss {

using common::Status;

namespace {

std::string Krb5Message(krb5_context k, krb5_error_code err) {
  const char* m = krb5_get_error_message(k, err);
  std::string out = m ? m : ("krb5 error " + std::to_string(err));
  krb5_free_error_message(k, m);
  return out;
}

std::string UtcTime(krb5_timestamp t) {
  time_t tt = static_cast<time_t>(static_cast<uint32_t>(t));
  struct tm tm {};
  gmtime_r(&tt, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Frees a krb5_principal with its context.
struct PrincipalPtr {
  krb5_context k;
  krb5_principal p = nullptr;
  ~PrincipalPtr() {
    if (p) krb5_free_principal(k, p);
  }
};

std::string Unparse(krb5_context k, krb5_const_principal p) {
  char* text = nullptr;
  if (krb5_unparse_name(k, p, &text) != 0) return "";
  std::string out = text;
  krb5_free_unparsed_name(k, text);
  return out;
}

// The client keytab (KRB5_CLIENT_KTNAME, else default_client_keytab_name),
// with which MIT gets initial tickets on its own: the principal of its
// first key, or of the key for `want` (null: any); "" when there is none.
std::string ClientKeytabPrincipal(krb5_context k, krb5_const_principal want) {
  krb5_keytab kt = nullptr;
  if (krb5_kt_client_default(k, &kt) != 0) return "";
  std::string out;
  krb5_keytab_entry e;
  if (want != nullptr) {
    if (krb5_kt_get_entry(k, kt, want, 0, 0, &e) == 0) {
      out = Unparse(k, e.principal);
      krb5_free_keytab_entry_contents(k, &e);
    }
  } else {
    krb5_kt_cursor cursor;
    if (krb5_kt_start_seq_get(k, kt, &cursor) == 0) {
      if (krb5_kt_next_entry(k, kt, &e, &cursor) == 0) {
        out = Unparse(k, e.principal);
        krb5_free_keytab_entry_contents(k, &e);
      }
      krb5_kt_end_seq_get(k, kt, &cursor);
    }
  }
  krb5_kt_close(k, kt);
  return out;
}

}  // namespace

PrivateCcache::~PrivateCcache() {
  if (name_.empty()) return;
  krb5_context raw = nullptr;
  if (krb5_init_context(&raw) != 0) return;
  Krb5ContextPtr k(raw);
  krb5_ccache cc = nullptr;
  // krb5_cc_destroy closes the handle too.
  if (krb5_cc_resolve(k.get(), name_.c_str(), &cc) == 0) krb5_cc_destroy(k.get(), cc);
}

Status PrivateCcache::Make(const std::string& source) {
  static std::atomic<int> counter{0};
  std::string name = "MEMORY:secmode-" + std::to_string(++counter);
  krb5_context raw = nullptr;
  krb5_error_code err = krb5_init_context(&raw);
  if (err) return Status::Internal("krb5_init_context failed: " + std::to_string(err));
  Krb5ContextPtr k(raw);
  // Declared after k: closed before the context is freed.
  Krb5CcachePtr from(nullptr, Krb5CcacheCloser{k.get()}), to(nullptr, Krb5CcacheCloser{k.get()});
  krb5_ccache cc = nullptr;
  std::string src = source;
  if (source.empty()) {
    err = krb5_cc_default(k.get(), &cc);
    if (err) return Status::Unavailable("krb5_cc_default: " + Krb5Message(k.get(), err));
  } else {
    err = krb5_cc_resolve(k.get(), source.c_str(), &cc);
    if (err) {
      return Status::InvalidArgument("ccache '" + source + "': " + Krb5Message(k.get(), err));
    }
  }
  from.reset(cc);
  char* full = nullptr;
  if (krb5_cc_get_full_name(k.get(), from.get(), &full) == 0 && full != nullptr) {
    src = full;
    krb5_free_string(k.get(), full);
  }
  // How messages name it.
  const std::string ccname = (source.empty() ? "the default ccache " : "ccache ") + src;

  // The principal the tickets belong to; a ccache that was never written
  // (no kinit) has none.
  PrincipalPtr princ{k.get()};
  err = krb5_cc_get_principal(k.get(), from.get(), &princ.p);
  if (err) {
    // No tickets, but a client keytab: MIT gets them itself (an AS-REQ with
    // the keytab's first principal) into the empty private ccache.
    const std::string keytab_user = ClientKeytabPrincipal(k.get(), nullptr);
    if (!keytab_user.empty()) {
      name_ = name;
      source_ = src;
      principal_ = keytab_user;
      return Status::Ok();
    }
    return Status::Unavailable("no Kerberos credentials in " + ccname + ": " +
                               Krb5Message(k.get(), err) +
                               "; get a ticket with kinit PRINCIPAL or name another ccache");
  }
  const std::string who = Unparse(k.get(), princ.p);

  // At least one ticket must still be valid (the TGT, or a service ticket
  // that can be used as it is).
  krb5_cc_cursor cursor;
  err = krb5_cc_start_seq_get(k.get(), from.get(), &cursor);
  if (err) {
    return Status::Unavailable("reading the tickets of " + who + " in " + ccname + ": " +
                               Krb5Message(k.get(), err));
  }
  const krb5_timestamp now = static_cast<krb5_timestamp>(time(nullptr));
  int tickets = 0, valid = 0;
  krb5_timestamp last_end = 0;
  krb5_creds creds;
  while (krb5_cc_next_cred(k.get(), from.get(), &cursor, &creds) == 0) {
    if (!krb5_is_config_principal(k.get(), creds.server)) {
      ++tickets;
      // krb5_timestamp is a 32-bit count that MIT treats as unsigned.
      if (static_cast<uint32_t>(creds.times.endtime) > static_cast<uint32_t>(now)) ++valid;
      if (static_cast<uint32_t>(creds.times.endtime) > static_cast<uint32_t>(last_end)) {
        last_end = creds.times.endtime;
      }
    }
    krb5_free_cred_contents(k.get(), &creds);
  }
  krb5_cc_end_seq_get(k.get(), from.get(), &cursor);
  if (tickets == 0 && ClientKeytabPrincipal(k.get(), princ.p).empty()) {
    return Status::Unavailable(ccname + " holds no tickets for " + who + "; get one with kinit " +
                               who);
  }
  // Expired tickets are renewed by MIT from a client keytab holding the
  // principal's key; without one they are the user's to renew.
  if (valid == 0 && ClientKeytabPrincipal(k.get(), princ.p).empty()) {
    return Status::Unavailable("the tickets of " + who + " in " + ccname + " expired at " +
                               UtcTime(last_end) + "; get new ones with kinit " + who);
  }

  cc = nullptr;
  err = krb5_cc_resolve(k.get(), name.c_str(), &cc);
  if (err) return Status::Internal("krb5_cc_resolve(" + name + "): " + Krb5Message(k.get(), err));
  to.reset(cc);
  // The MEMORY ccache needs the principal before it is usable: without it
  // gss_acquire_cred finds "no credentials cache" and only a client keytab
  // (a fresh AS-REQ) would have saved the day.
  err = krb5_cc_initialize(k.get(), to.get(), princ.p);
  if (!err) err = krb5_cc_copy_creds(k.get(), from.get(), to.get());
  if (err) {
    std::string detail = Krb5Message(k.get(), err);
    krb5_cc_destroy(k.get(), to.release());
    return Status::Unavailable("copying the tickets of " + who + " from " + ccname + ": " + detail);
  }
  name_ = name;
  source_ = src;
  principal_ = who;
  return Status::Ok();
}

}  // namespace secmode::gss
