// RpcServerCore against a real realm: RPCSEC_GSS context creation, the three
// services, and every kind of bad input the RFCs give an answer for.
#include "rpc/server_core.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <vector>

#include "rpc/client_auth.h"
#include "rpc/gss_client.h"
#include "rpc/nfs.h"
#include "rpc/xdr.h"
#include "tests/gss/kinit_user.h"
#include "tests/rpc/in_process_gss.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;

class ServerCoreTest : public ::testing::Test {
 protected:
  void Start(WindowPolicy policy = WindowPolicy::kDrop, uint32_t window = 16,
             size_t max_contexts = 16384) {
    ServerOptions so;
    so.max_contexts = max_contexts;
    so.window = window;
    so.policy = policy;
    auto core = inproc::StartGssCore(nfs_, so);
    ASSERT_TRUE(core.ok()) << core.status().ToString();
    core_ = std::move(core).value();
    auto ctx = inproc::EstablishInProcess(*core_);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    ctx_ = std::move(ctx).value();
    EXPECT_EQ(ctx_->window(), window);
  }

  Bytes GetattrArgs() {
    Bytes args;
    NfsRequest r;
    EncodeCompoundArgs(r, &args);
    return args;
  }

  Bytes GssCall(uint32_t service, uint32_t seq, uint32_t proc = kNfsProcCompound,
                uint32_t gss_proc = kGssData) {
    Bytes rec;
    EXPECT_TRUE(ctx_->EncodeCall(seq, proc, service, seq, GetattrArgs(), &rec, gss_proc).ok());
    return rec;
  }

  // Sends a record; returns the disposition and the decoded reply header.
  Disposition Send(ByteView rec, ReplyHeader* h) {
    reply_.clear();
    Disposition d = core_->HandleCall(rec, &reply_);
    if (d == Disposition::kReply) {
      EXPECT_TRUE(DecodeReplyHeader(reply_, h).ok());
    }
    return d;
  }

  void ExpectDenied(ByteView rec, uint32_t auth_stat) {
    ReplyHeader h;
    ASSERT_EQ(Send(rec, &h), Disposition::kReply);
    EXPECT_EQ(h.reply_stat, static_cast<uint32_t>(kMsgDenied));
    EXPECT_EQ(h.reject_stat, static_cast<uint32_t>(kAuthError));
    EXPECT_EQ(h.auth_stat, auth_stat) << DescribeReply(h);
  }

  void ExpectAccepted(ByteView rec, uint32_t accept_stat) {
    ReplyHeader h;
    ASSERT_EQ(Send(rec, &h), Disposition::kReply);
    EXPECT_EQ(h.reply_stat, static_cast<uint32_t>(kMsgAccepted)) << DescribeReply(h);
    EXPECT_EQ(h.accept_stat, accept_stat) << DescribeReply(h);
  }

  MemoryNfsServer nfs_;
  std::unique_ptr<RpcServerCore> core_;
  std::shared_ptr<GssClientContext> ctx_;
  Bytes reply_;
};

TEST_F(ServerCoreTest, ServesEveryServiceAndChecksReplies) {
  Start();
  for (uint32_t service : {kGssSvcNone, kGssSvcIntegrity, kGssSvcPrivacy}) {
    for (NfsOp op : {NfsOp::kGetattr, NfsOp::kRead, NfsOp::kWrite}) {
      NfsRequest r;
      r.op = op;
      r.count = op == NfsOp::kGetattr ? 0 : 4096;
      r.offset = 8192;
      Bytes args, rec;
      EncodeCompoundArgs(r, &args);
      uint32_t seq = ctx_->NextSeq();
      ASSERT_TRUE(ctx_->EncodeCall(seq, kNfsProcCompound, service, seq, args, &rec).ok());
      if (service == kGssSvcPrivacy && op == NfsOp::kWrite) {
        // Privacy: the data must not be visible on the wire.
        ByteView data = WritePattern(r.offset, r.count);
        auto it = std::search(rec.begin(), rec.end(), data.begin(), data.begin() + 64);
        EXPECT_EQ(it, rec.end());
      }
      ASSERT_EQ(core_->HandleCall(rec, &reply_), Disposition::kReply);
      Bytes scratch;
      ReplyHeader h;
      ByteView results;
      auto s = ctx_->DecodeReply(reply_, service, seq, &scratch, &h, &results);
      ASSERT_TRUE(s.ok()) << GssServiceName(service) << " " << NfsOpName(op) << ": "
                          << s.ToString();
      EXPECT_TRUE(CheckCompoundResults(r, results).ok());
    }
  }
  EXPECT_EQ(core_->counters().contexts_created, 1u);
}

