// RPC-framed Sealer/Opener legs for the mode registry (harness/modes.cc):
// the wire of every leg is a whole RPC call or reply (DESIGN.md "For RPC
// modes the wire is a whole RPC call or reply"), so a micro number for
// `krb5p` means: build the call header and credential, MIC the header, wrap
// seq_num||args (client-seal); decode the header, verify the MIC, check the
// window, unwrap and check the seq_num (server-open); the same for the reply
// with the verifier over seq_num (server-seal, client-open).
//
// The payload is the procedure's arguments (client legs) or results (server
// legs) of NFSv4 COMPOUND (program 100003, version 4, procedure 1). The GSS
// context is created for real: RPCSEC_GSS_INIT through the in-process
// server core against the realm's service keytab.
//
// Thread safety: as common/seal.h (one thread per side).
#ifndef SECMODE_RPC_LEGS_H_
#define SECMODE_RPC_LEGS_H_

#include <string>

#include "common/seal.h"
#include "common/status.h"
#include "gss/protector.h"
#include "gss/realm.h"

namespace secmode::rpc {

// family: "sys", "krb5", "krb5i", "krb5p"; realm may be null for "sys";
// enctype 0 = the KDC's choice.
common::Result<common::Association> MakeRpcAssociation(const std::string& family,
                                                       gss::Engine engine, int32_t enctype,
                                                       const gss::Realm* realm);

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_LEGS_H_
