// PrivateCcache: a private MEMORY ccache holding a copy of another ccache's
// tickets (the realm's TGT), destroyed with this object. Each context
// establishment gets its own, so a service ticket fetched for one enctype is
// never reused for another and concurrent establishments never rewrite the
// user's ccache. Not copyable; one thread at a time.
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
  // Copies the tickets of `source` ("" = the default ccache) into a new
  // MEMORY ccache named by name().
  common::Status Make(const std::string& source);
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

}  // namespace secmode::gss

#endif  // SECMODE_GSS_PRIVATE_CCACHE_H_
