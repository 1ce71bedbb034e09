// The TCP server and the nconnect load generator over real loopback TCP:
// every mode, the window reactions, DESTROY at the end of a run, a user's
// own kinit ticket, and load against wedged and vanishing servers (scripted
// peers on real sockets) ending with a clear error in bounded time.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "rpc/client_auth.h"
#include "rpc/load.h"
#include "rpc/nfs.h"
#include "rpc/record.h"
#include "rpc/server_core.h"
#include "rpc/socket.h"
#include "rpc/tcp_server.h"
#include "tests/gss/kinit_user.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;
using common::Result;

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

// RFC 2203 5.4: a run ends every context it made; the server's table is
// empty again after many per-connection contexts.
TEST(TcpLoadTest, ContextPerConnectionRunDestroysEveryContext) {
  Server s(GssServer());
  LoadOptions o = Load(s, "krb5i");
  o.context_per_connection = true;
  o.connections = 48;
  o.slots = 48;
  o.seconds = 0.2;
  auto r = RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->errors, 0u) << r->first_error;
  EXPECT_EQ(r->contexts_destroyed, 48u) << r->destroy_error;
  EXPECT_EQ(r->contexts_left, 0u) << r->destroy_error;
  auto c = s.core->counters();
  EXPECT_EQ(c.contexts_created, 48u);
  EXPECT_EQ(c.contexts_destroyed, 48u);
  EXPECT_EQ(s.core->context_count(), 0u);
}

TEST(TcpLoadTest, ASharedContextIsDestroyedAndZeroTimeoutLeavesIt) {
  Server s(GssServer());
  LoadOptions o = Load(s, "krb5p");
  o.engine = gss::Engine::kNative;
  auto r = RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->contexts_destroyed, 1u) << r->destroy_error;
  EXPECT_EQ(s.core->context_count(), 0u);
  o.destroy_timeout_ms = 0;  // --destroy-timeout-ms 0: leave it
  r = RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->contexts_destroyed, 0u);
  EXPECT_EQ(r->contexts_left, 1u);
  EXPECT_EQ(s.core->context_count(), 1u);
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
  // The discarded contexts are gone, the re-created one was destroyed.
  EXPECT_EQ(s.core->context_count(), 0u);
  EXPECT_EQ(r->contexts_destroyed, 1u) << r->destroy_error;
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
  o.slots = 4;
  o.seconds = 5;
  o.deadline_seconds = 2;  // shorter than the run itself
  auto r = RunLoad(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), common::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("deadline"), std::string::npos) << r.status().ToString();
}

// A user's own ticket from the real kinit (a password principal, no client
// keytab MIT could fall back on), through --ccache and KRB5CCNAME.
TEST(TcpLoadTest, AKinitTicketOfTheUserAuthenticatesTheRun) {
  gss::Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  // The environment is changed only while no server thread runs.
  testing::ScopedEnv no_client_keytab("KRB5_CLIENT_KTNAME",
                                      "FILE:/nonexistent/secmode-client.keytab");
  const std::string cc = "FILE:" + realm->dir() + "/alice-load.ccache";
  ASSERT_TRUE(testing::KinitUser(*realm, cc).ok());
  {
    Server s(GssServer());
    LoadOptions o = Load(s, "krb5i");
    o.ccache = cc;
    auto r = RunLoad(o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GT(r->ops, 0u);
    EXPECT_EQ(r->errors, 0u) << r->first_error;
    // No ticket there: the error names the ccache.
    o.ccache = "FILE:" + realm->dir() + "/nobody.ccache";
    r = RunLoad(o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(o.ccache), std::string::npos) << r.status().ToString();
    EXPECT_EQ(s.core->context_count(), 0u);
  }
  testing::ScopedEnv ccname("KRB5CCNAME", cc.c_str());
  Server s(GssServer());
  LoadOptions o = Load(s, "krb5p");
  o.ccache.clear();
  auto r = RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->ops, 0u);
  EXPECT_EQ(r->errors, 0u) << r->first_error;
}

// A scripted misbehaving peer on a real loopback socket: it accepts every
// connection and never answers (`accept`), or never accepts at all, with a
// listen queue of 0 kept full (the kernel then drops further SYNs).
class WedgedPeer {
 public:
  explicit WedgedPeer(bool accept) {
    auto fd = Listen("127.0.0.1", 0, accept ? 128 : 0);
    EXPECT_TRUE(fd.ok()) << fd.status().ToString();
    listen_ = std::move(fd).value();
    port_ = LocalPort(listen_.get());
    if (accept) {
      thread_ = std::thread([this] {
        while (!stop_) {
          pollfd p{listen_.get(), POLLIN, 0};
          if (poll(&p, 1, 20) <= 0) continue;
          int c = ::accept(listen_.get(), nullptr, nullptr);
          if (c >= 0) held_.emplace_back(c);
        }
      });
    } else {
      // Fill the queue: the first connects complete in the kernel.
      for (int i = 0; i < 2; ++i) {
        auto c = Connect("127.0.0.1", port_, Deadline::AfterMs(200));
        if (c.ok()) fill_.push_back(std::move(c).value());
      }
    }
  }
  ~WedgedPeer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  uint16_t port() const { return port_; }

