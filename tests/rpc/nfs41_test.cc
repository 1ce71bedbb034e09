// rpc/nfs41.h against a scripted server (a unit test of the set-up code
// around the replies; the real server is nfs-ganesha in ganesha_test.cc):
// what it sends, what it takes from good replies, and a clear error, never a
// crash, for each kind of bad one.
#include "rpc/nfs41.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rpc/xdr.h"
#include "tests/support/nfs41_replies.h"

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;
namespace script = testing::nfs41;

// Answers each call with the next scripted reply and keeps what was sent.
struct Scripted {
  std::vector<Bytes> replies;
  std::vector<Bytes> sent;
  Nfs41Call Call() {
    return [this](ByteView args) -> common::Result<Bytes> {
      sent.emplace_back(args.begin(), args.end());
      if (sent.size() > replies.size()) return common::Status::IoError("the script ended");
      return replies[sent.size() - 1];
    };
  }
};

// The first operation of a COMPOUND's arguments.
uint32_t FirstOp(const Bytes& args) {
  XdrDecoder d(args);
  uint32_t minor, n, op;
  ByteView tag;
  EXPECT_TRUE(d.GetOpaque(&tag, 64, "tag").ok());
  EXPECT_TRUE(d.GetU32(&minor, "minor").ok());
  EXPECT_EQ(minor, 1u);
  EXPECT_TRUE(d.GetU32(&n, "n").ok());
  EXPECT_TRUE(d.GetU32(&op, "op").ok());
  return op;
}

TEST(Nfs41Test, OpensAndClosesASessionFromGoodReplies) {
  Scripted s;
  s.replies = script::GoodScript(16);
  Nfs41Options o;
  o.slots = 16;
  o.read_file_has_pattern = true;
  auto session = Nfs41Open(o, s.Call());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(session->clientid, 0x1234u);
  EXPECT_EQ(session->slots, 16u);
  EXPECT_EQ(session->target.highest_slot, 15u);
  EXPECT_EQ(session->target.session_id, script::SessionId(1));  // the load's
  EXPECT_EQ(session->setup_session_id, script::SessionId(0));
  EXPECT_EQ(session->target.fh_read, script::ReadHandle());
  EXPECT_EQ(session->target.fh_write, script::WriteHandle());
  EXPECT_EQ(session->target.stateid_read, script::Stateid(1));
  EXPECT_EQ(session->target.stateid_write, script::Stateid(2));
  EXPECT_FALSE(session->target.write_digest);
  EXPECT_TRUE(session->target.read_pattern);
  EXPECT_EQ(session->setup_sequence, 3u);  // RECLAIM_COMPLETE and two OPENs
  EXPECT_EQ(session->server, "scripted 1.0 (example.org)");
  ASSERT_TRUE(Nfs41Close(*session, s.Call()).ok());
  ASSERT_EQ(s.sent.size(), 11u);
  const uint32_t want[] = {
      script::kExchangeId,     script::kCreateSession,  script::kSequence,       script::kSequence,
      script::kSequence,       script::kCreateSession,  script::kSequence,       script::kSequence,
      script::kDestroySession, script::kDestroySession, script::kDestroyClientid};
  for (size_t i = 0; i < 11; ++i) EXPECT_EQ(FirstOp(s.sent[i]), want[i]) << i;
  // The load's CREATE_SESSION asked for its 16 slots, with the client ID's
  // next sequence id.
  XdrDecoder d(s.sent[5]);
  uint32_t v;
  uint64_t clientid;
  ByteView tag;
  ASSERT_TRUE(d.GetOpaque(&tag, 64, "tag").ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(d.GetU32(&v, "header").ok());  // minor, n, op
  ASSERT_TRUE(d.GetU64(&clientid, "clientid").ok());
  EXPECT_EQ(clientid, 0x1234u);
  ASSERT_TRUE(d.GetU32(&v, "csa_sequence").ok());
  EXPECT_EQ(v, 2u);
  for (int i = 0; i < 1 + 6; ++i) ASSERT_TRUE(d.GetU32(&v, "attrs").ok());
  EXPECT_EQ(v, 16u);  // ca_maxrequests
}

// DESTROY_CLIENTID answered NFS4ERR_CLIENTID_BUSY (a server still
// releasing the destroyed sessions' state) is tried again; a client ID that
// stays busy is an error naming the status and the tries.
TEST(Nfs41Test, ABusyClientIdIsDestroyedOnALaterTry) {
  Scripted s;
  s.replies = script::GoodScript(16);
  const common::Bytes ok = s.replies.back();
  const common::Bytes busy = script::StatusOnly(script::kDestroyClientid, 10074);
  s.replies.back() = busy;
  s.replies.push_back(busy);
  s.replies.push_back(ok);
  auto session = Nfs41Open({}, s.Call());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_TRUE(Nfs41Close(*session, s.Call()).ok());
  EXPECT_EQ(s.sent.size(), 13u);
  for (size_t i = 10; i < 13; ++i) EXPECT_EQ(FirstOp(s.sent[i]), script::kDestroyClientid);

  Scripted always;
  always.replies = script::GoodScript(16);
  always.replies.back() = busy;
  for (int i = 0; i < 200; ++i) always.replies.push_back(busy);
  auto again = Nfs41Open({}, always.Call());
  ASSERT_TRUE(again.ok());
  auto closed = Nfs41Close(*again, always.Call());
  ASSERT_FALSE(closed.ok());
  EXPECT_NE(closed.message().find("NFS4ERR_CLIENTID_BUSY (10074) (101 tries)"), std::string::npos)
      << closed.ToString();
}

TEST(Nfs41Test, FewerSlotsThanAskedAreTaken) {
  Scripted s;
  s.replies = script::GoodScript(4);
  Nfs41Options o;
  o.slots = 64;
  auto session = Nfs41Open(o, s.Call());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(session->slots, 4u);
  EXPECT_EQ(session->target.highest_slot, 3u);
}

TEST(Nfs41Test, ReclaimAlreadyCompleteIsNoError) {
  Scripted s;
  s.replies = script::GoodScript(8);
  s.replies[2] = script::Failed(10054, {script::kSequence, script::kReclaimComplete}, 2);
  EXPECT_TRUE(Nfs41Open({}, s.Call()).ok());
}

struct Bad {
  const char* name;
  size_t at;  // which reply of the script is replaced
  Bytes reply;
  const char* error;  // part of the error message
};

class Nfs41BadReplyTest : public ::testing::TestWithParam<Bad> {};

TEST_P(Nfs41BadReplyTest, IsAClearError) {
  const Bad& b = GetParam();
  Scripted s;
  s.replies = script::GoodScript(8);
  s.replies[b.at] = b.reply;
  auto session = Nfs41Open({}, s.Call());
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find(b.error), std::string::npos)
      << session.status().ToString();
}

