// A short secmode RPCSEC_GSS session (INIT, DATA with service none,
// integrity and privacy, DESTROY), written to a pcap by common/pcap.h, must be
// dissected by tshark as RPC with RPCSEC_GSS: the right gss_proc, service
// and sequence numbers in every call credential, a reply for every call, and
// no malformed packet.
#include "tests/support/tshark.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/files.h"
#include "common/pcap.h"
#include "common/subprocess.h"
#include "rpc/gss_client.h"
#include "rpc/nfs.h"
#include "rpc/record.h"
#include "rpc/server_core.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;

using testing::RunTshark;

TEST(TsharkTest, DissectsASecmodeSessionAsRpcsecGss) {
  ASSERT_FALSE(common::FindProgram("tshark").empty()) << "tshark is not installed (make deps)";
  gss::Realm* realm = testing::SharedRealm();
  ServerOptions so;
  so.keytab = realm->service_keytab();
  MemoryNfsServer nfs;
  auto core = RpcServerCore::Create(so, {nfs.Program()});
  ASSERT_TRUE(core.ok()) << core.status().ToString();
  common::PcapTcpWriter pcap(876, 2049);  // 2049: tshark dissects it as ONC RPC
  pcap.Begin();
  auto exchange = [&](ByteView call) -> common::Result<Bytes> {
    Bytes framed, reply;
    FrameRecord(call, &framed);
    pcap.Add(true, framed);
    if ((*core)->HandleCall(call, &reply) != Disposition::kReply) {
      return common::Status::Internal("call dropped");
    }
    FrameRecord(reply, &framed);
    pcap.Add(false, framed);
    return reply;
  };
  GssClientConfig cfg;
  cfg.ccache = realm->ccache();
  cfg.prog = kNfsProgram;
  cfg.vers = kNfsVersion;
  auto ctx = GssClientContext::Establish(cfg, exchange);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();

  struct Expect {
    uint32_t proc, service, seq;
  };
  std::vector<Expect> want = {{kGssInit, kGssSvcNone, 0}};
  const uint32_t services[] = {kGssSvcNone, kGssSvcIntegrity, kGssSvcPrivacy};
  const NfsOp ops[] = {NfsOp::kGetattr, NfsOp::kRead, NfsOp::kWrite};
  for (int i = 0; i < 3; ++i) {
    NfsRequest r;
    r.op = ops[i];
    r.count = r.op == NfsOp::kGetattr ? 0 : 4096;
    Bytes args, rec;
    EncodeCompoundArgs(r, &args);
    uint32_t seq = (*ctx)->NextSeq();
    ASSERT_TRUE((*ctx)->EncodeCall(100 + i, kNfsProcCompound, services[i], seq, args, &rec).ok());
    auto reply = exchange(rec);
    ASSERT_TRUE(reply.ok());
    Bytes scratch;
    ReplyHeader h;
    ByteView results;
    ASSERT_TRUE((*ctx)->DecodeReply(*reply, services[i], seq, &scratch, &h, &results).ok());
    ASSERT_TRUE(CheckCompoundResults(r, results).ok());
    want.push_back({kGssData, services[i], seq});
  }
  uint32_t seq = (*ctx)->NextSeq();
  Bytes rec;
  ASSERT_TRUE((*ctx)->EncodeCall(200, 0, kGssSvcNone, seq, {}, &rec, kGssDestroy).ok());
  ASSERT_TRUE(exchange(rec).ok());
  want.push_back({kGssDestroy, kGssSvcNone, seq});

  auto dir = common::MakeTempDirectory("secmode-tshark");
  ASSERT_TRUE(dir.ok());
  struct Cleanup {
    std::string path;
    ~Cleanup() { (void)common::RemoveTree(path); }
  } cleanup{*dir};
  std::string file = *dir + "/session.pcap";
  ASSERT_TRUE(pcap.Save(file).ok());
  auto calls = RunTshark(
      file,
      {"-Y", "rpc.msgtyp == 0", "-T", "fields", "-e", "frame.number", "-e", "rpc.authgss.procedure",
       "-e", "rpc.authgss.service", "-e", "rpc.authgss.seqnum", "-e", "rpc.program"},
      *dir + "/calls.txt");
  ASSERT_EQ(calls.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_GE(calls[i].size(), 5u);
    EXPECT_EQ(calls[i][1], std::to_string(want[i].proc)) << "call " << i;
    EXPECT_EQ(calls[i][2], std::to_string(want[i].service)) << "call " << i;
    // The seqnum field repeats inside integrity bodies ("5,5").
    EXPECT_EQ(calls[i][3].substr(0, calls[i][3].find(',')), std::to_string(want[i].seq))
        << "call " << i;
    EXPECT_EQ(calls[i][4], "100003");
  }
  auto replies = RunTshark(file, {"-Y", "rpc.msgtyp == 1", "-T", "fields", "-e", "frame.number"},
                           *dir + "/replies.txt");
  EXPECT_EQ(replies.size(), want.size());
  auto malformed = RunTshark(
      file,
      {"-Y", "_ws.malformed || _ws.expert.severity == error", "-T", "fields", "-e", "frame.number"},
      *dir + "/malformed.txt");
  EXPECT_TRUE(malformed.empty()) << "tshark flags frame " << malformed[0][0];
}

}  // namespace
}  // namespace secmode::rpc
