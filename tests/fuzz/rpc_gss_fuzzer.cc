// libFuzzer target: the server's RPCSEC_GSS paths with real contexts:
// INIT / CONTINUE_INIT handling (gss_accept_sec_context on genuine and
// altered AP-REQs), the RFC 2203 sequence window, the call-header MIC, the
// GSS body of every service opened and sealed (rpc/gss_body.h: none,
// integrity, privacy), the NFS program behind it, SealReply and DESTROY.
//
// Fixture, made once per process: a throwaway MIT realm (gss/realm.h; its
// reaper cleans up if this process dies) and two families of engines,
//   native: server engine native, client engine native,
//   MIT:    server engine mit,    client engine mit-iov,
// each with
//   - a "data" RpcServerCore (the realm's service keytab, window 32, policy
//     drop / drop-disconnect) and an RPCSEC_GSS context established through
//     it by the real client (rpc::GssClientContext);
//   - an "init" RpcServerCore for INIT and CONTINUE_INIT, replaced when it
//     holds 256 contexts (the table would otherwise fill up for good);
// and an initiator credential (a private copy of the realm's ccache) that
// mints a genuine AP-REQ per kInitToken input without asking the KDC again.
// The context's window is reset before each input, so what an input does
// depends on that input alone; after a DESTROY the context is made again.
//
// Each input is a GssCase (gss_fuzz_case.h). What must hold, or the target
// crashes (libFuzzer then saves the input):
//   - every reply is within MaxReplyBytes(call bytes), and a reply the
//     program produced results for is within MaxSealedReplyBytes(results)
//     (tests/fuzz/fuzz_io.h);
//   - every reply decodes as an RPC reply to the call's xid;
//   - an unaltered DATA call: seq_num >= MAXSEQ is denied CTXPROBLEM; a
//     seq_num the window accepts gets an accepted reply whose verifier and
//     body the client verifies and opens (or GARBAGE_ARGS / PROC_UNAVAIL
//     without results); a duplicate or one below the window gets no reply;
//   - an unaltered body opens to exactly the arguments; what SealReply
//     produces the client opens to exactly the results;
//   - an unaltered genuine INIT token completes (GSS_S_COMPLETE), and a
//     valid DESTROY removes the context;
//   - every refusal (a Status) names its cause.
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "gss/gss_handles.h"
#include "gss/private_ccache.h"
#include "gss/realm.h"
#include "rpc/gss_body.h"
#include "rpc/gss_client.h"
#include "rpc/nfs.h"
#include "rpc/rpc_msg.h"
#include "rpc/sequence_window.h"
#include "rpc/server_core.h"
#include "rpc/xdr.h"
#include "tests/fuzz/fuzz_io.h"
#include "tests/fuzz/gss_fuzz_case.h"

namespace {

using secmode::common::Bytes;
using secmode::common::ByteView;
using secmode::common::Result;
using secmode::common::Status;
namespace gss = secmode::gss;
namespace rpc = secmode::rpc;
using secmode::fuzz::DataCall;
using secmode::fuzz::GssCase;
using secmode::fuzz::GssOp;
using secmode::fuzz::MaxReplyBytes;
using secmode::fuzz::MaxSealedReplyBytes;
using secmode::fuzz::Mutate;
using secmode::fuzz::Require;

constexpr uint32_t kWindow = 32;
constexpr size_t kMaxInitContexts = 256;

void Fail(const char* what, const Status& s) {
  fprintf(stderr, "rpc_gss_fuzzer fixture: %s: %s\n", what, s.ToString().c_str());
  abort();
}

// Results size of the last program run (the harness is single-threaded).
size_t g_results = 0;

rpc::ProgramSpec CountingProgram(rpc::MemoryNfsServer* nfs) {
  rpc::ProgramSpec spec = nfs->Program();
  rpc::ProcHandler inner = spec.handler;
  spec.handler = [inner](uint32_t vers, uint32_t proc, ByteView args, Bytes* results) {
    uint32_t stat = inner(vers, proc, args, results);
    g_results = stat == rpc::kSuccess ? results->size() : 0;
    return stat;
  };
  return spec;
}

struct Family {
  bool mit = false;
  rpc::ServerOptions options;
  std::unique_ptr<rpc::RpcServerCore> data, init;
  std::shared_ptr<rpc::GssClientContext> client;
};

class World {
 public:
  World() {
    auto realm = gss::Realm::Start();
    if (!realm.ok()) Fail("realm", realm.status());
    realm_ = std::move(realm).value();
    Status s = ccache_.Make(realm_->ccache());
    if (!s.ok()) Fail("ccache", s);
    OM_uint32 minor = 0;
    gss_OID_set_desc mechs{1, const_cast<gss_OID>(gss_mech_krb5)};
    gss_key_value_element_desc elems[] = {{"ccache", ccache_.name().c_str()}};
    gss_key_value_set_desc store{1, elems};
    OM_uint32 major =
        gss_acquire_cred_from(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE,
                              &store, gss::Out(initiator_), nullptr, nullptr);
    if (GSS_ERROR(major)) Fail("initiator credential", Status::Unavailable("gss_acquire_cred"));
    const std::string t = realm_->service_hostbased();
    gss_buffer_desc tb{t.size(), const_cast<char*>(t.data())};
    major = gss_import_name(&minor, &tb, GSS_C_NT_HOSTBASED_SERVICE, gss::Out(target_));
    if (GSS_ERROR(major)) Fail("target name", Status::Unavailable("gss_import_name"));
    for (int i = 0; i < 2; ++i) {
      Family& f = families_[i];
      f.mit = i == 1;
      f.options.keytab = realm_->service_keytab();
      f.options.engine = f.mit ? gss::Engine::kMit : gss::Engine::kNative;
      f.options.window = kWindow;
      f.options.policy = f.mit ? rpc::WindowPolicy::kDropDisconnect : rpc::WindowPolicy::kDrop;
      f.data = NewCore(f.options);
      f.init = NewCore(f.options);
      Establish(f);
    }
  }

