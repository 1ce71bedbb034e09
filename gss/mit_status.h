// Helpers shared by the two MIT engines (mit, mit-iov): turning the
// supplementary sequence bits of RFC 2743 1.2.1.1 into SequenceCounts and
// into Code::kReplay errors whose message says "duplicate" or "old".
#ifndef SECMODE_GSS_MIT_STATUS_H_
#define SECMODE_GSS_MIT_STATUS_H_

#include <gssapi/gssapi.h>

#include <string>

#include "common/status.h"
#include "gss/gss_error.h"
#include "gss/protector.h"

namespace secmode::gss {

// For a call that passed its routine checks: counts the verdict and returns
// kReplay for DUPLICATE/OLD (MIT still hands the data out; secmode refuses).
inline common::Status CheckMitSequence(const char* call, OM_uint32 major, OM_uint32 minor,
                                       SequenceCounts* counts) {
  if (major & GSS_S_DUPLICATE_TOKEN) {
    ++counts->duplicate;
    return common::Status::Replay(std::string("duplicate token: ") + call + ": " +
                                  DescribeGssStatus(major, minor));
  }
  if (major & GSS_S_OLD_TOKEN) {
    ++counts->old;
    return common::Status::Replay(std::string("old token: ") + call + ": " +
                                  DescribeGssStatus(major, minor));
  }
  if (major & GSS_S_GAP_TOKEN) {
    ++counts->gap;
  } else if (major & GSS_S_UNSEQ_TOKEN) {
    ++counts->unseq;
  } else {
    ++counts->in_order;
  }
  return common::Status::Ok();
}

}  // namespace secmode::gss

#endif  // SECMODE_GSS_MIT_STATUS_H_
