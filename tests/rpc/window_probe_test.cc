// ProbeWindow against secmode's own server, whose window and policy are set
// by the test: the probe must find each exactly. (MIT gssrpc as the peer with
// a known answer: interop_test.cc.)
#include "rpc/window_probe.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <thread>

#include "common/socket.h"
#include "rpc/local_server.h"
#include "rpc/probe_replies.h"
#include "rpc/record.h"
#include "rpc/xdr.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc {
namespace {

struct Server {
  std::unique_ptr<LocalServer> server;
  ProbeOptions probe;
};

Server Start(uint32_t window, WindowPolicy policy) {
  gss::Realm* realm = testing::SharedRealm();
  ServerOptions so;
  so.keytab = realm->service_keytab();
  so.window = window;
  so.policy = policy;
  auto s = LocalServer::Start(so);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  Server out;
  if (!s.ok()) return out;
  out.server = std::move(s).value();
  out.probe.port = out.server->port();
  out.probe.ccache = realm->ccache();
  out.probe.silence_ms = 150;  // loopback, idle: a reply takes well under a millisecond
  out.probe.max_window = 4096;
  return out;
}

struct Case {
  uint32_t window;
  WindowPolicy policy;
  const char* reaction;
};

class ProbeOwnServerTest : public ::testing::TestWithParam<Case> {};

TEST_P(ProbeOwnServerTest, FindsTheWindowAndTheReaction) {
  const Case c = GetParam();
  Server s = Start(c.window, c.policy);
  ASSERT_TRUE(s.server);
  auto r = ProbeWindow(s.probe);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->advertised_window, c.window);
  EXPECT_EQ(r->window, c.window);
  EXPECT_TRUE(r->window_confirmed);
  EXPECT_EQ(r->below_window, c.reaction);
  EXPECT_EQ(r->below_window_edge, c.reaction);
  EXPECT_EQ(ModelReaction(*r), c.reaction);
  // secmode's server treats a duplicate as it treats a number below the
  // window (server_core.cc), and refuses MAXSEQ with CTXPROBLEM.
  EXPECT_EQ(r->duplicate, c.reaction);
  EXPECT_EQ(r->at_maxseq_minus_1, "replied (accepted SUCCESS)");
  EXPECT_EQ(r->at_maxseq, "denied (denied AUTH_ERROR RPCSEC_GSS_CTXPROBLEM)");
  // The evidence: every lag test's verdict matches the window.
  int lag_tests = 0;
  for (const ProbeTest& t : r->tests) {
    if (t.lag == 0) continue;
    ++lag_tests;
    EXPECT_EQ(t.verdict == "accepted", t.lag < c.window) << t.name;
    ASSERT_GE(t.calls.size(), 2u) << t.name;
    EXPECT_EQ(t.calls[0].outcome, ProbeOutcome::kReplied) << t.name;
  }
  // The bisection over 1..4096 and the confirmation; a window of 1 is found
  // at once (lag 1 refused).
  EXPECT_GE(lag_tests, c.window == 1 ? 3 : 12);
  // Nothing left behind: every context the server still holds was ended,
  // except where no number was left for the DESTROY: after 0x7fffffff only
  // 0x7ffffffe is, and a window of 1 refuses it.
  const ServerCounters k = s.server->counters();
  EXPECT_EQ(k.contexts_created, r->contexts_created);
  const uint64_t stuck = c.window == 1 ? 1 : 0;
  EXPECT_EQ(s.server->core().context_count(), stuck);
  if (c.policy == WindowPolicy::kDiscardContext) {
    EXPECT_EQ(k.contexts_discarded + r->contexts_destroyed, r->contexts_created);
    EXPECT_GT(k.contexts_discarded, 0u);
  } else {
    EXPECT_EQ(r->contexts_destroyed + stuck, r->contexts_created);
  }
  if (c.policy == WindowPolicy::kDropDisconnect) {
    EXPECT_GT(k.disconnects, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, ProbeOwnServerTest,
    ::testing::Values(Case{32, WindowPolicy::kDrop, "drop"},
                      Case{128, WindowPolicy::kDropDisconnect, "drop-disconnect"},
                      Case{100, WindowPolicy::kDiscardContext, "discard-context"},
                      Case{1, WindowPolicy::kDrop, "drop"}),
    [](const ::testing::TestParamInfo<Case>& i) {
      return std::string(i.param.policy == WindowPolicy::kDrop             ? "Drop"
                         : i.param.policy == WindowPolicy::kDropDisconnect ? "DropDisconnect"
                                                                           : "DiscardContext") +
             std::to_string(i.param.window);
    });

TEST(ProbeWindowTest, AWindowAboveTheBoundIsSaidToBe) {
  Server s = Start(8192, WindowPolicy::kDrop);
  ASSERT_TRUE(s.server);
  s.probe.max_window = 1024;
  auto r = ProbeWindow(s.probe);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->window, 0u);
  EXPECT_EQ(r->window_above, 1024u);
  EXPECT_EQ(ModelReaction(*r), "");
}

TEST(ProbeWindowTest, AServerWithoutRpcsecGssIsAClearError) {
  auto s = LocalServer::Start(ServerOptions{});  // AUTH_SYS only
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ProbeOptions o;
  o.port = (*s)->port();
  o.ccache = testing::SharedRealm()->ccache();
  o.init_timeout_ms = 2000;
  auto r = ProbeWindow(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("creating an RPCSEC_GSS context"), std::string::npos)
      << r.status().ToString();
}

TEST(ProbeWindowTest, AWrongProgramIsAClearError) {
  Server s = Start(128, WindowPolicy::kDrop);
  ASSERT_TRUE(s.server);
  s.probe.program = 100005;  // mountd: not served here
  auto r = ProbeWindow(s.probe);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("100005"), std::string::npos) << r.status().ToString();
}

