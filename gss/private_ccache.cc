#include "gss/private_ccache.h"

#include <krb5/krb5.h>

#include <atomic>

#include "gss/gss_handles.h"

namespace secmode::gss {

using common::Status;

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
  std::string what;
  if (source.empty()) {
    err = krb5_cc_default(k.get(), &cc);
    what = "krb5_cc_default";
  } else {
    err = krb5_cc_resolve(k.get(), source.c_str(), &cc);
    what = "krb5_cc_resolve(" + source + ")";
  }
  from.reset(err ? nullptr : cc);
  if (!err) {
    what = "krb5_cc_resolve(" + name + ")";
    cc = nullptr;
    err = krb5_cc_resolve(k.get(), name.c_str(), &cc);
    to.reset(err ? nullptr : cc);
  }
  if (!err) {
    what = "krb5_cc_copy_creds(" + (source.empty() ? std::string("default") : source) + ")";
    err = krb5_cc_copy_creds(k.get(), from.get(), to.get());
  }
  std::string detail;
  if (err) {
    const char* m = krb5_get_error_message(k.get(), err);
    detail = m;
    krb5_free_error_message(k.get(), m);
  }
  if (err) return Status::Unavailable(what + ": " + detail);
  name_ = name;
  return Status::Ok();
}

}  // namespace secmode::gss
