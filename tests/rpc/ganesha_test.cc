// The throwaway nfs-ganesha: it starts with the realm's keytab, answers
// RPCSEC_GSS on NFSv4, and leaves nothing behind; then secmode probe says
// what its sequence window is and what it does below it.
#include "rpc/ganesha.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rpc/window_probe.h"
#include "tests/support/processes.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

class GaneshaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    common::Status why = Ganesha::Available();
    if (!why.ok()) GTEST_SKIP() << why.message();
  }
  std::unique_ptr<Ganesha> StartWithRealm() {
    gss::Realm* realm = testing::SharedRealm();
    GaneshaOptions o;
    o.keytab = realm->service_keytab();
    o.env = realm->Environment();
    auto g = Ganesha::Start(o);
    EXPECT_TRUE(g.ok()) << g.status().ToString();
    return g.ok() ? std::move(g).value() : nullptr;
  }
};

TEST_F(GaneshaTest, StartsServesAndLeavesNothingBehind) {
  auto g = StartWithRealm();
  ASSERT_TRUE(g);
  EXPECT_GT(g->port(), 0);
  EXPECT_FALSE(g->version().empty());
  const std::string dir = g->dir();
  const pid_t pid = g->pid();
  EXPECT_TRUE(Exists(g->export_dir()));
  EXPECT_EQ(kill(pid, 0), 0);
  ASSERT_TRUE(g->Stop().ok());
  EXPECT_FALSE(Exists(dir));
  EXPECT_NE(kill(pid, 0), 0);  // gone (and reaped)
}

// Its owner killed any way: the reaper ends ganesha.nfsd and removes the
// directory.
class GaneshaOwnerDeathTest : public GaneshaTest, public ::testing::WithParamInterface<int> {};

TEST_P(GaneshaOwnerDeathTest, LeavesNothingBehind) {
  testing::ExpectOwnerDeathCleansUp(
      [] {
        auto g = Ganesha::Start({});  // sec=sys: no realm in the child
        if (!g.ok()) return "error " + g.status().ToString();
        const std::string msg = (*g)->dir() + " " + std::to_string((*g)->pid());
        g->release();  // the owner dies holding it
        return msg;
      },
      GetParam());
}

INSTANTIATE_TEST_SUITE_P(Signals, GaneshaOwnerDeathTest, ::testing::Values(SIGINT, SIGKILL));

// What Ganesha does with sequence numbers: reported from the probe's
// evidence; the assertions are what any RFC 2203 server must do (answer
// in-order numbers, have some window, refuse a number far below it).
TEST_F(GaneshaTest, ProbeStatesItsWindowAndReaction) {
  auto g = StartWithRealm();
  ASSERT_TRUE(g);
  ProbeOptions o;
  o.port = g->port();
  o.ccache = testing::SharedRealm()->ccache();
  o.silence_ms = 500;
  o.max_window = 4096;
  auto r = ProbeWindow(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << g->Describe();
  EXPECT_GT(r->advertised_window, 0u);
  EXPECT_GT(r->window, 0u) << "accepted a number 4096 below the highest";
  EXPECT_NE(r->below_window, "accepted");
  std::cout << "nfs-ganesha " << g->version() << ": advertised window " << r->advertised_window
            << ", measured " << r->window << (r->window_confirmed ? " (confirmed)" : "")
            << ", far below: " << r->below_window << " [" << r->below_window_reply
            << "], just below: " << r->below_window_edge << ", duplicate: " << r->duplicate
            << ", 0x7fffffff: " << r->at_maxseq_minus_1 << ", MAXSEQ: " << r->at_maxseq << "\n";
}

}  // namespace
}  // namespace secmode::rpc