TEST(ProbeWindowTest, BadOptionsAreRefusedBeforeAnyCall) {
  ProbeOptions o;
  o.port = 1;  // nothing is contacted
  o.security = Security::kSys;
  EXPECT_EQ(ProbeWindow(o).status().code(), common::Code::kInvalidArgument);
  o.security = Security::kKrb5;
  o.max_window = 1;
  EXPECT_EQ(ProbeWindow(o).status().code(), common::Code::kInvalidArgument);
  o.max_window = 64;
  o.silence_ms = 0;
  EXPECT_EQ(ProbeWindow(o).status().code(), common::Code::kInvalidArgument);
  o.silence_ms = 10;
  o.port = 0;
  EXPECT_EQ(ProbeWindow(o).status().code(), common::Code::kInvalidArgument);
}

TEST(ProbeWindowTest, NoServerIsAClearError) {
  Server s = Start(128, WindowPolicy::kDrop);
  ASSERT_TRUE(s.server);
  const uint16_t port = s.probe.port;
  s.server->Stop();
  ProbeOptions o = s.probe;
  o.port = port;
  o.connect_timeout_ms = 2000;
  auto r = ProbeWindow(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("connection"), std::string::npos) << r.status().ToString();
}

// A reply record of `bytes` bytes (at least its 24-byte header): accepted
// SUCCESS with an AUTH_NONE verifier for `xid`, zeros after.
common::Bytes FakeReply(uint32_t xid, size_t bytes) {
  common::Bytes r;
  XdrEncoder e(&r);
  e.PutU32(xid);
  e.PutU32(1);  // REPLY
  e.PutU32(0);  // MSG_ACCEPTED
  e.PutU32(0);  // AUTH_NONE
  e.PutU32(0);  // verifier length
  e.PutU32(0);  // SUCCESS
  if (r.size() < bytes) r.resize(bytes, 0);
  return r;
}

