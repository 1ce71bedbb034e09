// rpc/nfs4_ops.h: the operation table, and COMPOUNDs named from their
// arguments: every COMPOUND secmode's own NFSv4.1 client sends (the load's
// and the set-up's, taken from the scripted server of nfs41_test.cc) read to
// its end, and cut, unknown or crafted arguments read as far as they go.
#include "rpc/nfs4_ops.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rpc/nfs.h"
#include "rpc/nfs41.h"
#include "tests/support/nfs41_replies.h"

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;
namespace script = testing::nfs41;

// A COMPOUND4args of the given operations, each followed by `raw` bytes;
// its argarray length `stated`, or the operations' count.
Bytes Compound(uint32_t minor, const std::vector<std::pair<uint32_t, Bytes>>& ops,
               std::optional<uint32_t> stated = std::nullopt) {
  Bytes out;
  XdrEncoder e(&out);
  e.PutString("");
  e.PutU32(minor);
  e.PutU32(stated.value_or(static_cast<uint32_t>(ops.size())));
  for (const auto& [op, raw] : ops) {
    e.PutU32(op);
    e.PutRaw(raw);
  }
  return out;
}

TEST(Nfs4OpsTest, TheTableIsInNumberOrderWithOneRowAndOneNamePerOperation) {
  std::set<std::string> names;
  for (size_t i = 0; i < kNfs4OpCount; ++i) {
    if (i > 0) {
      EXPECT_LT(kNfs4Ops[i - 1].opcode, kNfs4Ops[i].opcode) << kNfs4Ops[i].name;
    }
    EXPECT_TRUE(names.insert(kNfs4Ops[i].name).second) << kNfs4Ops[i].name;
    EXPECT_EQ(FindNfs4Op(kNfs4Ops[i].opcode), &kNfs4Ops[i]);
    // 4.1 added 40-58 (RFC 8881 18), 4.2 and its xattrs 59-75 (RFC 7862, 8276).
    const uint32_t op = kNfs4Ops[i].opcode;
    const uint32_t minor = op >= 59 && op <= 75 ? 2 : op >= 40 && op <= 58 ? 1 : 0;
    EXPECT_EQ(kNfs4Ops[i].minor_version, minor) << kNfs4Ops[i].name;
  }
  // The numbers the RFCs give (the test's own copy: tests/support).
  EXPECT_EQ(Nfs4OpName(script::kExchangeId), "EXCHANGE_ID");
  EXPECT_EQ(Nfs4OpName(script::kSequence), "SEQUENCE");
  EXPECT_EQ(Nfs4OpName(script::kOpen), "OPEN");
  EXPECT_EQ(Nfs4OpName(script::kReclaimComplete), "RECLAIM_COMPLETE");
  EXPECT_EQ(Nfs4OpName(3), "ACCESS");
  EXPECT_EQ(Nfs4OpName(71), "CLONE");
  EXPECT_EQ(Nfs4OpName(2), "OP2");  // 0-2 are not operations
  EXPECT_EQ(FindNfs4Op(76), nullptr);
}

// The load's COMPOUNDs (nfs.h): SEQUENCE, PUTFH and the operation, the
// session, slot and sequence id read from SEQUENCE.
TEST(Nfs4OpsTest, TheLoadsCompoundsAreNamedWithTheirSequence) {
  const struct {
    NfsOp op;
    const char* names;
  } cases[] = {{NfsOp::kGetattr, "SEQUENCE PUTFH GETATTR"},
               {NfsOp::kRead, "SEQUENCE PUTFH READ"},
               {NfsOp::kWrite, "SEQUENCE PUTFH WRITE"}};
  for (const auto& c : cases) {
    NfsRequest r;
    r.op = c.op;
    r.count = 4096;
    r.slot = 7;
    r.sequence = 42;
    Bytes args;
    EncodeCompoundArgs(r, &args);
    CompoundOps ops;
    ASSERT_TRUE(ReadCompoundOps(args, &ops).ok());
    EXPECT_EQ(CompoundOpNames(ops), c.names);
    EXPECT_EQ(ops.minor_version, 1u);
    EXPECT_TRUE(ops.stopped.empty()) << ops.stopped;
    ASSERT_TRUE(ops.has_sequence);
    EXPECT_EQ(ops.slot_id, 7u);
    EXPECT_EQ(ops.sequence_id, 42u);
    EXPECT_EQ(ops.highest_slot_id, OwnServerTarget().highest_slot);
    EXPECT_EQ(ops.session_id, OwnServerTarget().session_id);
  }
}