  Family& family(bool mit) { return families_[mit ? 1 : 0]; }

  std::unique_ptr<rpc::RpcServerCore> NewCore(const rpc::ServerOptions& options) {
    auto core = rpc::RpcServerCore::Create(options, {CountingProgram(&nfs_)});
    if (!core.ok()) Fail("server core", core.status());
    return std::move(core).value();
  }

  void Establish(Family& f) {
    rpc::GssClientConfig cfg;
    cfg.ccache = realm_->ccache();
    cfg.target = realm_->service_hostbased();
    cfg.engine = f.mit ? gss::Engine::kMitIov : gss::Engine::kNative;
    cfg.prog = rpc::kNfsProgram;
    cfg.vers = rpc::kNfsVersion;
    rpc::RpcServerCore* core = f.data.get();
    auto round_trip = [core](ByteView call) -> Result<Bytes> {
      Bytes reply;
      if (core->HandleCall(call, &reply) != rpc::Disposition::kReply) {
        return Status::Internal("INIT call dropped");
      }
      return reply;
    };
    auto client = rpc::GssClientContext::Establish(cfg, round_trip);
    if (!client.ok()) Fail("establishing the fixture context", client.status());
    f.client = std::move(client).value();
  }

  // A genuine AP-REQ for the service, from a new initiator context.
  Bytes MintInitToken() {
    gss::ContextPtr ctx;
    gss::BufferHandle out;
    OM_uint32 minor = 0;
    OM_uint32 major = gss_init_sec_context(
        &minor, initiator_.get(), gss::Out(ctx), target_.get(), const_cast<gss_OID>(gss_mech_krb5),
        GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG, 0, GSS_C_NO_CHANNEL_BINDINGS,
        GSS_C_NO_BUFFER, nullptr, &out.h, nullptr, nullptr);
    if (GSS_ERROR(major)) Fail("gss_init_sec_context", Status::Unavailable("no AP-REQ"));
    ByteView v = out.view();
    return Bytes(v.begin(), v.end());
  }