// A hostile server in front of secmode's own: its first connection is
// passed through until the server's first reply (the INIT reply, which
// completes the probe's context) has been forwarded; from then on the server
// is cut off and the probe gets replies of `record_bytes` bytes with xids of
// no call it sent (all the same one unless `distinct_xids`), `batch` at a time with a pause of
// `pause_ms` between, until it closes the connection or `max_bytes` were sent (then nothing more,
// the connection kept open), for at most kFloodCap (a guard for the test's own sake).
class FloodingServer {
 public:
  static constexpr auto kFloodCap = std::chrono::seconds(8);

  FloodingServer(uint16_t backend, size_t record_bytes, int batch, int pause_ms, size_t max_bytes,
                 bool distinct_xids = true)
      : backend_(backend),
        record_bytes_(record_bytes),
        batch_(batch),
        pause_ms_(pause_ms),
        max_bytes_(max_bytes),
        distinct_xids_(distinct_xids) {
    auto l = common::Listen("127.0.0.1", 0);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    if (!l.ok()) return;
    listener_ = std::move(l).value();
    port_ = common::LocalPort(listener_.get());
    thread_ = std::thread([this] { Run(); });
  }
  ~FloodingServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  uint16_t port() const { return port_; }
  uint64_t flooded() const { return flooded_; }

 private:
  // Sends all of `data` unless the client goes away or the flood is over.
  bool SendAll(int fd, common::ByteView data) {
    size_t off = 0;
    while (off < data.size() && !stop_) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return off == data.size();
  }

  // Passes bytes both ways until the server's first reply went through.
  bool PassInit(int client, int server) {
    RecordReader reader;
    uint8_t buf[4096];
    while (!stop_) {
      pollfd p[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      if (poll(p, 2, 100) <= 0) continue;
      for (int i = 0; i < 2; ++i) {
        if (p[i].revents == 0) continue;
        const ssize_t n = recv(p[i].fd, buf, sizeof buf, 0);
        if (n <= 0) return false;
        const common::ByteView got(buf, static_cast<size_t>(n));
        if (!SendAll(p[1 - i].fd, got)) return false;
        if (i == 1) {
          reader.Feed(got);
          common::ByteView rec;
          auto r = reader.Next(&rec);
          if (!r.ok()) return false;
          if (*r) return true;
        }
      }
    }
    return false;
  }

  void Run() {
    pollfd p{listener_.get(), POLLIN, 0};
    const auto cap = std::chrono::steady_clock::now() + kFloodCap;
    while (!stop_ && poll(&p, 1, 100) == 0) {
    }
    if (stop_) return;
    common::Fd client(accept(listener_.get(), nullptr, nullptr));
    auto server = common::Connect("127.0.0.1", backend_, common::Deadline::AfterMs(2000));
    if (client.get() < 0 || !server.ok()) return;
    if (!PassInit(client.get(), server->get())) return;
    *server = common::Fd();  // cut off: nothing more of the real server's
    uint32_t xid = 0x5a000000;
    size_t sent = 0;
    uint8_t sink[4096];
    // One batch, framed once; each send gives its records new xids.
    common::Bytes wire;
    for (int i = 0; i < batch_; ++i) {
      common::Bytes framed;
      FrameRecord(FakeReply(xid, record_bytes_), &framed);
      wire.insert(wire.end(), framed.begin(), framed.end());
    }
    const size_t framed_bytes = wire.size() / static_cast<size_t>(batch_);
    while (!stop_ && sent < max_bytes_ && std::chrono::steady_clock::now() < cap) {
      // What the probe sends is read and ignored; its end ends the flood.
      ssize_t n;
      while ((n = recv(client.get(), sink, sizeof sink, MSG_DONTWAIT)) > 0) {
      }
      if (n == 0) return;
      for (int i = 0; i < batch_ && distinct_xids_; ++i) {
        uint8_t* at = wire.data() + static_cast<size_t>(i) * framed_bytes + 4;
        at[0] = static_cast<uint8_t>(xid >> 24);
        at[1] = static_cast<uint8_t>(xid >> 16);
        at[2] = static_cast<uint8_t>(xid >> 8);
        at[3] = static_cast<uint8_t>(xid);
        ++xid;
      }
      if (!SendAll(client.get(), wire)) return;
      sent += wire.size();
      flooded_ += static_cast<uint64_t>(batch_);
      if (pause_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms_));
    }
    // Then silence, the connection kept open, until the probe closes it.
    while (!stop_ && std::chrono::steady_clock::now() < cap) {
      pollfd c{client.get(), POLLIN, 0};
      if (poll(&c, 1, 100) > 0 && recv(client.get(), sink, sizeof sink, 0) <= 0) return;
    }
  }