// Every COMPOUND the set-up and the close send to a real server (EXCHANGE_ID,
// CREATE_SESSION, RECLAIM_COMPLETE, OPEN, CLOSE, ...) is read to its end.
TEST(Nfs4OpsTest, EveryCompoundOfTheSetUpIsReadToItsEnd) {
  std::vector<Bytes> replies = script::GoodScript(16);
  std::vector<Bytes> sent;
  const Nfs41Call call = [&](ByteView args) -> common::Result<Bytes> {
    sent.emplace_back(args.begin(), args.end());
    if (sent.size() > replies.size()) return common::Status::IoError("the script ended");
    return replies[sent.size() - 1];
  };
  Nfs41Options o;
  o.slots = 16;
  auto session = Nfs41Open(o, call);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_TRUE(Nfs41Close(*session, call).ok());
  std::vector<std::string> names;
  for (const Bytes& args : sent) {
    CompoundOps ops;
    ASSERT_TRUE(ReadCompoundOps(args, &ops).ok());
    EXPECT_TRUE(ops.stopped.empty()) << CompoundOpNames(ops) << ": " << ops.stopped;
    EXPECT_EQ(ops.opcodes.size(), ops.stated);
    names.push_back(CompoundOpNames(ops));
  }
  const std::vector<std::string> want = {"EXCHANGE_ID",
                                         "CREATE_SESSION",
                                         "SEQUENCE RECLAIM_COMPLETE",
                                         "SEQUENCE PUTROOTFH LOOKUP OPEN GETFH",
                                         "SEQUENCE PUTROOTFH LOOKUP OPEN GETFH",
                                         "CREATE_SESSION",
                                         "SEQUENCE PUTFH CLOSE",
                                         "SEQUENCE PUTFH CLOSE",
                                         "DESTROY_SESSION",
                                         "DESTROY_SESSION",
                                         "DESTROY_CLIENTID"};
  EXPECT_EQ(names, want);
}

// Cut anywhere, a COMPOUND names the operations whose number was read, says
// where it stopped, and never reads past the bytes given.
TEST(Nfs4OpsTest, ACutCompoundNamesWhatItReadAndSaysWhereItStopped) {
  NfsRequest r;
  r.op = NfsOp::kWrite;
  r.count = 512;
  Bytes args;
  EncodeCompoundArgs(r, &args);
  size_t full = 0;
  for (size_t n = 0; n <= args.size(); ++n) {
    const Bytes cut(args.begin(), args.begin() + static_cast<ptrdiff_t>(n));
    CompoundOps ops;
    const common::Status s = ReadCompoundOps(cut, &ops);
    if (n < 12) {  // tag length, minorversion, argarray length
      EXPECT_FALSE(s.ok()) << n;
      continue;
    }
    ASSERT_TRUE(s.ok()) << n << ": " << s.ToString();
    EXPECT_LE(ops.opcodes.size(), 3u);
    const std::string names = CompoundOpNames(ops);
    if (ops.opcodes.size() == 3) {
      // WRITE is the last: named once its number is read, its data cut or not.
      EXPECT_EQ(names, "SEQUENCE PUTFH WRITE") << n;
      EXPECT_TRUE(ops.stopped.empty()) << n;
      ++full;
    } else {
      EXPECT_FALSE(ops.stopped.empty()) << n;
      EXPECT_NE(names.find('+'), std::string::npos) << n << ": " << names;
      if (!ops.opcodes.empty()) {
        EXPECT_EQ(names.rfind("SEQUENCE", 0), 0u) << n;
      }
    }
  }
  EXPECT_GT(full, 512u);  // every cut inside WRITE's data
}

