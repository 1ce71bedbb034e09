// The TCP server and the nconnect load generator over real loopback TCP.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include "rpc/client_auth.h"
#include "rpc/load.h"
#include "rpc/nfs.h"
#include "rpc/record.h"
#include "rpc/server_core.h"
#include "rpc/socket.h"
#include "rpc/tcp_server.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;

struct Server {
  explicit Server(ServerOptions so = {}, TcpServerOptions to = {}) {
    auto c = RpcServerCore::Create(so, {nfs.Program()});
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    core = std::move(c).value();
    auto s = TcpServer::Start(to, core.get());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    tcp = std::move(s).value();
  }
  MemoryNfsServer nfs;
  std::unique_ptr<RpcServerCore> core;
  std::unique_ptr<TcpServer> tcp;
};

ServerOptions GssServer(WindowPolicy policy = WindowPolicy::kDrop, uint32_t window = 128) {
  ServerOptions so;
  so.keytab = testing::SharedRealm()->service_keytab();
  so.policy = policy;
  so.window = window;
  return so;
}

LoadOptions Load(const Server& s, const std::string& mode) {
  LoadOptions o;
  o.port = s.tcp->port();
  o.mode = mode;
  o.ccache = testing::SharedRealm()->ccache();
  o.seconds = 0.3;
  o.warmup_seconds = 0.05;
  o.connections = 3;
  o.slots = 16;
  return o;
}

TEST(TcpLoadTest, EveryModeAndOperationCompletesWithoutErrors) {
  Server s(GssServer());
  for (const char* mode : {"sys", "krb5", "krb5i", "krb5p"}) {
    for (NfsOp op : {NfsOp::kGetattr, NfsOp::kRead, NfsOp::kWrite}) {
      LoadOptions o = Load(s, mode);
      o.op = op;
      o.size = 65536;
      o.seconds = 0.15;
      auto r = RunLoad(o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_GT(r->ops, 0u) << mode << " " << NfsOpName(op);
      EXPECT_EQ(r->errors, 0u) << r->first_error;
      // (No assertion on retransmits: on a loaded machine a shared context
      // can see window drops, the very effect the skew tests provoke.)
      EXPECT_EQ(r->disconnects, 0u);
      EXPECT_GT(r->p99_us, 0);
    }
  }
  EXPECT_GT(s.nfs.writes_checked(), 0u);
}

TEST(TcpLoadTest, ContextPerConnectionCreatesOnePerConnection) {
  Server s(GssServer());
  LoadOptions o = Load(s, "krb5i");
  o.context_per_connection = true;
  o.connections = 3;
  auto r = RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->errors, 0u) << r->first_error;
  EXPECT_EQ(s.core->counters().contexts_created, 3u);
}

TEST(TcpLoadTest, SkewedConnectionWithDiscardContextRecreatesContexts) {
  Server s(GssServer(WindowPolicy::kDiscardContext, 8));
  LoadOptions o = Load(s, "krb5");
  o.skew_connection = 1;
  o.skew_delay_us = 20000;
  o.timeout_ms = 100;
  o.seconds = 0.5;
  auto r = RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->errors, 0u) << r->first_error;
  auto c = s.core->counters();
  EXPECT_GT(c.below_window, 0u);
  EXPECT_GT(c.contexts_discarded, 0u);
  EXPECT_GT(r->context_recreations, 0u);
  EXPECT_GT(r->retransmits, 0u);
  EXPECT_GT(r->ops, 0u);
}

TEST(TcpLoadTest, DropDisconnectMakesTheClientReconnect) {
  Server s(GssServer(WindowPolicy::kDropDisconnect, 8));
  LoadOptions o = Load(s, "krb5");
  o.skew_connection = 0;
  o.skew_delay_us = 20000;
  o.timeout_ms = 100;
  o.seconds = 0.5;
  auto r = RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->errors, 0u) << r->first_error;
  EXPECT_GT(s.core->counters().disconnects, 0u);
  EXPECT_GT(r->disconnects, 0u);
  EXPECT_GT(r->ops, 0u);
}