TEST_F(ServerCoreTest, UnknownProgramVersionProcedureAndRpcVersion) {
  Start();
  auto sys = NewSysAuth(999, 1);
  Bytes rec;
  uint32_t seq;
  ASSERT_TRUE(sys->EncodeCall(1, 0, {}, &rec, &seq).ok());
  ExpectAccepted(rec, kProgUnavail);
  auto v3 = NewSysAuth(kNfsProgram, 3);
  ASSERT_TRUE(v3->EncodeCall(2, 0, {}, &rec, &seq).ok());
  ReplyHeader h;
  ASSERT_EQ(Send(rec, &h), Disposition::kReply);
  EXPECT_EQ(h.accept_stat, static_cast<uint32_t>(kProgMismatch));
  EXPECT_EQ(h.mismatch_low, 4u);
  auto nfs = NewSysAuth(kNfsProgram, kNfsVersion);
  ASSERT_TRUE(nfs->EncodeCall(3, 7, {}, &rec, &seq).ok());
  ExpectAccepted(rec, kProcUnavail);
  ASSERT_TRUE(nfs->EncodeCall(4, 0, {}, &rec, &seq).ok());
  rec[11] = 3;  // rpcvers 3
  ASSERT_EQ(Send(rec, &h), Disposition::kReply);
  EXPECT_EQ(h.reply_stat, static_cast<uint32_t>(kMsgDenied));
  EXPECT_EQ(h.reject_stat, static_cast<uint32_t>(kRpcMismatch));
  // The GSS path answers the same way (with a verifier).
  uint32_t gseq = ctx_->NextSeq();
  ASSERT_TRUE(ctx_->EncodeCall(gseq, 9, kGssSvcNone, gseq, {}, &rec).ok());
  ExpectAccepted(rec, kProcUnavail);
}

TEST_F(ServerCoreTest, GarbageIsDroppedOrAnsweredGarbageArgs) {
  Start();
  Bytes junk = common::PatternBytes(100, 3);
  ReplyHeader h;
  EXPECT_EQ(Send(junk, &h), Disposition::kDrop);
  Bytes shortrec = {0, 0, 0, 1, 0, 0};
  EXPECT_EQ(Send(shortrec, &h), Disposition::kDrop);
  auto nfs = NewSysAuth(kNfsProgram, kNfsVersion);
  Bytes rec;
  uint32_t seq;
  ASSERT_TRUE(nfs->EncodeCall(5, kNfsProcCompound, common::PatternBytes(13, 9), &rec, &seq).ok());
  ExpectAccepted(rec, kGarbageArgs);
  // Truncated COMPOUND args under krb5i.
  Bytes args = GetattrArgs();
  args.resize(args.size() - 6);
  uint32_t s2 = ctx_->NextSeq();
  ASSERT_TRUE(ctx_->EncodeCall(s2, kNfsProcCompound, kGssSvcIntegrity, s2, args, &rec).ok());
  ExpectAccepted(rec, kGarbageArgs);
  EXPECT_GE(core_->counters().undecodable, 2u);
}

