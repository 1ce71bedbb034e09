// OpenSslError: a Status for a failed OpenSSL call, naming the call and the
// library's own reason (ERR_get_error), and clearing OpenSSL's error queue so
// later errors are not blamed on earlier calls.
#ifndef SECMODE_SMB_OPENSSL_ERROR_H_
#define SECMODE_SMB_OPENSSL_ERROR_H_

#include "common/status.h"

namespace secmode::smb {

common::Status OpenSslError(const char* call);

}  // namespace secmode::smb

#endif  // SECMODE_SMB_OPENSSL_ERROR_H_
