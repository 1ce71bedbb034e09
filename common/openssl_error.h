// OpenSslError: a Status for a failed OpenSSL call, naming the call and the
// library's own reason (ERR_get_error), and clearing OpenSSL's error queue so
// later errors are not blamed on earlier calls.
#ifndef SECMODE_COMMON_OPENSSL_ERROR_H_
#define SECMODE_COMMON_OPENSSL_ERROR_H_

#include <string>

#include "common/status.h"

namespace secmode::common {

Status OpenSslError(const std::string& call);

}  // namespace secmode::common

#endif  // SECMODE_COMMON_OPENSSL_ERROR_H_