TEST_F(ServerCoreTest, CredentialProblems) {
  Start();
  // Credential body starts at offset 32: xid, type, rpcvers, prog, vers,
  // proc, flavor, length. Version is its first word; the handle follows
  // version, proc, seq, service and its length (offset 32 + 20).
  Bytes rec = GssCall(kGssSvcNone, ctx_->NextSeq());
  rec[35] = 2;
  ExpectDenied(rec, kAuthBadCred);
  rec = GssCall(kGssSvcNone, ctx_->NextSeq());
  rec[47] = 7;  // service 7
  ExpectDenied(rec, kAuthBadCred);
  rec = GssCall(kGssSvcNone, ctx_->NextSeq());
  rec[52] ^= 0xff;  // unknown handle
  ExpectDenied(rec, kRpcsecGssCredProblem);
  // Bad verifier: flip a byte of the header MIC.
  rec = GssCall(kGssSvcNone, ctx_->NextSeq());
  CallHeader ch;
  ASSERT_TRUE(DecodeCallHeader(rec, &ch).ok());
  rec[ch.body_offset - 2] ^= 0x01;
  ExpectDenied(rec, kRpcsecGssCredProblem);
  // Header tampering after the MIC was taken (procedure number).
  rec = GssCall(kGssSvcNone, ctx_->NextSeq());
  rec[23] ^= 0x01;
  ExpectDenied(rec, kRpcsecGssCredProblem);
  // seq_num at MAXSEQ.
  rec = GssCall(kGssSvcNone, kMaxGssSeq);
  ExpectDenied(rec, kRpcsecGssCtxProblem);
  // AUTH_SYS with a broken body.
  Bytes bad_cred = {0, 0, 0, 1, 0, 0, 0, 200};
  Bytes call;
  EncodeCallPrefix(77, kNfsProgram, kNfsVersion, 0, kAuthSys, bad_cred, &call);
  XdrEncoder(&call).PutU32(0);
  XdrEncoder(&call).PutU32(0);
  ExpectDenied(call, kAuthBadCred);
}

TEST_F(ServerCoreTest, BadIntegrityChecksumAndPrivacyTokenAreGarbageArgs) {
  Start();
  Bytes rec = GssCall(kGssSvcIntegrity, ctx_->NextSeq());
  rec[rec.size() - 3] ^= 0x40;  // inside the checksum
  ExpectAccepted(rec, kGarbageArgs);
  rec = GssCall(kGssSvcIntegrity, ctx_->NextSeq());
  CallHeader ch;
  ASSERT_TRUE(DecodeCallHeader(rec, &ch).ok());
  rec[ch.body_offset + 20] ^= 0x40;  // inside databody_integ
  ExpectAccepted(rec, kGarbageArgs);
  rec = GssCall(kGssSvcPrivacy, ctx_->NextSeq());
  rec[rec.size() - 40] ^= 0x40;  // inside the wrap token
  ExpectAccepted(rec, kGarbageArgs);
  EXPECT_EQ(core_->counters().garbage_args, 3u);
  // The context still works afterwards.
  rec = GssCall(kGssSvcPrivacy, ctx_->NextSeq());
  ExpectAccepted(rec, kSuccess);
}

TEST_F(ServerCoreTest, ReplayAndBelowWindowAreDropped) {
  Start(WindowPolicy::kDrop, 16);
  uint32_t s = ctx_->NextSeq();
  Bytes rec = GssCall(kGssSvcIntegrity, s);
  ExpectAccepted(rec, kSuccess);
  ReplyHeader h;
  EXPECT_EQ(Send(rec, &h), Disposition::kDrop);  // replayed
  Bytes old = GssCall(kGssSvcNone, s + 1);
  Bytes newer = GssCall(kGssSvcNone, s + 40);
  ExpectAccepted(newer, kSuccess);
  EXPECT_EQ(Send(old, &h), Disposition::kDrop);  // 39 below the highest, window 16
  auto c = core_->counters();
  EXPECT_EQ(c.duplicates, 1u);
  EXPECT_EQ(c.below_window, 1u);
  ExpectAccepted(GssCall(kGssSvcNone, s + 30), kSuccess);  // inside, late: fine
}

TEST_F(ServerCoreTest, DropDisconnectPolicy) {
  Start(WindowPolicy::kDropDisconnect, 16);
  Bytes rec = GssCall(kGssSvcNone, 5);
  ExpectAccepted(rec, kSuccess);
  ReplyHeader h;
  EXPECT_EQ(Send(rec, &h), Disposition::kDropDisconnect);
  EXPECT_EQ(core_->counters().disconnects, 1u);
}

