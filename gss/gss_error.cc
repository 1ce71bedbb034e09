#include "gss/gss_error.h"

#include "gss/gss_handles.h"

namespace secmode::gss {
namespace {

std::string DisplayOne(OM_uint32 code, int type) {
  std::string out;
  OM_uint32 context = 0;
  do {
    OM_uint32 minor = 0;
    BufferHandle text;
    OM_uint32 major = gss_display_status(&minor, code, type, GSS_C_NO_OID, &context, &text.h);
    if (GSS_ERROR(major)) break;
    if (!out.empty()) out += "; ";
    out.append(static_cast<const char*>(text.h.value), text.h.length);
  } while (context != 0);
  return out;
}

}  // namespace

std::string DescribeGssStatus(OM_uint32 major, OM_uint32 minor) {
  std::string out = DisplayOne(major, GSS_C_GSS_CODE);
  if (minor != 0) out += " (" + DisplayOne(minor, GSS_C_MECH_CODE) + ")";
  return out;
}

common::Status GssError(const std::string& call, OM_uint32 major, OM_uint32 minor) {
  std::string msg = call + ": " + DescribeGssStatus(major, minor);
  OM_uint32 routine = GSS_ROUTINE_ERROR(major);
  if (routine == GSS_S_BAD_SIG) return common::Status::AuthFailed(msg);
  if (routine == GSS_S_DEFECTIVE_TOKEN || routine == GSS_S_BAD_MECH)
    return common::Status::Corrupt(msg);
  if (routine == GSS_S_NO_CRED || routine == GSS_S_DEFECTIVE_CREDENTIAL ||
      routine == GSS_S_CREDENTIALS_EXPIRED)
    return common::Status::Unavailable(msg);
  if (routine == 0 && (major & (GSS_S_DUPLICATE_TOKEN | GSS_S_OLD_TOKEN)))
    return common::Status::Replay(msg);
  return common::Status::Internal(msg);
}

}  // namespace secmode::gss
