// The sequence window as its two users see it: the RPC server
// (RpcServerCore, fed real RPCSEC_GSS DATA calls under a context from the
// throwaway realm, its verdicts read from its replies and its duplicate /
// below-window counters) and the nconnect simulator's server
// (sim::ServerWindow, what the simulator calls for every call its server
// looks at). The same numbers must get the same verdicts from both, and the
// verdicts RFC 2203 section 5.3.3.1 gives.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "rpc/gss_client.h"
#include "rpc/nfs.h"
#include "rpc/sequence_window.h"
#include "rpc/server_core.h"
#include "sim/server_window.h"
#include "tests/rpc/in_process_gss.h"
#include "tests/rpc/rfc2203_window_model.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;
using V = SeqVerdict;

std::string Name(V v) {
  switch (v) {
    case V::kAccept: return "accept";
    case V::kDuplicate: return "duplicate";
    case V::kBelowWindow: return "below-window";
  }
  return "?";
}

class WindowUsersTest : public ::testing::Test {
 protected:
  void Start(uint32_t window) {
    ServerOptions so;
    so.window = window;
    so.policy = WindowPolicy::kDrop;  // the context survives every rejection
    auto core = inproc::StartGssCore(nfs_, so);
    ASSERT_TRUE(core.ok()) << core.status().ToString();
    core_ = std::move(core).value();
    auto ctx = inproc::EstablishInProcess(*core_);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    ctx_ = std::move(ctx).value();
    ASSERT_EQ(ctx_->window(), window);
    args_.clear();
    EncodeCompoundArgs(NfsRequest{}, &args_);
  }

  // One krb5i GETATTR call numbered `seq`; the server's verdict as its
  // reply and counters tell it. "" on success, else what went wrong.
  std::string ServerVerdict(uint32_t seq, V* verdict) {
    const ServerCounters before = core_->counters();
    Bytes rec, reply;
    if (!ctx_->EncodeCall(++xid_, kNfsProcCompound, kGssSvcIntegrity, seq, args_, &rec).ok()) {
      return "encode failed";
    }
    const Disposition d = core_->HandleCall(rec, &reply);
    const ServerCounters after = core_->counters();
    const uint64_t dup = after.duplicates - before.duplicates;
    const uint64_t below = after.below_window - before.below_window;
    if (d == Disposition::kReply) {
      Bytes scratch;
      ReplyHeader h;
      ByteView results;
      common::Status s = ctx_->DecodeReply(reply, kGssSvcIntegrity, seq, &scratch, &h, &results);
      if (!s.ok()) return "reply: " + s.ToString();
      if (dup + below != 0) return "answered, yet counted as a window rejection";
      *verdict = V::kAccept;
      return "";
    }
    if (d != Disposition::kDrop) return "not dropped silently";
    if (dup + below != 1) return "dropped, counted " + std::to_string(dup + below) + " times";
    *verdict = dup == 1 ? V::kDuplicate : V::kBelowWindow;
    return "";
  }

  MemoryNfsServer nfs_;
  std::unique_ptr<RpcServerCore> core_;
  std::shared_ptr<GssClientContext> ctx_;
  Bytes args_;
  uint32_t xid_ = 100;
};

struct Step {
  uint32_t seq;
  V rfc;  // RFC 2203 5.3.3.1's verdict with seq_window 16
  const char* why;
};

