// libFuzzer target: `secmode probe`'s reply path (rpc/probe_replies.h and
// what rpc/window_probe.cc does with a reply): a stream the input builds
// from genuine replies (altered or not) and bytes of its own, fed to
// ProbeReplies in chunks whose size the input picks; each record handed out
// goes through the reply header decoder, DescribeReply and the client's
// RPCSEC_GSS reply check (GssClientContext::DecodeReply: the verifier MIC
// over the sequence number, the body of the service), as the probe's
// Classify does; the late replies are taken at the end, as Judge does.
//
// Fixture, made once per process: a throwaway MIT realm (gss/realm.h), an
// RpcServerCore with its service keytab, an RPCSEC_GSS context (krb5i)
// established through it in-process, and the server's genuine replies to
// kCalls NULL calls of that context (sequence numbers 1..kCalls, xids
// kXidBase + i): the seeds name them by index, so they need no keys.
//
// Input (FuzzReader, total): chunk size byte (1..256), the number of calls
// "sent" (1..kCalls), then items until the input ends:
//   0  genuine reply i (byte), with a byte xor-ed at a 16-bit offset (an
//      offset past the end: unaltered), framed as one record
//   1  raw stream bytes (16-bit length, then the bytes)
//   2  a record mark (32 bits, as given) alone
//   3  a record: xid of call i or a 32-bit one, body of a 16-bit length
// What must hold, or the target crashes:
//   - ProbeReplies keeps at most kProbeMaxPending replies of at most
//     kProbeMaxRecord bytes (whatever the stream);
//   - every record handed out is the reply to the xid waited for;
//   - the server's reply to the call waited for, byte for byte, passes the
//     check;
//   - a reply the check refuses gets a message naming the cause.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "gss/realm.h"
#include "rpc/gss_client.h"
#include "rpc/nfs.h"
#include "rpc/probe_replies.h"
#include "rpc/record.h"
#include "rpc/rpc_msg.h"
#include "rpc/server_core.h"
#include "tests/fuzz/fuzz_io.h"

namespace {

using secmode::common::Bytes;
using secmode::common::ByteView;
using secmode::common::Result;
using secmode::common::Status;
namespace gss = secmode::gss;
namespace rpc = secmode::rpc;
using secmode::fuzz::FuzzReader;
using secmode::fuzz::Require;

constexpr uint32_t kCalls = 8;
constexpr uint32_t kXidBase = 0x70000000;
constexpr uint32_t kService = rpc::kGssSvcIntegrity;

void Fail(const char* what, const Status& s) {
  fprintf(stderr, "rpc_probe_fuzzer fixture: %s: %s\n", what, s.ToString().c_str());
  abort();
}

struct World {
  World() {
    auto realm = gss::Realm::Start();
    if (!realm.ok()) Fail("realm", realm.status());
    realm_ = std::move(realm).value();
    rpc::ServerOptions options;
    options.keytab = realm_->service_keytab();
    auto c = rpc::RpcServerCore::Create(options, {nfs_.Program()});
    if (!c.ok()) Fail("server core", c.status());
    core_ = std::move(c).value();
    rpc::GssClientConfig cfg;
    cfg.ccache = realm_->ccache();
    cfg.target = realm_->service_hostbased();
    cfg.prog = rpc::kNfsProgram;
    cfg.vers = rpc::kNfsVersion;
    cfg.service = kService;
    auto client = rpc::GssClientContext::Establish(cfg, [this](ByteView call) -> Result<Bytes> {
      Bytes reply;
      if (core_->HandleCall(call, &reply) != rpc::Disposition::kReply) {
        return Status::Internal("INIT call dropped");
      }
      return reply;
    });
    if (!client.ok()) Fail("establishing the context", client.status());
    ctx = std::move(client).value();
    for (uint32_t i = 0; i < kCalls; ++i) {
      Bytes call;
      Status s = ctx->EncodeCall(kXidBase + i, 0, kService, i + 1, {}, &call);
      if (!s.ok()) Fail("a NULL call", s);
      if (core_->HandleCall(call, &replies[i]) != rpc::Disposition::kReply) {
        Fail("a NULL call", Status::Internal("no reply"));
      }
    }
  }

