// `secmode serve` as a process of its own against careless and hostile
// clients, one case at a time, reading its descriptors and memory from
// /proc: descriptor exhaustion, buffers after large messages, record marks
// announcing data that never comes, threads that cannot start, and the
// replay cache of the GSS acceptor. And the helper itself: a test process
// killed mid-test leaves no `secmode serve` and no directory behind.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "rpc/load.h"
#include "rpc/record.h"
#include "tests/rpc/hostile.h"
#include "tests/rpc/serve_process.h"
#include "tests/support/processes.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;
using common::WriteAll;
using proc::ServeProcess;

template <typename P>
bool Eventually(P pred, int ms = 10000) {
  for (int i = 0; i < ms / 20; ++i) {
    if (pred()) return true;
    usleep(20000);
  }
  return pred();
}

// One AUTH_SYS GETATTR answered on a fresh connection.
bool Served(uint16_t port) {
  int fd = hostile::ConnectWithin(port, 2000);
  if (fd < 0) return false;
  bool ok = WriteAll(fd, hostile::SysCall(1)).ok() && !hostile::RecordStream(fd).Next().empty();
  close(fd);
  return ok;
}

LoadReport Load(uint16_t port, Security mode = Security::kSys) {
  LoadOptions o;
  o.port = port;
  o.security = mode;
  o.ccache = secmode::testing::SharedRealm()->ccache();
  o.seconds = 0.3;
  o.warmup_seconds = 0;
  o.connections = 2;
  o.slots = 4;
  auto r = RunLoad(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : LoadReport{};
}

// Out of descriptors, the server closes new clients at once (instead of
// wedging), says so, and gets every descriptor back as connections end.
TEST(ServeLimitsTest, DescriptorExhaustionDoesNotWedgeTheServer) {
  ServeProcess serve;
  // A cap above the descriptor limit, so accept itself runs out.
  ASSERT_NO_FATAL_FAILURE(serve.Start(SECMODE_BIN, {"--max-connections", "1000"}, "-n 64"));
  ASSERT_TRUE(Served(serve.port()));
  usleep(300000);  // that connection's thread ends
  const int fds0 = hostile::OpenFds(serve.pid());
  std::vector<int> held;
  int refused = 0;
  for (int i = 0; i < 120; ++i) {
    int fd = hostile::ConnectWithin(serve.port(), 500);
    if (fd < 0) continue;
    held.push_back(fd);
  }
  // The server is at its descriptor limit: the last ones were closed.
  usleep(300000);
  for (int fd : held) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 0) == 1) ++refused;  // end of stream waiting
  }
  EXPECT_GT(refused, 0);
  EXPECT_GE(hostile::OpenFds(serve.pid()), 60);
  EXPECT_NE(serve.Log().find("Too many open files"), std::string::npos) << serve.Log();
  for (int fd : held) close(fd);
  EXPECT_TRUE(Eventually([&] { return hostile::OpenFds(serve.pid()) == fds0; }))
      << hostile::OpenFds(serve.pid()) << " descriptors, " << fds0 << " before";
  LoadReport r = Load(serve.port());
  EXPECT_GT(r.ops, 0u);
  EXPECT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_EQ(serve.Stop(), 0) << serve.Log();
}