TEST_F(ServerCoreTest, DiscardContextPolicyForcesANewContext) {
  Start(WindowPolicy::kDiscardContext, 16);
  ExpectAccepted(GssCall(kGssSvcNone, 100), kSuccess);
  ReplyHeader h;
  EXPECT_EQ(Send(GssCall(kGssSvcNone, 10), &h), Disposition::kDrop);
  EXPECT_EQ(core_->counters().contexts_discarded, 1u);
  ExpectDenied(GssCall(kGssSvcNone, 101), kRpcsecGssCredProblem);
  EXPECT_EQ(core_->context_count(), 0u);
}

TEST_F(ServerCoreTest, DestroyRemovesTheContext) {
  Start();
  uint32_t s = ctx_->NextSeq();
  Bytes rec;
  ASSERT_TRUE(ctx_->EncodeCall(s, 0, kGssSvcNone, s, {}, &rec, kGssDestroy).ok());
  ASSERT_EQ(core_->HandleCall(rec, &reply_), Disposition::kReply);
  Bytes scratch;
  ReplyHeader h;
  ByteView results;
  ASSERT_TRUE(ctx_->DecodeReply(reply_, kGssSvcNone, s, &scratch, &h, &results).ok());
  EXPECT_EQ(core_->counters().contexts_destroyed, 1u);
  ExpectDenied(GssCall(kGssSvcNone, ctx_->NextSeq()), kRpcsecGssCredProblem);
}

TEST_F(ServerCoreTest, ContinueInitWithUnknownHandleAndGarbageToken) {
  Start();
  GssCred c;
  c.proc = kGssContinueInit;
  Bytes handle = {9, 9, 9, 9};
  c.handle = handle;
  Bytes cred, rec;
  EncodeGssCred(c, &cred);
  EncodeCallPrefix(1, kNfsProgram, kNfsVersion, 0, kRpcsecGss, cred, &rec);
  XdrEncoder e(&rec);
  e.PutU32(kAuthNone);
  e.PutU32(0);
  e.PutOpaque(common::AsBytes("token"));
  ExpectDenied(rec, kRpcsecGssCredProblem);
  // INIT with a token that is not a GSS token: answered with a GSS error
  // in rpc_gss_init_res, and no context is kept.
  c.proc = kGssInit;
  c.handle = {};
  cred.clear();
  rec.clear();
  EncodeGssCred(c, &cred);
  EncodeCallPrefix(2, kNfsProgram, kNfsVersion, 0, kRpcsecGss, cred, &rec);
  XdrEncoder e2(&rec);
  e2.PutU32(kAuthNone);
  e2.PutU32(0);
  e2.PutOpaque(common::PatternBytes(50, 1));
  size_t before = core_->context_count();
  ReplyHeader h;
  ASSERT_EQ(Send(rec, &h), Disposition::kReply);
  ASSERT_EQ(h.accept_stat, static_cast<uint32_t>(kSuccess));
  XdrDecoder d(ByteView(reply_).subspan(h.body_offset));
  ByteView rh;
  uint32_t major;
  ASSERT_TRUE(d.GetOpaque(&rh, 64, "handle").ok());
  ASSERT_TRUE(d.GetU32(&major, "major").ok());
  EXPECT_NE(major, 0u);
  EXPECT_TRUE(rh.empty());
  EXPECT_EQ(core_->context_count(), before);
}

// The table holds max_contexts; a newcomer evicts the least recently used
// (here the one established but never used), says so in the log, and the
// one in use keeps working.
TEST_F(ServerCoreTest, FullContextTableEvictsTheLeastRecentlyUsed) {
  std::vector<std::string> lines;
  std::mutex lines_mu;
  ServerOptions so;
  so.max_contexts = 2;
  so.window = 16;
  so.log = [&](const std::string& l) {
    std::lock_guard<std::mutex> lock(lines_mu);
    lines.push_back(l);
  };
  auto core = inproc::StartGssCore(nfs_, so);
  ASSERT_TRUE(core.ok()) << core.status().ToString();
  core_ = std::move(core).value();
  auto first = inproc::EstablishInProcess(*core_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ctx_ = *first;
  auto idle = inproc::EstablishInProcess(*core_);
  ASSERT_TRUE(idle.ok()) << idle.status().ToString();
  // Use the first one after the second was made (the use clock is coarse:
  // a few ms), so the second is the least recently used.
  usleep(30000);
  ExpectAccepted(GssCall(kGssSvcNone, ctx_->NextSeq()), kSuccess);
  usleep(30000);
  auto third = inproc::EstablishInProcess(*core_);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(core_->context_count(), 2u);
  EXPECT_EQ(core_->counters().contexts_evicted, 1u);
  ExpectAccepted(GssCall(kGssSvcNone, ctx_->NextSeq()), kSuccess);
  ctx_ = *idle;  // evicted: its client hears CREDPROBLEM
  ExpectDenied(GssCall(kGssSvcNone, ctx_->NextSeq()), kRpcsecGssCredProblem);
  ctx_ = *third;
  ExpectAccepted(GssCall(kGssSvcNone, ctx_->NextSeq()), kSuccess);
  std::lock_guard<std::mutex> lock(lines_mu);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("context table full (2 contexts): evicted the 1 least recently used"),
            std::string::npos)
      << lines[0];
}