TEST_F(WindowUsersTest, ServerAndSimulatorGiveTheRfcVerdicts) {
  constexpr uint32_t kWindow = 16;
  const Step steps[] = {
      {1, V::kAccept, "first number"},
      {2, V::kAccept, "in order"},
      {3, V::kAccept, "in order"},
      {5, V::kAccept, "a gap: the window moves up to 5"},
      {4, V::kAccept, "reordered, inside and not seen"},
      {4, V::kDuplicate, "seen"},
      {40, V::kAccept, "a jump: the window is now 25..40"},
      {25, V::kAccept, "exactly size - 1 below: the lowest number inside"},
      {24, V::kBelowWindow, "exactly size below"},
      {25, V::kDuplicate, "seen"},
      {3, V::kBelowWindow, "seen long ago, now below: below wins"},
      {41, V::kAccept, "in order: the window is now 26..41"},
      {26, V::kAccept, "the lowest number inside"},
      {25, V::kBelowWindow, "accepted before, now exactly size below"},
      {300, V::kAccept, "a jump beyond the ring"},
      {236, V::kBelowWindow, "shares 300's ring slot: below, not a duplicate"},
      {285, V::kAccept, "size - 1 below, its slot cleared by the jump"},
      {284, V::kBelowWindow, "exactly size below"},
      {299, V::kAccept, "reordered"},
      {299, V::kDuplicate, "seen"},
      {300, V::kDuplicate, "the highest itself, seen"},
      {301, V::kAccept, "in order"},
  };
  Start(kWindow);
  sim::ServerWindow simulated(kWindow);
  Rfc2203WindowModel model(kWindow);
  uint64_t duplicates = 0, below = 0;
  for (const Step& step : steps) {
    SCOPED_TRACE(std::to_string(step.seq) + " (" + step.why + ")");
    // The step table is RFC 2203 5.3.3.1; the plain model must agree with it.
    const uint32_t lag = model.any() && step.seq < model.last() ? model.last() - step.seq : 0;
    ASSERT_EQ(model.Check(step.seq), step.rfc);
    V server{};
    const std::string err = ServerVerdict(step.seq, &server);
    ASSERT_EQ(err, "");
    const sim::WindowCheck sim = simulated.Check(step.seq);
    EXPECT_EQ(Name(server), Name(step.rfc)) << "server";
    EXPECT_EQ(Name(sim.verdict), Name(step.rfc)) << "simulator";
    EXPECT_EQ(sim.lag, lag) << "simulator";
    duplicates += step.rfc == V::kDuplicate;
    below += step.rfc == V::kBelowWindow;
  }
  const ServerCounters c = core_->counters();
  EXPECT_EQ(c.duplicates, duplicates);
  EXPECT_EQ(c.below_window, below);
  EXPECT_EQ(c.disconnects, 0u);
  EXPECT_EQ(c.contexts_discarded, 0u);
}

// nconnect-like traffic at libtirpc's window of 5 and at the default 128:
// numbers issued in order, delivered with reordering, plus a few replays.
TEST_F(WindowUsersTest, ServerAndSimulatorAgreeOnReorderedTraffic) {
  for (uint32_t window : {5u, 128u}) {
    SCOPED_TRACE(window);
    Start(window);
    sim::ServerWindow simulated(window);
    Rfc2203WindowModel model(window);
    std::mt19937 rng(window);
    std::vector<uint32_t> sent;
    uint32_t next = 1;
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < 400; ++i) {
      uint32_t seq;
      if (rng() % 16 == 0 && !sent.empty()) {
        seq = sent[rng() % sent.size()];  // a replay
      } else {
        const uint32_t back = rng() % (2 * window + 2);  // delivered late
        seq = next > back ? next - back : next;
        ++next;
      }
      sent.push_back(seq);
      SCOPED_TRACE("call " + std::to_string(i) + " seq " + std::to_string(seq));
      const V rfc = model.Check(seq);
      V server{};
      ASSERT_EQ(ServerVerdict(seq, &server), "");
      const sim::WindowCheck sim = simulated.Check(seq);
      ASSERT_EQ(Name(server), Name(rfc)) << "server";
      ASSERT_EQ(Name(sim.verdict), Name(rfc)) << "simulator";
      ++counts[static_cast<int>(rfc)];
    }
    const ServerCounters c = core_->counters();
    EXPECT_EQ(c.duplicates, static_cast<uint64_t>(counts[static_cast<int>(V::kDuplicate)]));
    EXPECT_EQ(c.below_window, static_cast<uint64_t>(counts[static_cast<int>(V::kBelowWindow)]));
    // All three verdicts occurred.
    for (int n : counts) EXPECT_GT(n, 5);
  }
}

}  // namespace
}  // namespace secmode::rpc