 private:
  Fd listen_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<Fd> held_, fill_;
};

double SecondsSince(uint64_t t0) { return static_cast<double>(common::NowNs() - t0) / 1e9; }

TEST(TcpLoadTest, AServerThatAcceptsAndNeverAnswersEndsTheRunWithAnError) {
  WedgedPeer peer(true);
  LoadOptions o;
  o.port = peer.port();
  o.seconds = 0.3;
  o.warmup_seconds = 0.05;
  o.timeout_ms = 100;
  o.connections = 2;
  o.slots = 8;
  std::optional<LoadReport> measured;
  const uint64_t t0 = common::NowNs();
  auto r = RunLoad(o, &measured);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(SecondsSince(t0), 20.0);  // bounded: no hang
  EXPECT_NE(r.status().message().find("no reply from 127.0.0.1:" + std::to_string(peer.port())),
            std::string::npos)
      << r.status().ToString();
  ASSERT_TRUE(measured.has_value());
  EXPECT_EQ(measured->ops, 0u);
  EXPECT_GT(measured->timeouts, 0u);
}

TEST(TcpLoadTest, AnInitRoundTripWithoutReplyEndsWithinItsTimeout) {
  ASSERT_NE(testing::SharedRealm(), nullptr);
  WedgedPeer peer(true);
  LoadOptions o;
  o.port = peer.port();
  o.mode = "krb5";
  o.ccache = testing::SharedRealm()->ccache();
  o.init_timeout_ms = 300;
  o.seconds = 0.2;
  const uint64_t t0 = common::NowNs();
  auto r = RunLoad(o);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(SecondsSince(t0), 20.0);
  const std::string m = r.status().message();
  EXPECT_NE(m.find("RPCSEC_GSS_INIT"), std::string::npos) << m;
  EXPECT_NE(m.find("no reply from 127.0.0.1:" + std::to_string(peer.port())), std::string::npos)
      << m;
}

TEST(TcpLoadTest, TheRunDeadlineEndsASetUpThatWaitsWithoutAStepLimit) {
  ASSERT_NE(testing::SharedRealm(), nullptr);
  WedgedPeer peer(true);
  LoadOptions o;
  o.port = peer.port();
  o.mode = "krb5i";
  o.ccache = testing::SharedRealm()->ccache();
  o.init_timeout_ms = 0;  // no limit per round trip: only the run's deadline
  o.seconds = 0.2;
  o.warmup_seconds = 0;
  o.deadline_seconds = 1.0;
  const uint64_t t0 = common::NowNs();
  auto r = RunLoad(o);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(SecondsSince(t0), 20.0);
  const std::string m = r.status().message();
  EXPECT_NE(m.find("the run's deadline"), std::string::npos) << m;
  EXPECT_NE(m.find("RPCSEC_GSS_INIT"), std::string::npos) << m;
}

TEST(TcpLoadTest, AListenQueueThatNeverAcceptsEndsWithinTheConnectTimeout) {
  WedgedPeer peer(false);
  LoadOptions o;
  o.port = peer.port();
  o.connect_timeout_ms = 300;
  o.seconds = 0.2;
  o.connections = 2;
  const uint64_t t0 = common::NowNs();
  auto r = RunLoad(o);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(SecondsSince(t0), 20.0);
  const std::string m = r.status().message();
  EXPECT_NE(m.find("connect (TCP handshake) within"), std::string::npos) << m;
  EXPECT_NE(m.find("127.0.0.1:" + std::to_string(peer.port())), std::string::npos) << m;
}

// The server goes away mid-run: the run fails naming the connection and
// what happened, and what completed before is still reported.
TEST(TcpLoadTest, AServerThatGoesAwayFailsTheRunAndKeepsWhatWasMeasured) {
  auto server = std::make_unique<Server>();
  LoadOptions o;
  o.port = server->tcp->port();
  o.seconds = 30;  // ended by the failure long before
  o.warmup_seconds = 0;
  o.connections = 2;
  o.slots = 8;
  std::optional<LoadReport> measured;
  Result<LoadReport> r = common::Status::Internal("not run");
  std::thread load([&] { r = RunLoad(o, &measured); });
  usleep(800000);
  const uint64_t t0 = common::NowNs();
  server.reset();  // closes every connection and the listening socket
  load.join();
  EXPECT_LT(SecondsSince(t0), 20.0);
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_NE(m.find("the server closed it"), std::string::npos) << m;
  EXPECT_NE(m.find("reconnecting failed"), std::string::npos) << m;
  EXPECT_NE(m.find(" of 2 to 127.0.0.1:" + std::to_string(o.port)), std::string::npos) << m;
  ASSERT_TRUE(measured.has_value());
  EXPECT_GT(measured->ops, 0u);
  EXPECT_GT(measured->seconds, 0);
  EXPECT_LT(measured->seconds, 25);
}

}  // namespace
}  // namespace secmode::rpc
