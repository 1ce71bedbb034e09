// The two delays on real loopback TCP (the server's a common/delay_line.h,
// the load generator's its own numbering sender): the server's reply delay
// and the load generator's call delay each add their
// time to every call's latency, and a server with workers refuses a delay.
#include <gtest/gtest.h>

#include <memory>

#include "rpc/load.h"
#include "rpc/nfs.h"
#include "rpc/server_core.h"
#include "rpc/tcp_server.h"

namespace secmode::rpc {
namespace {

struct DelayServer {
  explicit DelayServer(TcpServerOptions to) {
    auto c = RpcServerCore::Create({}, {nfs.Program()});
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    core = std::move(c).value();
    auto s = TcpServer::Start(to, core.get());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (s.ok()) tcp = std::move(s).value();
  }
  MemoryNfsServer nfs;
  std::unique_ptr<RpcServerCore> core;
  std::unique_ptr<TcpServer> tcp;
};

LoadReport OneSlot(uint16_t port, uint32_t call_delay_us) {
  LoadOptions o;
  o.port = port;
  o.security = Security::kSys;
  o.connections = 1;
  o.slots = 1;
  o.seconds = 0.5;
  o.warmup_seconds = 0.1;
  o.delay_us = call_delay_us;
  auto r = RunLoad(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : LoadReport{};
}

// Lower bounds only: what the delays add is asserted, not how precisely a
// shared 2-core VM wakes a sleeping thread (reported by the lab instead).
TEST(TcpDelayTest, TheServersReplyDelayAndTheClientsCallDelayBothAddToEveryCall) {
  TcpServerOptions to;
  to.reply_delay_us = 8000;
  DelayServer s(to);
  ASSERT_NE(s.tcp, nullptr);
  const LoadReport server_only = OneSlot(s.tcp->port(), 0);
  EXPECT_GT(server_only.ops, 0u);
  EXPECT_GE(server_only.p50_us, 8000);
  EXPECT_LT(server_only.p50_us, 8000 + 50000);
  const LoadReport both = OneSlot(s.tcp->port(), 12000);
  EXPECT_GT(both.ops, 0u);
  EXPECT_GE(both.p50_us, 20000);
  EXPECT_LT(both.p50_us, 20000 + 50000);
  EXPECT_EQ(both.errors, 0u);
  EXPECT_GT(both.sender_calls, 0u);
}

TEST(TcpDelayTest, ManyCallsInFlightOverlapTheirDelays) {
  TcpServerOptions to;
  to.reply_delay_us = 10000;
  DelayServer s(to);
  ASSERT_NE(s.tcp, nullptr);
  LoadOptions o;
  o.port = s.tcp->port();
  o.security = Security::kSys;
  o.op = NfsOp::kRead;
  o.size = 65536;
  o.connections = 2;
  o.slots = 32;
  o.seconds = 0.5;
  o.delay_us = 10000;
  auto r = RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // One call at a time would make at most 50 calls a second; 32 in flight
  // over a 20 ms round trip make up to 1600.
  EXPECT_GT(r->ops_per_second, 400);
  EXPECT_GE(r->p50_us, 20000);
  EXPECT_EQ(r->errors, 0u);
}

TEST(TcpDelayTest, AServerWithWorkersRefusesAReplyDelay) {
  MemoryNfsServer nfs;
  auto core = RpcServerCore::Create({}, {nfs.Program()});
  ASSERT_TRUE(core.ok());
  TcpServerOptions to;
  to.reply_delay_us = 1000;
  to.workers = 2;
  auto s = TcpServer::Start(to, core->get());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().ToString().find("reply delay"), std::string::npos) << s.status().ToString();
}

}  // namespace
}  // namespace secmode::rpc