TEST(Nfs4OpsTest, AnOperationNotLaidOutIsNamedAndTheRestCounted) {
  Bytes fh;
  XdrEncoder(&fh).PutOpaque(Bytes(28, 1));
  // LAYOUTGET's arguments are not laid out here; 999 is no operation.
  for (uint32_t stop : {50u, 999u}) {
    const Bytes args = Compound(1, {{kOpPutfh, fh}, {stop, Bytes(40, 0)}, {kOpGetfh, {}}});
    CompoundOps ops;
    ASSERT_TRUE(ReadCompoundOps(args, &ops).ok());
    EXPECT_EQ(CompoundOpNames(ops), "PUTFH " + Nfs4OpName(stop) + " +1");
    EXPECT_NE(ops.stopped.find("not read"), std::string::npos) << ops.stopped;
    EXPECT_FALSE(ops.has_sequence);
  }
  // As the last operation nothing is lost: no stop.
  const Bytes last = Compound(2, {{kOpPutfh, fh}, {50, Bytes(40, 0)}});
  CompoundOps ops;
  ASSERT_TRUE(ReadCompoundOps(last, &ops).ok());
  EXPECT_EQ(CompoundOpNames(ops), "PUTFH LAYOUTGET");
  EXPECT_TRUE(ops.stopped.empty()) << ops.stopped;
  EXPECT_EQ(ops.minor_version, 2u);
}

// A crafted argarray length or field is bounded, and a SEQUENCE that is not
// first gives no session.
TEST(Nfs4OpsTest, CraftedCountsAreBounded) {
  std::vector<std::pair<uint32_t, Bytes>> many(200, {kOpGetfh, {}});
  CompoundOps ops;
  ASSERT_TRUE(ReadCompoundOps(Compound(1, many), &ops).ok());
  EXPECT_EQ(ops.opcodes.size(), CompoundOps::kMaxNamedOps);
  EXPECT_EQ(CompoundOpNames(ops).substr(CompoundOpNames(ops).rfind(' ')), " +136");
  ASSERT_TRUE(ReadCompoundOps(Compound(1, {{kOpGetfh, {}}}, 0xffffffff), &ops).ok());
  EXPECT_EQ(ops.opcodes.size(), 1u);
  EXPECT_EQ(ops.stated, 0xffffffffu);
  EXPECT_FALSE(ops.stopped.empty());
  // GETATTR stating a bitmap of a million words.
  Bytes bitmap;
  XdrEncoder(&bitmap).PutU32(1000000);
  ASSERT_TRUE(ReadCompoundOps(Compound(1, {{kOpGetattr, bitmap}, {kOpGetfh, {}}}), &ops).ok());
  EXPECT_EQ(CompoundOpNames(ops), "GETATTR +1");
  EXPECT_NE(ops.stopped.find("bitmap4"), std::string::npos) << ops.stopped;
  // SEQUENCE second: named, not read as the session's.
  Bytes seq;
  XdrEncoder e(&seq);
  e.PutFixedOpaque(Bytes(16, 9));
  for (int i = 0; i < 4; ++i) e.PutU32(0);
  ASSERT_TRUE(ReadCompoundOps(Compound(1, {{kOpGetfh, {}}, {kOpSequence, seq}}), &ops).ok());
  EXPECT_EQ(CompoundOpNames(ops), "GETFH SEQUENCE");
  EXPECT_FALSE(ops.has_sequence);
  EXPECT_TRUE(ops.session_id.empty());
}

}  // namespace
}  // namespace secmode::rpc
