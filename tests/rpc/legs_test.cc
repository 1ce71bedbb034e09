// The RPC-framed Sealer/Opener legs behind the `sys`, `krb5`, `krb5i` and
// `krb5p` modes: every wire is a whole RPC call or reply.
#include "rpc/legs.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "rpc/nfs.h"
#include "rpc/rpc_msg.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;

class RpcLegsTest : public ::testing::TestWithParam<gss::Engine> {};

// Every engine under the same RPCSEC_GSS framing.
INSTANTIATE_TEST_SUITE_P(Engines, RpcLegsTest,
                         ::testing::Values(gss::Engine::kMit, gss::Engine::kNative,
                                           gss::Engine::kMitIov),
                         [](const auto& info) {
                           std::string n = gss::EngineName(info.param);
                           return n == "mit-iov" ? std::string("mit_iov") : n;
                         });

TEST_P(RpcLegsTest, EveryModeRoundTripsWholeRpcMessages) {
  for (Security mode : {Security::kSys, Security::kKrb5, Security::kKrb5i, Security::kKrb5p}) {
    SCOPED_TRACE(SecurityName(mode));
    bool sys = mode == Security::kSys;
    auto a = MakeRpcAssociation(mode, GetParam(), 0, sys ? nullptr : testing::SharedRealm());
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    for (size_t size : {size_t{0}, size_t{100}, size_t{4096}, size_t{1} << 20}) {
      Bytes payload = common::PatternBytes(size, 11), wire, out;
      for (int round = 0; round < 3; ++round) {
        ASSERT_TRUE(a->client_seal->Seal(payload, &wire).ok());
        CallHeader h;
        ASSERT_TRUE(DecodeCallHeader(wire, &h).ok());
        EXPECT_EQ(h.prog, kNfsProgram);
        EXPECT_EQ(h.proc, kNfsProcCompound);
        EXPECT_EQ(h.cred.flavor,
                  sys ? static_cast<uint32_t>(kAuthSys) : static_cast<uint32_t>(kRpcsecGss));
        if (mode == Security::kKrb5p && size >= 100) {
          auto it = std::search(wire.begin(), wire.end(), payload.begin(), payload.begin() + 64);
          EXPECT_EQ(it, wire.end()) << "krb5p payload visible on the wire";
        }
        ASSERT_TRUE(a->server_open->Open(wire, &out).ok());
        EXPECT_EQ(out, payload);
        ASSERT_TRUE(a->server_seal->Seal(payload, &wire).ok());
        ReplyHeader r;
        ASSERT_TRUE(DecodeReplyHeader(wire, &r).ok());
        EXPECT_EQ(r.accept_stat, static_cast<uint32_t>(kSuccess));
        ASSERT_TRUE(a->client_open->Open(wire, &out).ok());
        EXPECT_EQ(out, payload);
      }
    }
    // A replayed call is refused by the server leg (window), a tampered
    // reply by the client leg.
    Bytes payload = common::PatternBytes(64, 2), wire, out;
    ASSERT_TRUE(a->client_seal->Seal(payload, &wire).ok());
    ASSERT_TRUE(a->server_open->Open(wire, &out).ok());
    if (!sys) {
      EXPECT_FALSE(a->server_open->Open(wire, &out).ok());
      ASSERT_TRUE(a->server_seal->Seal(payload, &wire).ok());
      // krb5 protects only the header (verifier, from offset 20); krb5i and
      // krb5p also the body.
      wire[mode == Security::kKrb5 ? 24 : wire.size() - 1] ^= 1;
      EXPECT_FALSE(a->client_open->Open(wire, &out).ok());
    }
  }
}

// Associations of one shared context: a call sealed by one thread's legs is
// opened by another's server leg (the same server, context and window; a
// second context's server knows no such handle), and every engine's legs
// do round trips on their own threads at once.
TEST_P(RpcLegsTest, SharedAssociationsAreOneContextUsedByManyThreadsAtOnce) {
  // A window no descheduled thread falls out of (with the default 128, a
  // thread preempted between numbering and checking its call while the
  // others go on sees that call dropped: the nconnect effect).
  auto shared = MakeSharedRpcAssociations(Security::kKrb5p, GetParam(), 0, testing::SharedRealm(),
                                          3, 1u << 20);
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  ASSERT_EQ(shared->size(), 3u);
  const Bytes payload = common::PatternBytes(4096, 5);
  Bytes wire, out;
  ASSERT_TRUE((*shared)[0].client_seal->Seal(payload, &wire).ok());
  ASSERT_TRUE((*shared)[1].server_open->Open(wire, &out).ok());
  EXPECT_EQ(out, payload);
  auto other = MakeRpcAssociation(Security::kKrb5p, GetParam(), 0, testing::SharedRealm());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  ASSERT_TRUE((*shared)[0].client_seal->Seal(payload, &wire).ok());
  EXPECT_FALSE(other->server_open->Open(wire, &out).ok());

  std::vector<std::string> failures(shared->size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < shared->size(); ++k) {
    threads.emplace_back([&a = (*shared)[k], &payload, &failure = failures[k]] {
      Bytes call, opened, reply, back;
      for (int i = 0; i < 200 && failure.empty(); ++i) {
        common::Status s = a.client_seal->Seal(payload, &call);
        if (s.ok()) s = a.server_open->Open(call, &opened);
        if (s.ok() && opened != payload) s = common::Status::Corrupt("server opened other bytes");
        if (s.ok()) s = a.server_seal->Seal(payload, &reply);
        if (s.ok()) s = a.client_open->Open(reply, &back);
        if (s.ok() && back != payload) s = common::Status::Corrupt("client opened other bytes");
        if (!s.ok()) failure = "round trip " + std::to_string(i) + ": " + s.ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& f : failures) EXPECT_EQ(f, "");
  EXPECT_FALSE(
      MakeSharedRpcAssociations(Security::kKrb5p, GetParam(), 0, testing::SharedRealm(), 0).ok());
}

TEST(RpcLegsErrorsTest, GssModesNeedARealm) {
  EXPECT_FALSE(MakeRpcAssociation(Security::kKrb5i, gss::Engine::kMit, 0, nullptr).ok());
}

}  // namespace
}  // namespace secmode::rpc