// After one 1 MiB READ each, idle connections give their buffers back.
TEST(ServeLimitsTest, IdleConnectionsGiveBackTheirBuffers) {
  ServeProcess serve;
  ASSERT_NO_FATAL_FAILURE(serve.Start(SECMODE_BIN, {}));
  const Bytes read = hostile::SysCall(1, NfsOp::kRead, 1u << 20);
  auto one_read = [&](int fd) {
    return WriteAll(fd, read).ok() && hostile::RecordStream(fd).Next().size() > (1u << 20);
  };
  {
    int fd = hostile::ConnectWithin(serve.port(), 2000);
    ASSERT_TRUE(one_read(fd));  // the file's pages are in from here on
    close(fd);
  }
  usleep(1500000);
  const long base = hostile::StatusKb(serve.pid(), "VmRSS");
  constexpr int kConns = 40;
  std::vector<int> conns;
  for (int i = 0; i < kConns; ++i) {
    int fd = hostile::ConnectWithin(serve.port(), 2000);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(one_read(fd));
    conns.push_back(fd);
  }
  const long busy = hostile::StatusKb(serve.pid(), "VmRSS");
  // Idle for more than a tick (1 s by default): buffers back.
  long idle = busy;
  Eventually(
      [&] {
        idle = hostile::StatusKb(serve.pid(), "VmRSS");
        return idle - base < kConns * 512;
      },
      5000);
  std::cout << "serve RSS: " << base / 1024 << " MiB before, " << busy / 1024 << " MiB after "
            << kConns << " connections read 1 MiB each, " << idle / 1024
            << " MiB once they were idle" << std::endl;
  // Less than 512 KiB per idle connection (a 1 MiB READ leaves about 3 MiB
  // of buffers behind when they are kept).
  EXPECT_LT(idle - base, kConns * 512);
  for (int fd : conns) close(fd);
  EXPECT_EQ(serve.Stop(), 0) << serve.Log();
}

// A record mark announcing 1 MiB with 100 bytes behind it costs a connection
// its read buffer as it is, not 1 MiB.
TEST(ServeLimitsTest, AnnouncedRecordsCostNothingUntilTheyArrive) {
  ServeProcess serve;
  // All from 127.0.0.1: more than the per-host cap.
  ASSERT_NO_FATAL_FAILURE(serve.Start(SECMODE_BIN, {"--max-connections-per-host", "1000"}));
  usleep(200000);
  const long base = hostile::StatusKb(serve.pid(), "VmRSS");
  const long threads0 = hostile::Threads(serve.pid());
  constexpr int kConns = 300;
  Bytes head;
  AppendRecordMark(1u << 20, &head);
  head.resize(head.size() + 100, 0x41);
  std::vector<int> conns;
  for (int i = 0; i < kConns; ++i) {
    int fd = hostile::ConnectWithin(serve.port(), 2000);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(WriteAll(fd, head).ok());
    conns.push_back(fd);
  }
  ASSERT_TRUE(Eventually([&] { return hostile::Threads(serve.pid()) >= threads0 + kConns; }));
  usleep(300000);
  const long rss = hostile::StatusKb(serve.pid(), "VmRSS");
  std::cout << "serve RSS: " << base / 1024 << " MiB, " << rss / 1024 << " MiB with " << kConns
            << " connections each announcing a 1 MiB record" << std::endl;
  // 1 MiB each would be 300 MiB; the buffer as it is (64 KiB) and a
  // thread's stack are what each costs.
  EXPECT_LT(rss - base, kConns * 256);
  for (int fd : conns) close(fd);
  EXPECT_TRUE(Eventually([&] { return hostile::Threads(serve.pid()) == threads0; }))
      << hostile::Threads(serve.pid()) << " threads, " << threads0 << " before";
  EXPECT_EQ(serve.Stop(), 0) << serve.Log();
}

// Threads that cannot start (address space too small for another 64 MiB
// stack): the connection is closed with a log line, the server goes on,
// and once connections end new ones get threads again.
TEST(ServeLimitsTest, ThreadCreationFailureIsSurvived) {
  long vm = 0;
  {
    ServeProcess probe;
    ASSERT_NO_FATAL_FAILURE(probe.Start(SECMODE_BIN, {}, "-s 65536"));
    vm = hostile::StatusKb(probe.pid(), "VmSize");
    ASSERT_GT(vm, 0);
  }
  // Room for two more 64 MiB stacks and a little memory, not for more.
  const long limit = vm + 2 * 65536 + 40000;
  ServeProcess serve;
  ASSERT_NO_FATAL_FAILURE(serve.Start(SECMODE_BIN, {}, "-s 65536 -v " + std::to_string(limit)));
  std::vector<int> conns;
  int closed = 0;
  for (int i = 0; i < 8; ++i) {
    int fd = hostile::ConnectWithin(serve.port(), 2000);
    ASSERT_GE(fd, 0);
    conns.push_back(fd);
  }
  usleep(300000);
  std::vector<int> served;
  for (int fd : conns) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 0) == 1) {
      ++closed;
    } else {
      served.push_back(fd);
    }
  }
  EXPECT_GT(closed, 0);
  EXPECT_FALSE(served.empty());
  EXPECT_NE(serve.Log().find("cannot start a thread for the connection"), std::string::npos)
      << serve.Log();
  for (int fd : served) {
    ASSERT_TRUE(WriteAll(fd, hostile::SysCall(3)).ok());
    EXPECT_FALSE(hostile::RecordStream(fd).Next().empty());
  }
  for (int fd : conns) close(fd);
  EXPECT_TRUE(Eventually([&] { return Served(serve.port()); }));
  EXPECT_TRUE(serve.Running());
  EXPECT_EQ(serve.Stop(), 0) << serve.Log();
}

