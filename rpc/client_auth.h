// ClientAuth: how a client builds calls and checks replies for one security
// flavour: AUTH_SYS (sec=sys) or RPCSEC_GSS with a service (krb5, krb5i,
// krb5p) over a GssClientContext.
//
// Thread safety: EncodeCall/DecodeReply may be called from any thread.
#ifndef SECMODE_RPC_CLIENT_AUTH_H_
#define SECMODE_RPC_CLIENT_AUTH_H_

#include <memory>
#include <string>

#include "common/bytes.h"
#include "common/status.h"
#include "rpc/gss_client.h"
#include "rpc/rpc_msg.h"

namespace secmode::rpc {

class ClientAuth {
 public:
  virtual ~ClientAuth() = default;
  // Replaces *record by the call (no record mark); *seq gets the RPCSEC_GSS
  // sequence number used (0 for AUTH_SYS).
  virtual common::Status EncodeCall(uint32_t xid, uint32_t proc, common::ByteView args,
                                    common::Bytes* record, uint32_t* seq) = 0;
  // Checks a reply to the call that used `seq`; *results points into
  // `record` or `*scratch`. Failures name the RPC status or the check.
  virtual common::Status DecodeReply(common::ByteView record, uint32_t seq, common::Bytes* scratch,
                                     ReplyHeader* h, common::ByteView* results) = 0;
  // The server's sequence window (RPCSEC_GSS) or 0.
  virtual uint32_t window() const = 0;
  // TraceContextId of the RPCSEC_GSS context handle (rpc/call_trace.h); 0
  // for AUTH_SYS.
  virtual uint64_t context_id() const { return 0; }
  // Whether there is a server-side context to end (RPCSEC_GSS).
  virtual bool has_context() const { return false; }
  // RFC 2203 5.4: ends the RPCSEC_GSS context on the server (one DESTROY
  // call through `round_trip`); nothing to do for AUTH_SYS.
  virtual common::Status Destroy(uint32_t xid, const RoundTrip& round_trip) {
    (void)xid;
    (void)round_trip;
    return common::Status::Ok();
  }
  // How the context's crypto runs on many threads: "parallel" (each thread
  // its own Protector), "serialised" (one at a time), "none" (AUTH_SYS).
  virtual const char* crypto_threads() const { return "none"; }
};

std::unique_ptr<ClientAuth> NewSysAuth(uint32_t prog, uint32_t vers);
std::unique_ptr<ClientAuth> NewGssAuth(uint32_t prog, uint32_t vers,
                                       std::shared_ptr<GssClientContext> context, uint32_t service);

// A client's security: AUTH_SYS, or RPCSEC_GSS with one of its services
// (RFC 2203 5.3.2.2: rpc_gss_service_t), named as NFS's sec= option names
// them. The names users type are parsed once, by the mode registry
// (harness/modes.h); rpc only takes the typed value.
enum class Security : uint32_t {
  kSys = 0,
  kKrb5 = kGssSvcNone,
  kKrb5i = kGssSvcIntegrity,
  kKrb5p = kGssSvcPrivacy,
};
// The rpc_gss_service_t of an RPCSEC_GSS security; 0 for kSys.
inline uint32_t GssServiceOf(Security s) { return static_cast<uint32_t>(s); }
// "sys", "krb5", "krb5i", "krb5p": the mode family reports carry.
const char* SecurityName(Security s);

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_CLIENT_AUTH_H_
