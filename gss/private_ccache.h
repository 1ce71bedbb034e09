// PrivateCcache: a private MEMORY ccache holding a copy of another ccache's
// tickets (a user's ccache from kinit, the default ccache, KRB5CCNAME, or the
// throwaway realm's), initialised with that ccache's principal and destroyed
// with this object. Each context establishment gets its own, so a service
// ticket fetched for one enctype is never reused for another and concurrent
// establishments never rewrite the user's ccache.
//
// Make() refuses, naming the ccache and the principal, a source that does
// not exist or holds no principal ("run kinit"), and one whose every ticket
// has expired (when and for whom), unless a client keytab
// (KRB5_CLIENT_KTNAME / default_client_keytab_name) lets MIT get fresh
// tickets itself: then the copy is left empty (no principal in the source)
// or holds the expired ones for MIT to renew. Not copyable; one thread at a
// time.
#ifndef SECMODE_GSS_PRIVATE_CCACHE_H_
#define SECMODE_GSS_PRIVATE_CCACHE_H_

#include <string>

#include "common/status.h"

namespace secmode::gss {

class PrivateCcache {
 public:
  PrivateCcache() = default;
  PrivateCcache(const PrivateCcache&) = delete;
  PrivateCcache& operator=(const PrivateCcache&) = delete;
  ~PrivateCcache();
  // Copies the principal and tickets of `source` ("" = the default ccache:
  // KRB5CCNAME, else the configuration's default_ccache_name) into a new
  // MEMORY ccache named by name().
  common::Status Make(const std::string& source);
  const std::string& name() const { return name_; }
  // After Make(): the source's full name ("FILE:/tmp/krb5cc_1000") and its
  // principal ("alice@EXAMPLE.ORG"; the client keytab's when the source
  // was empty), for messages.
  const std::string& source() const { return source_; }
  const std::string& principal() const { return principal_; }

 private:
  std::string name_, source_, principal_;
};

}  // namespace secmode::gss

#endif  // SECMODE_GSS_PRIVATE_CCACHE_H_
