// GssClientContext: the client side of one RPCSEC_GSS context (RFC 2203).
//
// Establish() runs context creation (section 5.2): gss_init_sec_context with
// a credential from a private copy of the given ccache (gss/private_ccache.h:
// the user's own tickets, from kinit or the realm) against the target
// service, each token carried in an RPCSEC_GSS_INIT / CONTINUE_INIT call
// through `round_trip` (which owns any deadline; its error is returned
// annotated with the step), until both sides are complete; it then checks
// the reply verifier (a MIC over the seq_window, section 5.2.3.1) and builds
// the engine's Protector. Destroy() ends the context (section 5.4).
//
// Afterwards EncodeCall/DecodeReply build DATA calls (section 5.3.1: the
// verifier is a MIC over the header up to and including the credential) and
// check replies (section 5.3.3.2: the verifier is a MIC over seq_num).
// Sequence numbers come from NextSeq(), one counter per context shared by
// every connection that uses it, as the Linux client does with nconnect.
//
// Thread safety: all methods may be called from any thread. The context's
// Protectors come from a gss::ProtectorPool: with the native engine every
// thread seals and opens with its own instance, in parallel (only the
// sequence counter is shared); MIT's engines are serialised by the pool.
#ifndef SECMODE_RPC_GSS_CLIENT_H_
#define SECMODE_RPC_GSS_CLIENT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "common/bytes.h"
#include "common/status.h"
#include "gss/protector.h"
#include "gss/protector_pool.h"
#include "rpc/rpc_msg.h"

namespace secmode::rpc {

struct GssClientConfig {
  std::string ccache;                    // e.g. "FILE:/tmp/x/user.ccache"; "" = default
  std::string target = "nfs@localhost";  // host-based service name
  int32_t enctype = 0;                   // 0 = any the KDC picks
  gss::Engine engine = gss::Engine::kMit;
  uint32_t prog = 0, vers = 0;  // the program the context is for
  // Service named in the INIT credential. RFC 2203 lets each DATA call pick
  // its own, but MIT gssrpc's server fixes the service at context creation.
  uint32_t service = 1;  // kGssSvcNone
};

// Sends one call record and returns the reply record.
using RoundTrip = std::function<common::Result<common::Bytes>(common::ByteView call)>;

class GssClientContext {
 public:
  static common::Result<std::shared_ptr<GssClientContext>> Establish(const GssClientConfig& config,
                                                                     const RoundTrip& round_trip);
  ~GssClientContext() = default;

  uint32_t NextSeq() { return next_seq_.fetch_add(1, std::memory_order_relaxed); }
  uint32_t window() const { return window_; }
  const common::Bytes& handle() const { return handle_; }
  // Whether calls of this context are protected in parallel (see above).
  bool parallel_crypto() const { return protectors_->parallel(); }

  // RFC 2203 5.4: ends the context on the server: a DESTROY call (NULLPROC,
  // `service`, sequence number `seq`: NextSeq() for a client that numbers
  // its calls from the counter) through `round_trip`, whose reply must be
  // accepted with a verifier over that number. The context is not usable
  // for DATA calls afterwards (the server has forgotten it).
  common::Status Destroy(uint32_t xid, uint32_t service, uint32_t seq, const RoundTrip& round_trip);

  // A DATA (or DESTROY) call: header, RPCSEC_GSS credential, verifier, and
  // the body protected per `service`. Replaces *record.
  common::Status EncodeCall(uint32_t xid, uint32_t proc, uint32_t service, uint32_t seq,
                            common::ByteView args, common::Bytes* record,
                            uint32_t gss_proc = kGssData);
  // Checks a reply to the call with sequence number `seq`: accepted SUCCESS,
  // verifier = MIC over seq, body unprotected into *results (a view into
  // `record` or `*scratch`). A denied or unsuccessful reply is an error whose
  // message names the RFC status; `*h` is filled either way.
  common::Status DecodeReply(common::ByteView record, uint32_t service, uint32_t seq,
                             common::Bytes* scratch, ReplyHeader* h, common::ByteView* results);

 private:
  GssClientContext() = default;
  std::unique_ptr<gss::ProtectorPool> protectors_;
  common::Bytes handle_;
  uint32_t window_ = 0;
  uint32_t prog_ = 0, vers_ = 0;
  std::atomic<uint32_t> next_seq_{1};
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_GSS_CLIENT_H_