// Eviction takes from the principals holding the most: one principal (the
// realm's user) that makes context after context evicts only its own, and
// another principal's context, idle and older than all of them, survives.
TEST_F(ServerCoreTest, OnePrincipalChurningEvictsOnlyItsOwnContexts) {
  gss::Realm* realm = testing::SharedRealm();
  const std::string alice_ccache = "FILE:" + realm->dir() + "/alice-server-core.ccache";
  ASSERT_TRUE(testing::KinitUser(*realm, alice_ccache).ok());
  std::vector<std::string> lines;
  ServerOptions so;
  so.max_contexts = 4;
  so.log = [&](const std::string& l) { lines.push_back(l); };
  auto core = inproc::StartGssCore(nfs_, so);
  ASSERT_TRUE(core.ok()) << core.status().ToString();
  core_ = std::move(core).value();
  GssClientConfig cfg;
  cfg.ccache = alice_ccache;
  cfg.prog = kNfsProgram;
  cfg.vers = kNfsVersion;
  auto alice = GssClientContext::Establish(cfg, [&](ByteView call) -> common::Result<Bytes> {
    Bytes reply;
    if (core_->HandleCall(call, &reply) != Disposition::kReply) {
      return common::Status::Internal("dropped");
    }
    return reply;
  });
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();
  usleep(30000);  // the use clock is coarse: alice's is the oldest by far
  std::shared_ptr<GssClientContext> newest;
  for (int i = 0; i < 12; ++i) {
    auto churn = inproc::EstablishInProcess(*core_);
    ASSERT_TRUE(churn.ok()) << churn.status().ToString();
    newest = *churn;
  }
  EXPECT_EQ(core_->context_count(), 4u);
  EXPECT_EQ(core_->counters().contexts_evicted, 9u);
  ctx_ = *alice;
  ExpectAccepted(GssCall(kGssSvcNone, ctx_->NextSeq()), kSuccess);
  ctx_ = newest;
  ExpectAccepted(GssCall(kGssSvcNone, ctx_->NextSeq()), kSuccess);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("of the 1 principal(s) holding the most"), std::string::npos) << lines[0];
}

TEST_F(ServerCoreTest, IdleContextsExpire) {
  ServerOptions so;
  so.context_idle_seconds = 0.1;
  auto core = inproc::StartGssCore(nfs_, so);
  ASSERT_TRUE(core.ok()) << core.status().ToString();
  core_ = std::move(core).value();
  auto used = inproc::EstablishInProcess(*core_);
  auto swept = inproc::EstablishInProcess(*core_);
  ASSERT_TRUE(used.ok() && swept.ok());
  ctx_ = *used;
  ExpectAccepted(GssCall(kGssSvcNone, ctx_->NextSeq()), kSuccess);
  EXPECT_EQ(core_->ExpireIdleContexts(), 0u);  // both in use just now
  usleep(250000);
  // A call on an expired context: CREDPROBLEM (the client makes a new one).
  ExpectDenied(GssCall(kGssSvcNone, ctx_->NextSeq()), kRpcsecGssCredProblem);
  EXPECT_EQ(core_->context_count(), 1u);
  // The sweep forgets the other one without any call.
  EXPECT_EQ(core_->ExpireIdleContexts(), 1u);
  EXPECT_EQ(core_->context_count(), 0u);
  EXPECT_EQ(core_->counters().contexts_expired, 2u);
}

