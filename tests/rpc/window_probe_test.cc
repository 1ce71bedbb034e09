// ProbeWindow against secmode's own server, whose window and policy are set
// by the test: the probe must find each exactly. (MIT gssrpc as the peer with
// a known answer: interop_test.cc.)
#include "rpc/window_probe.h"

#include <gtest/gtest.h>

#include <memory>

#include "rpc/local_server.h"
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
  o.mode = "sys";
  EXPECT_EQ(ProbeWindow(o).status().code(), common::Code::kInvalidArgument);
  o.mode = "krb5q";
  EXPECT_EQ(ProbeWindow(o).status().code(), common::Code::kInvalidArgument);
  o.mode = "krb5";
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

}  // namespace
}  // namespace secmode::rpc