Bytes Truncated(Bytes b, size_t keep) {
  b.resize(keep);
  return b;
}

INSTANTIATE_TEST_SUITE_P(
    Replies, Nfs41BadReplyTest,
    ::testing::Values(
        Bad{"ClidInUse", 0, script::StatusOnly(script::kExchangeId, 10017),
            "EXCHANGE_ID: the server answered NFS4ERR_CLID_INUSE (10017)"},
        Bad{"StateProtection", 0, script::ExchangeIdOk(1, 1, 1), "state protection 1"},
        Bad{"TruncatedExchangeId", 0, Truncated(script::ExchangeIdOk(1, 1), 30),
            "truncated 'eir_sequenceid'"},
        Bad{"Delay", 1, script::StatusOnly(script::kCreateSession, 10008),
            "CREATE_SESSION: the server answered NFS4ERR_DELAY (10008)"},
        Bad{"NoSlots", 5, script::CreateSessionOk(0, 1), "granted no fore-channel slot"},
        Bad{"WrongOp", 1, script::ExchangeIdOk(1, 1), "expected the result of CREATE_SESSION"},
        Bad{"BadSession", 2, script::Failed(10052, {script::kSequence}, 1),
            "RECLAIM_COMPLETE: NFS4ERR_BADSESSION (10052)"},
        Bad{"SeqMisordered", 3, script::Failed(10063, {script::kSequence}, 1),
            "SEQUENCE failed: NFS4ERR_SEQ_MISORDERED (10063)"},
        Bad{"NoSuchFile", 3,
            script::Failed(
                2, {script::kSequence, script::kPutrootfh, script::kLookup, script::kOpen}, 4),
            "OPEN of 'read' failed: NFS4ERR_NOENT (2)"},
        Bad{"NoSuchDirectory", 3,
            script::Failed(2, {script::kSequence, script::kPutrootfh, script::kLookup}, 3),
            "LOOKUP of 'export' failed: NFS4ERR_NOENT (2)"},
        Bad{"Delegation", 4, script::OpenOk(3, 1, script::WriteHandle(), script::Stateid(2), 2),
            "granted a delegation (type 2)"},
        Bad{"HugeHandle", 4, script::OpenOk(3, 1, Bytes(200, 1), script::Stateid(2)),
            "GETFH object"},
        Bad{"Empty", 2, Bytes{}, "COMPOUND4res status"}),
    [](const ::testing::TestParamInfo<Bad>& i) { return std::string(i.param.name); });

TEST(Nfs41Test, ARefusedCallEndsTheSetUpWithItsError) {
  Scripted s;  // no replies at all
  auto session = Nfs41Open({}, s.Call());
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("the script ended"), std::string::npos);
  EXPECT_EQ(s.sent.size(), 1u);
}

TEST(Nfs41Test, PathsAreSplitAndBadOnesRefused) {
  auto p = SplitNfsPath("/export//read/");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, (std::vector<std::string>{"export", "read"}));
  EXPECT_FALSE(SplitNfsPath("/").ok());
  EXPECT_FALSE(SplitNfsPath("export/../etc").ok());
  Nfs41Options o;
  o.slots = 0;
  Scripted s;
  EXPECT_EQ(Nfs41Open(o, s.Call()).status().code(), common::Code::kInvalidArgument);
  EXPECT_TRUE(s.sent.empty());
}

}  // namespace
}  // namespace secmode::rpc