  std::unique_ptr<gss::Realm> realm_;
  rpc::MemoryNfsServer nfs_;
  std::unique_ptr<rpc::RpcServerCore> core_;
  std::shared_ptr<rpc::GssClientContext> ctx;
  Bytes replies[kCalls];
};

World* g_world = nullptr;

// The realm's KDC is stopped and its directory removed at exit (libFuzzer
// ends with exit()); a crash leaves that to the realm's reaper.
void DestroyWorld() {
  delete g_world;
  g_world = nullptr;
}

void Append(ByteView record, Bytes* stream) {
  Bytes framed;
  rpc::FrameRecord(record, &framed);
  stream->insert(stream->end(), framed.begin(), framed.end());
}

// What window_probe.cc's Classify does with a reply to call `i`.
void Classify(ByteView rec, uint32_t i, bool genuine) {
  rpc::ReplyHeader h;
  Bytes scratch;
  ByteView results;
  Status st = g_world->ctx->DecodeReply(rec, kService, i + 1, &scratch, &h, &results);
  if (genuine) Require(st.ok());
  if (!st.ok()) Require(!st.message().empty());
  rpc::ReplyHeader bare;
  if (rpc::DecodeReplyHeader(rec, &bare).ok()) (void)rpc::DescribeReply(bare);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_world = new World();
  atexit(DestroyWorld);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzReader in(ByteView(data, size));
  const size_t chunk = size_t{in.U8()} + 1;
  const uint32_t calls = in.U8() % kCalls + 1;
  Bytes stream;
  for (int items = 0; items < 256 && !in.Done(); ++items) {
    switch (in.U8() % 4) {
      case 0: {
        const uint32_t i = in.U8() % kCalls;
        Bytes r = g_world->replies[i];
        const uint16_t off = in.U16();
        const uint8_t x = in.U8();
        if (off < r.size()) r[off] ^= x;
        Append(r, &stream);
        break;
      }
      case 1: {
        ByteView raw = in.Bytes(in.U16());
        stream.insert(stream.end(), raw.begin(), raw.end());
        break;
      }
      case 2: {
        const uint32_t mark = in.U32();
        for (int s = 24; s >= 0; s -= 8) stream.push_back(static_cast<uint8_t>(mark >> s));
        break;
      }
      default: {
        const uint8_t which = in.U8();
        const uint32_t xid = which < 128 ? kXidBase + which % kCalls : in.U32();
        Bytes r;
        for (int s = 24; s >= 0; s -= 8) r.push_back(static_cast<uint8_t>(xid >> s));
        ByteView body = in.Bytes(in.U16());
        r.insert(r.end(), body.begin(), body.end());
        Append(r, &stream);
        break;
      }
    }
  }
  rpc::ProbeReplies replies;
  for (uint32_t i = 0; i < calls; ++i) replies.Sent(kXidBase + i);
  // The probe waits for its calls in order; each handed-out reply is
  // classified and the next call is waited for.
  uint32_t waited = 0;
  for (size_t off = 0; off < stream.size() && waited < calls; off += chunk) {
    replies.Feed(ByteView(stream).subspan(off, std::min(chunk, stream.size() - off)));
    while (waited < calls) {
      Bytes rec;
      auto got = replies.Next(kXidBase + waited, &rec);
      if (!got.ok()) {
        Require(!got.status().message().empty());
        waited = calls;  // the probe closes the connection
        break;
      }
      Require(replies.kept() <= rpc::kProbeMaxPending);
      Require(replies.kept_bytes() <= rpc::kProbeMaxPending * rpc::kProbeMaxRecord);
      if (!*got) break;
      uint32_t xid = 0;
      Require(rpc::MessageXid(rec, &xid) && xid == kXidBase + waited);
      Require(rec.size() <= rpc::kProbeMaxRecord);
      // The server's reply to this call, byte for byte, must pass.
      Classify(rec, waited, rec == g_world->replies[waited]);
      ++waited;
    }
  }
  // Judge: the late answers to calls not waited for.
  for (uint32_t i = waited; i < calls; ++i) {
    Bytes late;
    if (replies.Take(kXidBase + i, &late)) Classify(late, i, late == g_world->replies[i]);
  }
  Require(replies.pending() <= rpc::kProbeMaxPending);
  return 0;
}
