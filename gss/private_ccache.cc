#include "gss/private_ccache.h"

#include <krb5/krb5.h>

#include <atomic>

namespace secmode::gss {

using common::Status;

PrivateCcache::~PrivateCcache() {
  if (name_.empty()) return;
  krb5_context k = nullptr;
  if (krb5_init_context(&k) != 0) return;
  krb5_ccache cc = nullptr;
  if (krb5_cc_resolve(k, name_.c_str(), &cc) == 0) krb5_cc_destroy(k, cc);
  krb5_free_context(k);
}

Status PrivateCcache::Make(const std::string& source) {
  static std::atomic<int> counter{0};
  std::string name = "MEMORY:secmode-" + std::to_string(++counter);
  krb5_context k = nullptr;
  krb5_error_code err = krb5_init_context(&k);
  if (err) return Status::Internal("krb5_init_context failed: " + std::to_string(err));
  krb5_ccache from = nullptr, to = nullptr;
  std::string what;
  if (source.empty()) {
    err = krb5_cc_default(k, &from);
    what = "krb5_cc_default";
  } else {
    err = krb5_cc_resolve(k, source.c_str(), &from);
    what = "krb5_cc_resolve(" + source + ")";
  }
  if (!err) {
    what = "krb5_cc_resolve(" + name + ")";
    err = krb5_cc_resolve(k, name.c_str(), &to);
  }
  if (!err) {
    what = "krb5_cc_copy_creds(" + (source.empty() ? std::string("default") : source) + ")";
    err = krb5_cc_copy_creds(k, from, to);
  }
  std::string detail;
  if (err) {
    const char* m = krb5_get_error_message(k, err);
    detail = m;
    krb5_free_error_message(k, m);
  }
  if (from) krb5_cc_close(k, from);
  if (to) krb5_cc_close(k, to);
  krb5_free_context(k);
  if (err) return Status::Unavailable(what + ": " + detail);
  name_ = name;
  return Status::Ok();
}

}  // namespace secmode::gss
