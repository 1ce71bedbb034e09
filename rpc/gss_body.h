// The RPCSEC_GSS call/reply body per service (RFC 2203 section 5.3.2.2 and
// 5.3.3.4): none = the plain arguments or results; integrity =
// rpc_gss_integ_data { opaque databody_integ<>; opaque checksum<>; } with
// databody_integ = seq_num || body and checksum = MIC over it; privacy =
// rpc_gss_priv_data { opaque databody_priv<>; } = wrap(seq_num || body).
//
// Callers serialise use of the Protector (one thread at a time).
#ifndef SECMODE_RPC_GSS_BODY_H_
#define SECMODE_RPC_GSS_BODY_H_

#include <cstdint>

#include "common/bytes.h"
#include "common/status.h"
#include "gss/protector.h"

namespace secmode::rpc {

// Appends the protected form of `body` to `*out`. `scratch` is reused.
common::Status SealGssBody(gss::Protector& protector, uint32_t service, uint32_t seq,
                           common::ByteView body, common::Bytes* out, common::Bytes* scratch);

// Checks and unprotects `in`; `*body` then points into `in` (none,
// integrity) or into `*scratch` (privacy). A bad checksum or token fails
// with kAuthFailed, a seq_num inside that differs from `seq` with kCorrupt,
// malformed XDR with kCorrupt.
common::Status OpenGssBody(gss::Protector& protector, uint32_t service, uint32_t seq,
                           common::ByteView in, common::Bytes* scratch, common::ByteView* body);

// Gives back the calling thread's privacy token buffer if a large message
// left it large (a server thread calls it when idle); true if it did.
bool ReleaseGssBodyBuffers();

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_GSS_BODY_H_
