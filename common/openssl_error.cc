#include "common/openssl_error.h"

#include <openssl/err.h>

#include <string>

namespace secmode::common {

Status OpenSslError(const std::string& call) {
  unsigned long err = ERR_get_error();
  std::string reason = "no reason given";
  if (err != 0) {
    char buf[256];
    ERR_error_string_n(err, buf, sizeof buf);
    reason = buf;
  }
  ERR_clear_error();
  return Status::Internal(call + " failed: " + reason);
}

}  // namespace secmode::common
