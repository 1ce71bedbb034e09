// Realm lifecycle: it works, and it leaves no process and no directory behind
// on Stop, on destruction, and when the owning process is killed.
#include "gss/realm.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/clock.h"
#include "common/subprocess.h"

namespace secmode::gss {
namespace {

namespace fs = std::filesystem;

// Alive and not a zombie (a reparented, killed KDC may linger as a zombie
// until init reaps it; that is not a running KDC).
bool ProcessRunning(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  size_t close_paren = line.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= line.size()) return false;
  char state = line[close_paren + 2];
  return state != 'Z' && state != 'X';
}

bool WaitUntil(const std::function<bool()>& cond, int timeout_ms) {
  uint64_t deadline = common::NowNs() + static_cast<uint64_t>(timeout_ms) * 1000000ull;
  while (common::NowNs() < deadline) {
    if (cond()) return true;
    usleep(10000);
  }
  return cond();
}

TEST(RealmTest, StartsAnswersAndStopsCleanly) {
  const char* before = getenv("KRB5_CONFIG");
  std::string before_value = before ? before : "";
  auto realm = Realm::Start();
  ASSERT_TRUE(realm.ok()) << realm.status().ToString();
  Realm& r = **realm;
  const std::string dir = r.dir();
  const pid_t kdc = r.kdc_pid();
  const pid_t reaper = r.reaper_pid();
  EXPECT_TRUE(ProcessRunning(kdc));
  EXPECT_TRUE(fs::exists(r.service_keytab()));
  EXPECT_TRUE(fs::exists(r.user_keytab()));
  EXPECT_NE(r.kdc_port(), 88);
  EXPECT_EQ(std::string(getenv("KRB5_CONFIG")), r.krb5_conf());
  // The TGT is really there: klist -s exits 0 only for a valid ccache.
  common::Command klist{{"klist", "-s", "-c", r.ccache()}, r.Environment(), "", ""};
  auto rc = common::RunAndWait(klist);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(*rc, 0);
  // The service keytab holds all four AES enctypes.
  common::Command klist_k{
      {"klist", "-k", "-e", r.service_keytab()}, r.Environment(), dir + "/klist-k.out", ""};
  ASSERT_TRUE(common::RunAndWait(klist_k).ok());
  std::ifstream kt(dir + "/klist-k.out");
  std::string listing((std::istreambuf_iterator<char>(kt)), {});
  for (const char* e : {"aes256-cts-hmac-sha1-96", "aes128-cts-hmac-sha1-96",
                        "aes256-cts-hmac-sha384-192", "aes128-cts-hmac-sha256-128"}) {
    EXPECT_NE(listing.find(e), std::string::npos) << e << " missing from\n" << listing;
  }
  // A second realm in the same process is refused, with the reason.
  auto second = Realm::Start();
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("already running"), std::string::npos);

  realm->reset();
  EXPECT_FALSE(ProcessRunning(kdc));
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(WaitUntil([&] { return !ProcessRunning(reaper); }, 5000));
  const char* after = getenv("KRB5_CONFIG");
  EXPECT_EQ(after ? std::string(after) : std::string(), before_value);
}

// Starts a realm in a child process, reports its directory and KDC pid, then
// kills the child with `sig` and checks that the reaper cleaned up.
void KillOwnerAndCheckCleanup(int sig) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    auto realm = Realm::Start();
    std::string msg = realm.ok() ? (*realm)->dir() + " " + std::to_string((*realm)->kdc_pid())
                                 : "error " + realm.status().ToString();
    msg += "\n";
    if (write(fds[1], msg.data(), msg.size()) < 0) _exit(2);
    close(fds[1]);
    while (true) pause();
  }
  close(fds[1]);
  std::string msg;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) {
    msg.append(buf, static_cast<size_t>(n));
    if (msg.find('\n') != std::string::npos) break;
  }
  close(fds[0]);
  ASSERT_EQ(msg.rfind("error", 0), std::string::npos) << msg;
  std::string dir = msg.substr(0, msg.find(' '));
  pid_t kdc = static_cast<pid_t>(std::stol(msg.substr(msg.find(' ') + 1)));
  ASSERT_TRUE(fs::exists(dir));
  ASSERT_TRUE(ProcessRunning(kdc));
  kill(child, sig);
  int status;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WaitUntil([&] { return !ProcessRunning(kdc) && !fs::exists(dir); }, 10000))
      << "after signal " << sig << ": kdc running=" << ProcessRunning(kdc)
      << " dir exists=" << fs::exists(dir);
}

TEST(RealmTest, SigtermOfOwnerLeavesNothingBehind) { KillOwnerAndCheckCleanup(SIGTERM); }
TEST(RealmTest, SigintOfOwnerLeavesNothingBehind) { KillOwnerAndCheckCleanup(SIGINT); }
TEST(RealmTest, SigkillOfOwnerLeavesNothingBehind) { KillOwnerAndCheckCleanup(SIGKILL); }

TEST(RealmTest, MissingKdcProgramIsNamedWithCommandLine) {
  // With an empty PATH and no sbin fallback hit, the error must name the
  // program; simulate by pointing PATH at an empty directory and checking the
  // message lists the program and command when kdb5_util is absent. We can
  // only do this when the programs are not in /usr/sbin, so check the
  // message format through a direct failing tool instead: a bad realm name
  // makes kdb5_util fail, and the error must carry program, command and log.
  RealmOptions options;
  options.name = "BAD REALM WITH SPACES";
  auto realm = Realm::Start(options);
  ASSERT_FALSE(realm.ok());
  const std::string& m = realm.status().message();
  EXPECT_NE(m.find("command:"), std::string::npos) << m;
  EXPECT_NE(m.find("log "), std::string::npos) << m;
  // And nothing is left: a fresh realm can start right after.
  auto good = Realm::Start();
  EXPECT_TRUE(good.ok()) << good.status().ToString();
}

}  // namespace
}  // namespace secmode::gss
