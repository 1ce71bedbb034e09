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
// Thread safety: as common/seal.h (one thread per side) for each
// association; the associations of MakeSharedRpcAssociations may each be used
// by a thread of its own at the same time.
#ifndef SECMODE_RPC_LEGS_H_
#define SECMODE_RPC_LEGS_H_

#include <string>
#include <vector>

#include "common/seal.h"
#include "common/status.h"
#include "gss/protector.h"
#include "gss/realm.h"
#include "rpc/client_auth.h"

namespace secmode::rpc {

// realm may be null for Security::kSys; enctype 0 = the KDC's choice.
common::Result<common::Association> MakeRpcAssociation(Security security, gss::Engine engine,
                                                       int32_t enctype, const gss::Realm* realm);

// `count` associations of one RPCSEC_GSS context (one server, one context
// established once, one sequence counter and window), each with the
// per-thread state of its legs, so `count` threads can do round trips on one
// shared context at once as nconnect's connections do: the crypto runs in
// parallel on each thread's own Protector with the native engine and is
// serialised by MIT's (gss/protector_pool.h). For kSys they share the
// server only. `window` is the server's RPCSEC_GSS sequence window (0: the
// default, 128): threads that share a context can fall out of a small one
// when one of them is descheduled between numbering its call and the
// server's check while the others go on (the nconnect effect), and then the
// server drops that call and its leg fails.
common::Result<std::vector<common::Association>> MakeSharedRpcAssociations(
    Security security, gss::Engine engine, int32_t enctype, const gss::Realm* realm, size_t count,
    uint32_t window = 0);

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_LEGS_H_