TEST(TcpLoadTest, ReencodeBeforeTransmission) {
  Server s(GssServer(WindowPolicy::kDrop, 8));
  LoadOptions o = Load(s, "krb5");
  o.skew_connection = 2;
  o.skew_delay_us = 20000;
  o.timeout_ms = 200;
  o.reencode = true;
  auto r = RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->errors, 0u) << r->first_error;
  EXPECT_GT(r->reencodes, 0u);
}

// Reads one reply record from a blocking socket (empty on EOF).
Bytes ReadRecord(int fd) {
  RecordReader reader;
  while (true) {
    ByteView rec;
    auto n = reader.Next(&rec);
    if (!n.ok()) return {};
    if (*n) return Bytes(rec.begin(), rec.end());
    auto space = reader.WriteSpace(4096);
    ssize_t got = recv(fd, space.data(), space.size(), 0);
    if (got <= 0) return {};
    reader.Commit(static_cast<size_t>(got));
  }
}

TEST(TcpServerTest, BrokenStreamsAreClosedAndOthersKeepBeingServed) {
  Server s;
  auto good = Connect("127.0.0.1", s.tcp->port());
  auto bad = Connect("127.0.0.1", s.tcp->port());
  auto trunc = Connect("127.0.0.1", s.tcp->port());
  ASSERT_TRUE(good.ok() && bad.ok() && trunc.ok());
  auto auth = NewSysAuth(kNfsProgram, kNfsVersion);
  Bytes call, args;
  NfsRequest req;
  EncodeCompoundArgs(req, &args);
  uint32_t seq;
  ASSERT_TRUE(auth->EncodeCall(1, kNfsProcCompound, args, &call, &seq).ok());
  Bytes framed;
  FrameRecord(call, &framed);

  // A truncated record: the server waits; the connection is merely idle.
  ASSERT_TRUE(WriteAll(trunc->get(), ByteView(framed).subspan(0, 10)).ok());
  // An oversize record mark: the server closes that connection.
  Bytes huge = {0xff, 0xff, 0xff, 0xf0};
  ASSERT_TRUE(WriteAll(bad->get(), huge).ok());
  EXPECT_TRUE(ReadRecord(bad->get()).empty());
  // Garbage inside a well-framed record is dropped; the stream goes on.
  Bytes garbage;
  FrameRecord(common::PatternBytes(40, 5), &garbage);
  ASSERT_TRUE(WriteAll(good->get(), garbage).ok());
  ASSERT_TRUE(WriteAll(good->get(), framed).ok());
  Bytes reply = ReadRecord(good->get());
  ReplyHeader h;
  ASSERT_TRUE(DecodeReplyHeader(reply, &h).ok());
  EXPECT_EQ(h.xid, 1u);
  EXPECT_EQ(h.accept_stat, static_cast<uint32_t>(kSuccess));
  ByteView results = ByteView(reply).subspan(h.body_offset);
  EXPECT_TRUE(CheckCompoundResults(req, results).ok());
  // The truncated one completes when the rest arrives.
  ASSERT_TRUE(WriteAll(trunc->get(), ByteView(framed).subspan(10)).ok());
  EXPECT_FALSE(ReadRecord(trunc->get()).empty());
  EXPECT_EQ(s.tcp->stats().bad_streams, 1u);
}

TEST(TcpServerTest, WorkerPoolServesToo) {
  TcpServerOptions to;
  to.workers = 2;
  Server s({}, to);
  LoadOptions o;
  o.port = s.tcp->port();
  o.seconds = 0.2;
  o.warmup_seconds = 0;
  o.op = NfsOp::kWrite;
  auto r = RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->ops, 0u);
  EXPECT_EQ(r->errors, 0u) << r->first_error;
}

TEST(TcpLoadTest, BadOptionsAreRefused) {
  LoadOptions o;
  o.port = 1;
  o.mode = "krb6";
  EXPECT_FALSE(RunLoad(o).ok());
  o.mode = "sys";
  o.slots = 0;
  EXPECT_FALSE(RunLoad(o).ok());
}

}  // namespace
}  // namespace secmode::rpc