  const uint16_t backend_;
  const size_t record_bytes_;
  const int batch_, pause_ms_;
  const size_t max_bytes_;
  const bool distinct_xids_;
  common::Fd listener_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> flooded_{0};
  std::thread thread_;
};

// This process's resident memory, sampled every 2 ms while it lives: the
// largest growth over what it was at the start.
class RssWatch {
 public:
  RssWatch()
      : base_(Rss()), thread_([this] {
          while (!stop_) {
            const uint64_t now = Rss();
            if (now > peak_) peak_ = now;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
          }
        }) {}
  ~RssWatch() {
    stop_ = true;
    thread_.join();
  }
  uint64_t growth() const { return peak_ > base_ ? peak_ - base_ : 0; }

 private:
  static uint64_t Rss() {
    std::ifstream f("/proc/self/statm");
    uint64_t size = 0, resident = 0;
    f >> size >> resident;
    return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  }
  const uint64_t base_;
  std::atomic<uint64_t> peak_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Replies to a call never sent, 16 KiB each, endlessly, as fast as loopback
// takes them (the socket never runs dry, so poll never times out): the wait
// still ends at its deadline, with an error that says what came instead.
TEST(ProbeWindowTest, AServerFloodingOtherRepliesCannotStretchTheWait) {
  Server s = Start(128, WindowPolicy::kDrop);
  ASSERT_TRUE(s.server);
  FloodingServer flood(s.probe.port, 16 << 10, 4, 0, SIZE_MAX, /*distinct_xids=*/false);
  ASSERT_NE(flood.port(), 0);
  ProbeOptions o = s.probe;
  o.port = flood.port();
  o.init_timeout_ms = 1000;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = ProbeWindow(o);
  const double ms = MsSince(t0);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(ms, o.init_timeout_ms + 2000.0) << r.status().ToString();
  EXPECT_NE(r.status().message().find("no reply within 1000 ms"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("replies to no call outstanding came meanwhile, dropped"),
            std::string::npos)
      << r.status().ToString();
}

// Replies to calls never sent, 16 KiB each with xids all different, as fast
// as loopback takes them (256 MiB, then silence): what the probe holds
// stays bounded (rpc/probe_replies.h: at most 8 replies of 64 KiB per
// connection; the bound below is generous for the sanitizers), and the
// wait ends at its deadline naming what came.
TEST(ProbeWindowTest, AServerFloodingOtherRepliesCannotGrowTheProbe) {
  Server s = Start(128, WindowPolicy::kDrop);
  ASSERT_TRUE(s.server);
  FloodingServer flood(s.probe.port, 16 << 10, 4, 0, size_t{256} << 20);
  ASSERT_NE(flood.port(), 0);
  ProbeOptions o = s.probe;
  o.port = flood.port();
  o.init_timeout_ms = 1000;
  common::Result<ProbeReport> r = common::Status::Internal("not run");
  double ms = 0;
  uint64_t growth = 0;
  {
    RssWatch rss;
    const auto t0 = std::chrono::steady_clock::now();
    r = ProbeWindow(o);
    ms = MsSince(t0);
    growth = rss.growth();
  }
  ASSERT_FALSE(r.ok());
  EXPECT_LT(ms, o.init_timeout_ms + 2000.0) << r.status().ToString();
  EXPECT_LT(growth, uint64_t{64} << 20);
  EXPECT_NE(r.status().message().find("no reply within 1000 ms"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("replies to no call outstanding came meanwhile, dropped"),
            std::string::npos)
      << r.status().ToString();
  EXPECT_GT(flood.flooded(), 0u);
}

// Records of 1 MiB: the probe reads none of them whole (its replies are a
// few hundred bytes), the first one breaks the connection with an error
// naming its size.
TEST(ProbeWindowTest, AServerSendingHugeRecordsIsAClearErrorAtOnce) {
  Server s = Start(128, WindowPolicy::kDrop);
  ASSERT_TRUE(s.server);
  FloodingServer flood(s.probe.port, size_t{1} << 20, 1, 0, size_t{128} << 20);
  ASSERT_NE(flood.port(), 0);
  ProbeOptions o = s.probe;
  o.port = flood.port();
  o.init_timeout_ms = 1000;
  auto r = ProbeWindow(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("the reply stream broke"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find(std::to_string(kProbeMaxRecord)), std::string::npos)
      << r.status().ToString();
}

// A proxy in front of secmode's own server that passes every connection
// through, with `strays` replies to calls never sent written to the client
// right after the server's first reply on it (the INIT reply).
class StrayInjector {
 public:
  StrayInjector(uint16_t backend, int strays) : backend_(backend), strays_(strays) {
    auto l = common::Listen("127.0.0.1", 0);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    if (!l.ok()) return;
    listener_ = std::move(l).value();
    port_ = common::LocalPort(listener_.get());
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{listener_.get(), POLLIN, 0};
        if (poll(&p, 1, 50) <= 0) continue;
        common::Fd client(accept(listener_.get(), nullptr, nullptr));
        if (client.get() < 0) continue;
        // One connection at a time: the probe opens the next after it ends
        // this one.
        Pass(std::move(client));
      }
    });
  }
  ~StrayInjector() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  uint16_t port() const { return port_; }

 private:
  void Pass(common::Fd client) {
    auto server = common::Connect("127.0.0.1", backend_, common::Deadline::AfterMs(2000));
    if (!server.ok()) return;
    RecordReader reader;
    bool injected = false;
    uint8_t buf[4096];
    while (!stop_) {
      pollfd p[2] = {{client.get(), POLLIN, 0}, {server->get(), POLLIN, 0}};
      if (poll(p, 2, 50) <= 0) continue;
      for (int i = 0; i < 2; ++i) {
        if (p[i].revents == 0) continue;
        const ssize_t n = recv(p[i].fd, buf, sizeof buf, 0);
        if (n <= 0) return;
        const common::ByteView got(buf, static_cast<size_t>(n));
        if (!common::WriteAll(p[1 - i].fd, got).ok()) return;
        if (i == 0 || injected) continue;
        reader.Feed(got);
        common::ByteView rec;
        auto r = reader.Next(&rec);
        if (!r.ok() || !*r) continue;
        injected = true;  // the INIT reply went through: the strays follow it
        for (int k = 0; k < strays_; ++k) {
          common::Bytes framed;
          FrameRecord(FakeReply(0x66000000 + static_cast<uint32_t>(k), 40), &framed);
          if (!common::WriteAll(client.get(), framed).ok()) return;
        }
      }
    }
  }

  const uint16_t backend_;
  const int strays_;
  common::Fd listener_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Replies to no call are dropped and counted, and change no verdict.
TEST(ProbeWindowTest, RepliesToNoCallAreCountedAndChangeNothing) {
  Server s = Start(32, WindowPolicy::kDrop);
  ASSERT_TRUE(s.server);
  StrayInjector proxy(s.probe.port, 3);
  ASSERT_NE(proxy.port(), 0);
  ProbeOptions o = s.probe;
  o.port = proxy.port();
  o.max_window = 256;
  auto r = ProbeWindow(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->window, 32u);
  EXPECT_TRUE(r->window_confirmed);
  EXPECT_EQ(r->below_window, "drop");
  // Every test's connection got three after its INIT reply; each test
  // made one context on one connection (drop keeps the connection).
  EXPECT_EQ(r->stray_replies, 3 * r->contexts_created);
  EXPECT_EQ(r->stray_reply_bytes, 3 * 40 * r->contexts_created);
}

common::Bytes Framed(uint32_t xid, size_t bytes) {
  common::Bytes w;
  FrameRecord(FakeReply(xid, bytes), &w);
  return w;
}

TEST(ProbeRepliesTest, MatchesByXidKeepsLateRepliesAndDropsStrays) {
  ProbeReplies p;
  p.Sent(1);
  p.Sent(2);
  common::Bytes rec;
  EXPECT_FALSE(*p.Next(1, &rec));
  p.Feed(Framed(2, 40));  // late for call 2: kept
  p.Feed(Framed(3, 40));  // no such call: stray
  p.Feed(Framed(2, 50));  // a second reply to call 2: stray
  p.Feed(Framed(1, 30));
  ASSERT_TRUE(*p.Next(1, &rec));
  EXPECT_EQ(rec.size(), 30u);
  EXPECT_EQ(p.kept(), 1u);
  EXPECT_EQ(p.stray(), 2u);
  EXPECT_EQ(p.stray_bytes(), 90u);
  ASSERT_TRUE(p.Take(2, &rec));
  EXPECT_EQ(rec.size(), 40u);
  EXPECT_FALSE(p.Take(2, &rec));
  // Answered calls are forgotten: their replies now are strays.
  p.Feed(Framed(1, 30));
  EXPECT_FALSE(*p.Next(7, &rec));
  EXPECT_EQ(p.stray(), 3u);
  EXPECT_EQ(p.pending(), 0u);
}

TEST(ProbeRepliesTest, WhatIsKeptIsBoundedWhateverComes) {
  ProbeReplies p;
  for (uint32_t x = 1; x <= 100; ++x) p.Sent(x);
  EXPECT_EQ(p.pending(), kProbeMaxPending);
  common::Bytes rec;
  uint64_t fed = 0;
  for (uint32_t round = 0; round < 3; ++round) {
    for (uint32_t x = 0; x <= 1000; ++x) {
      p.Feed(Framed(x, 8000));
      ++fed;
      // Nothing is waited for but a call never sent.
      ASSERT_FALSE(*p.Next(0xffffffff, &rec));
      ASSERT_LE(p.kept(), kProbeMaxPending);
      ASSERT_LE(p.kept_bytes(), kProbeMaxPending * kProbeMaxRecord);
    }
  }
  EXPECT_EQ(p.kept(), kProbeMaxPending);  // the last calls' replies
  EXPECT_EQ(p.stray(), fed - kProbeMaxPending);
  // Sending more calls forgets the oldest, and their kept replies count as
  // dropped.
  p.Sent(5000);
  EXPECT_EQ(p.kept(), kProbeMaxPending - 1);
  EXPECT_EQ(p.stray(), fed - kProbeMaxPending + 1);
}

TEST(ProbeRepliesTest, ARecordBeyondTheBoundBreaksTheStream) {
  ProbeReplies p;
  p.Sent(1);
  common::Bytes mark;
  AppendRecordMark(static_cast<uint32_t>(kProbeMaxRecord + 1), &mark);
  p.Feed(mark);
  common::Bytes rec;
  auto r = p.Next(1, &rec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(std::to_string(kProbeMaxRecord)), std::string::npos)
      << r.status().ToString();
}

}  // namespace
}  // namespace secmode::rpc