// The GSS acceptor keeps MIT's replay cache even when the environment says
// KRB5RCACHETYPE=none or KRB5RCACHENAME=none: (which MIT reads first): a
// captured INIT replayed is refused, and serve says it ignored the
// variable. Only --no-replay-cache (tests) turns it off.
TEST(ServeLimitsTest, ReplayedInitIsRefusedUnlessTheReplayCacheIsOff) {
  gss::Realm* realm = secmode::testing::SharedRealm();
  for (const auto& [var, value] : std::vector<std::pair<std::string, std::string>>{
           {"KRB5RCACHETYPE", "none"}, {"KRB5RCACHENAME", "none:"}}) {
    for (bool off : {false, true}) {
      SCOPED_TRACE(var + "=" + value + (off ? " --no-replay-cache" : ""));
      ServeProcess serve;
      std::vector<std::string> args = {"--keytab", realm->service_keytab()};
      if (off) args.push_back("--no-replay-cache");
      ASSERT_NO_FATAL_FAILURE(serve.Start(SECMODE_BIN, args, "", {{var, value}}));
      int fd = hostile::ConnectWithin(serve.port(), 2000);
      ASSERT_GE(fd, 0);
      Bytes init;
      auto ctx = hostile::EstablishOver(fd, realm->ccache(), &init);
      ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
      for (int i = 0; i < 3; ++i) {
        const int64_t major = hostile::ReplayInit(fd, init);
        if (off) {
          EXPECT_EQ(major, 0) << "replay " << i;
        } else {
          EXPECT_GT(major, 0) << "replay " << i << " made a context";
        }
      }
      close(fd);
      const std::string log = serve.Log();
      EXPECT_NE(log.find("ignoring " + var + "=" + value), std::string::npos) << log;
      EXPECT_EQ(log.find("the replay cache is off") != std::string::npos, off) << log;
      EXPECT_EQ(serve.Stop(), 0) << serve.Log();
      EXPECT_NE(serve.Log().find(off ? "contexts created 4" : "contexts created 1"),
                std::string::npos)
          << serve.Log();
    }
  }
}

// ServeProcess's owner (the test process) killed any way, as ctest's
// timeout or an interrupted `make soak` kills it: its reaper ends the
// server and removes the directory.
class ServeOwnerDeathTest : public ::testing::TestWithParam<int> {};

TEST_P(ServeOwnerDeathTest, LeavesNothingBehind) {
  ASSERT_NE(secmode::testing::SharedRealm(), nullptr);  // the parent's: the child dies
  secmode::testing::ExpectOwnerDeathCleansUp(
      [] {
        auto* serve = new ServeProcess;  // the owner dies holding it
        serve->Start(SECMODE_BIN, {});
        if (!serve->Running()) return std::string("error: secmode serve did not start");
        return serve->dir() + " " + serve->pid();
      },
      GetParam());
}

INSTANTIATE_TEST_SUITE_P(Signals, ServeOwnerDeathTest, ::testing::Values(SIGTERM, SIGKILL));

}  // namespace
}  // namespace secmode::rpc