 private:
  std::unique_ptr<gss::Realm> realm_;
  gss::PrivateCcache ccache_;
  gss::CredPtr initiator_;
  gss::NamePtr target_;
  rpc::MemoryNfsServer nfs_;
  Family families_[2];
};

World* g_world = nullptr;

// Destroys the fixture at exit (libFuzzer ends with exit()), so the KDC is
// stopped and the realm's directory removed; a crash leaves that to the
// realm's reaper.
void DestroyWorld() {
  delete g_world;
  g_world = nullptr;
}

// Sends `call` to `core` and checks what holds for every reply.
rpc::Disposition Send(rpc::RpcServerCore& core, ByteView call, Bytes* reply,
                      rpc::CallCheck* check = nullptr) {
  g_results = 0;
  reply->clear();
  rpc::Disposition d = core.HandleCall(call, reply, check);
  Require(reply->size() <= MaxReplyBytes(call.size()));
  if (g_results > 0) Require(reply->size() <= MaxSealedReplyBytes(g_results));
  if (d == rpc::Disposition::kReply) {
    rpc::ReplyHeader h;
    Require(rpc::DecodeReplyHeader(*reply, &h).ok());
    rpc::CallHeader ch;
    if (rpc::DecodeCallHeader(call, &ch).ok()) Require(h.xid == ch.xid);
  }
  return d;
}

uint32_t Service(uint8_t raw) { return raw >= 1 && raw <= 3 ? raw : raw % 8; }

// RFC 2203 5.2.1: an INIT or CONTINUE_INIT call carrying `token`.
Bytes InitCall(uint32_t xid, uint32_t gss_proc, uint32_t service, ByteView handle, ByteView token) {
  rpc::GssCred c;
  c.proc = gss_proc;
  c.seq = 0;
  c.service = service;
  c.handle = handle;
  Bytes cred, call;
  rpc::EncodeGssCred(c, &cred);
  rpc::EncodeCallPrefix(xid, rpc::kNfsProgram, rpc::kNfsVersion, 0, rpc::kRpcsecGss, cred, &call);
  rpc::XdrEncoder e(&call);
  e.PutU32(rpc::kAuthNone);
  e.PutOpaque({});
  e.PutOpaque(token);
  return call;
}

// The gss_major of an INIT reply, or ~0 if it is not an accepted INIT reply.
uint32_t InitMajor(ByteView reply) {
  rpc::ReplyHeader h;
  if (!rpc::DecodeReplyHeader(reply, &h).ok() || h.reply_stat != rpc::kMsgAccepted ||
      h.accept_stat != rpc::kSuccess) {
    return ~0u;
  }
  rpc::XdrDecoder d(reply.subspan(h.body_offset));
  ByteView handle;
  uint32_t major = ~0u;
  if (!d.GetOpaque(&handle, rpc::kMaxGssHandle, "handle").ok() || !d.GetU32(&major, "major").ok())
    return ~0u;
  return major;
}

void ResetWindow(Family& f) {
  auto ctx = f.data->FindContext(f.client->handle());
  Require(ctx != nullptr);
  std::lock_guard<std::mutex> lock(ctx->mu);
  ctx->seq_window.Reset();
}

void RunInit(World& w, Family& f, const GssCase& c) {
  if (f.init->context_count() >= kMaxInitContexts) f.init = w.NewCore(f.options);
  const uint32_t service = Service(c.service);
  Bytes token, reply;
  uint32_t gss_proc = rpc::kGssInit;
  Bytes handle;
  bool genuine = false;
  if (c.op == GssOp::kInitToken) {
    token = w.MintInitToken();
    genuine = c.mutations.empty() && c.cut == 0;
    Mutate(c.mutations, c.cut, 0, &token);
  } else if (c.op == GssOp::kInitRaw) {
    token = c.payload;
  } else {  // kContinueInit
    gss_proc = rpc::kGssContinueInit;
    ByteView p(c.payload);
    if (c.service & 1) {
      handle.assign(p.begin(), p.begin() + std::min<size_t>(8, p.size()));
      p = p.subspan(handle.size());
    } else {
      handle = f.client->handle();  // established: CONTINUE_INIT must be refused
    }
    token.assign(p.begin(), p.end());
  }
  Bytes call = InitCall(0x1000 + c.proc, gss_proc, service, handle, token);
  rpc::Disposition d = Send(*f.init, call, &reply);
  if (genuine && service >= 1 && service <= 3) {
    Require(d == rpc::Disposition::kReply);
    Require(InitMajor(reply) == GSS_S_COMPLETE);
  }
  // The same token on the data core's table is a second context of the
  // established fixture's server: also fine, and bounded by its table.
  if (c.op == GssOp::kContinueInit) {
    Bytes again = InitCall(0x2000, gss_proc, service, handle, token);
    Send(*f.data, again, &reply);
  }
}

void RunData(Family& f, const GssCase& c) {
  const uint32_t service = Service(c.service);
  const bool valid_service = service >= 1 && service <= 3;
  ByteView args(c.payload);
  Bytes record, reply, scratch;
  uint32_t xid = 0x5000;
  for (const DataCall& call : c.calls) {
    const uint32_t seq = c.base_seq + static_cast<uint32_t>(static_cast<int32_t>(call.seq_delta));
    Status s = f.client->EncodeCall(++xid, c.proc, service, seq, args, &record);
    if (!s.ok()) {
      Require(!s.message().empty());
      continue;
    }
    rpc::CallHeader ch;
    Require(rpc::DecodeCallHeader(record, &ch).ok());
    const bool altered = !call.mutations.empty();
    Mutate(call.mutations, 0, call.anywhere ? 0 : ch.body_offset, &record);
    rpc::CallCheck check;
    rpc::Disposition d = Send(*f.data, record, &reply, &check);
    if (altered || !valid_service) continue;
    // An unaltered call: what the server does follows from seq alone.
    if (seq >= rpc::kMaxGssSeq) {
      Require(d == rpc::Disposition::kReply);
      rpc::ReplyHeader h;
      Require(rpc::DecodeReplyHeader(reply, &h).ok());
      Require(h.reply_stat == rpc::kMsgDenied && h.auth_stat == rpc::kRpcsecGssCtxProblem);
      continue;
    }
    Require(check.checked && check.seq == seq);
    if (check.verdict != rpc::SeqVerdict::kAccept) {
      Require(d != rpc::Disposition::kReply);
      continue;
    }
    Require(d == rpc::Disposition::kReply);
    rpc::ReplyHeader h;
    ByteView results;
    Status r = f.client->DecodeReply(reply, service, seq, &scratch, &h, &results);
    if (h.reply_stat == rpc::kMsgAccepted && h.accept_stat == rpc::kSuccess) {
      Require(r.ok());  // the verifier and the sealed results must check out
    } else {
      Require(h.reply_stat == rpc::kMsgAccepted &&
              (h.accept_stat == rpc::kGarbageArgs || h.accept_stat == rpc::kProcUnavail));
      Require(!r.ok() && !r.message().empty());
    }
  }
}

void RunBody(Family& f, const GssCase& c) {
  const uint32_t service = Service(c.service);
  auto ctx = f.data->FindContext(f.client->handle());
  Require(ctx != nullptr);
  gss::ProtectorPool* pool = ctx->pool();
  Require(pool != nullptr);
  Bytes scratch, out, record;
  ByteView body;
  {
    auto lease = pool->Acquire();
    Require(lease.ok());
    // Arbitrary bytes as a body.
    Status s = rpc::OpenGssBody(**lease, service, c.base_seq, c.payload, &scratch, &body);
    if (!s.ok()) Require(!s.message().empty());
  }
  // A genuine body of this context, altered.
  if (service >= 1 && service <= 3 &&
      f.client->EncodeCall(7, c.proc, service, c.base_seq, c.payload, &record).ok()) {
    rpc::CallHeader ch;
    Require(rpc::DecodeCallHeader(record, &ch).ok());
    Bytes sealed(record.begin() + static_cast<ptrdiff_t>(ch.body_offset), record.end());
    const bool altered = !c.mutations.empty() || c.cut != 0;
    Mutate(c.mutations, c.cut, 0, &sealed);
    auto lease = pool->Acquire();
    Require(lease.ok());
    Status s = rpc::OpenGssBody(**lease, service, c.base_seq, sealed, &scratch, &body);
    if (!altered) {
      Require(s.ok());
      Require(body.size() == c.payload.size() &&
              std::equal(body.begin(), body.end(), c.payload.begin()));
    } else if (!s.ok()) {
      Require(!s.message().empty());
    }
  }
  // The server seals the payload as results; the client must open them.
  if (service >= 1 && service <= 3) {
    rpc::ReplyTarget t;
    t.xid = 9;
    t.flavor = rpc::kRpcsecGss;
    t.context = ctx;
    t.service = service;
    t.seq = c.base_seq;
    Bytes reply;
    Require(f.data->SealReply(t, rpc::kSuccess, c.payload, &reply).ok());
    Require(reply.size() <= MaxSealedReplyBytes(c.payload.size()));
    rpc::ReplyHeader h;
    ByteView results;
    Status s = f.client->DecodeReply(reply, service, c.base_seq, &scratch, &h, &results);
    Require(s.ok());
    Require(results.size() == c.payload.size() &&
            std::equal(results.begin(), results.end(), c.payload.begin()));
  }
}

void RunDestroy(Family& f, const GssCase& c) {
  Bytes record, reply;
  const uint32_t service = Service(c.service);
  Status s = f.client->EncodeCall(0x7000, 0, service, c.base_seq, {}, &record, rpc::kGssDestroy);
  if (!s.ok()) {  // a service the client cannot seal for
    Require(!s.message().empty());
    return;
  }
  const bool altered = !c.mutations.empty();
  Mutate(c.mutations, 0, 0, &record);
  rpc::Disposition d = Send(*f.data, record, &reply);
  if (!altered && service >= 1 && service <= 3 && c.base_seq < rpc::kMaxGssSeq) {
    Require(d == rpc::Disposition::kReply);
    Require(f.data->FindContext(f.client->handle()) == nullptr);
  }
}

}  // namespace

// The fixture is made before the first input, outside libFuzzer's per-input
// timeout (starting the KDC takes seconds on a loaded machine).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_world = new World();
  atexit(DestroyWorld);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = *g_world;
  const GssCase c = secmode::fuzz::DecodeGssCase(ByteView(data, size));
  Family& f = w.family(c.mit);
  if (f.data->FindContext(f.client->handle()) == nullptr) w.Establish(f);  // after a DESTROY
  ResetWindow(f);
  Bytes reply;
  switch (c.op) {
    case GssOp::kRawRecord: Send(*f.data, c.payload, &reply); break;
    case GssOp::kInitToken:
    case GssOp::kInitRaw:
    case GssOp::kContinueInit: RunInit(w, f, c); break;
    case GssOp::kData: RunData(f, c); break;
    case GssOp::kBody: RunBody(f, c); break;
    case GssOp::kDestroy: RunDestroy(f, c); break;
  }
  return 0;
}
