// GssError: turns a GSS-API major/minor status pair into a Status whose
// message is what gss_display_status says, e.g.
// "gss_unwrap: A token was invalid (Token header is malformed or corrupt)".
#ifndef SECMODE_GSS_GSS_ERROR_H_
#define SECMODE_GSS_GSS_ERROR_H_

#include <gssapi/gssapi.h>

#include <string>

#include "common/status.h"

namespace secmode::gss {

std::string DescribeGssStatus(OM_uint32 major, OM_uint32 minor);

// Maps GSS routine errors to Codes: BAD_SIG -> kAuthFailed, DEFECTIVE_TOKEN ->
// kCorrupt, DUPLICATE/OLD token -> kReplay, CREDENTIALS problems ->
// kUnavailable, anything else -> kInternal.
common::Status GssError(const std::string& call, OM_uint32 major, OM_uint32 minor);

}  // namespace secmode::gss

#endif  // SECMODE_GSS_GSS_ERROR_H_