// Calls one INIT exchange through `core`, keeping the first INIT call.
common::Result<std::shared_ptr<GssClientContext>> EstablishCapturing(RpcServerCore& core,
                                                                     Bytes* init_call) {
  GssClientConfig cfg;
  cfg.ccache = testing::SharedRealm()->ccache();
  cfg.prog = kNfsProgram;
  cfg.vers = kNfsVersion;
  return GssClientContext::Establish(cfg, [&](ByteView call) -> common::Result<Bytes> {
    if (init_call->empty()) init_call->assign(call.begin(), call.end());
    Bytes reply;
    if (core.HandleCall(call, &reply) != Disposition::kReply) {
      return common::Status::Internal("dropped");
    }
    return reply;
  });
}

// The major status and the handle of an rpc_gss_init_res reply.
void DecodeInitRes(ByteView reply, uint32_t* major, size_t* handle_size) {
  ReplyHeader h;
  ASSERT_TRUE(DecodeReplyHeader(reply, &h).ok());
  ASSERT_EQ(h.accept_stat, static_cast<uint32_t>(kSuccess)) << DescribeReply(h);
  XdrDecoder d(reply.subspan(h.body_offset));
  ByteView handle;
  ASSERT_TRUE(d.GetOpaque(&handle, 64, "handle").ok());
  ASSERT_TRUE(d.GetU32(major, "major").ok());
  *handle_size = handle.size();
}

// MIT's replay cache (kept in the realm's directory) refuses a captured
// INIT sent again: it makes no second context and takes no place. The
// environment cannot turn it off: MIT reads KRB5RCACHENAME first, then
// KRB5RCACHETYPE, for an acceptor that names no cache of its own.
TEST_F(ServerCoreTest, ReplayedInitIsRefusedByTheReplayCache) {
  ASSERT_NE(testing::SharedRealm(), nullptr);  // started first: it clears the variables
  const std::vector<std::pair<const char*, const char*>> envs = {
      {"KRB5RCACHETYPE", nullptr}, {"KRB5RCACHETYPE", "none"}, {"KRB5RCACHENAME", "none:"}};
  for (const auto& [var, value] : envs) {
    SCOPED_TRACE(std::string(var) + "=" + (value ? value : "(unset)"));
    testing::ScopedEnv env(var, value);
    auto core = inproc::StartGssCore(nfs_, ServerOptions{});
    ASSERT_TRUE(core.ok()) << core.status().ToString();
    core_ = std::move(core).value();
    Bytes init;
    auto ctx = EstablishCapturing(*core_, &init);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    ASSERT_FALSE(init.empty());
    EXPECT_EQ(core_->context_count(), 1u);
    for (int i = 0; i < 3; ++i) {
      Bytes reply;
      ASSERT_EQ(core_->HandleCall(init, &reply), Disposition::kReply);
      uint32_t major = 0;
      size_t handle_size = 0;
      DecodeInitRes(reply, &major, &handle_size);
      EXPECT_TRUE(GSS_ERROR(major)) << "replay " << i << " accepted, major 0x" << std::hex << major;
      EXPECT_EQ(handle_size, 0u);
    }
    EXPECT_EQ(core_->context_count(), 1u);
    EXPECT_EQ(core_->counters().contexts_created, 1u);
  }
}

// ... and only when the server is told to run without it does the same
// replay make a new context each time (what filled the table before).
TEST_F(ServerCoreTest, WithoutTheReplayCacheAReplayedInitMakesAContext) {
  ServerOptions so;
  so.replay_cache = false;
  auto core = inproc::StartGssCore(nfs_, so);
  ASSERT_TRUE(core.ok()) << core.status().ToString();
  core_ = std::move(core).value();
  Bytes init;
  auto ctx = EstablishCapturing(*core_, &init);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  Bytes reply;
  ASSERT_EQ(core_->HandleCall(init, &reply), Disposition::kReply);
  uint32_t major = 1;
  size_t handle_size = 0;
  DecodeInitRes(reply, &major, &handle_size);
  EXPECT_EQ(major, 0u);
  EXPECT_EQ(core_->context_count(), 2u);
}

}  // namespace
}  // namespace secmode::rpc
