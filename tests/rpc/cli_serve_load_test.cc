// `secmode serve` and `secmode load` as separate processes talking over
// loopback TCP (nothing shared but the socket), with AUTH_SYS and with
// RPCSEC_GSS krb5i against the throwaway realm's keytab and ccache, with a
// user's own ticket from the real kinit (no client keytab), and with the
// server killed while load runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "common/clock.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "tests/gss/kinit_user.h"
#include "tests/rpc/serve_process.h"
#include "tests/support/shared_realm.h"
#include "tests/support/temp_dir.h"

namespace secmode {
namespace {

using testing::TempDir;
using testing::TextOf;

// A `secmode serve` process on a free port (it ends itself after 60 s at
// the latest), terminated with the object.
struct Served {
  explicit Served(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--seconds", "60"};
    args.insert(args.end(), extra.begin(), extra.end());
    proc.Start(SECMODE_BIN, args);
    if (proc.port() != 0) port = std::to_string(proc.port());
  }
  rpc::proc::ServeProcess proc;
  std::string port;  // empty: it did not start (the failure is reported)
};

// The JSON report is the part between the first '{' and the last '}'.
nlohmann::json ReportOf(const std::string& out) {
  const size_t a = out.find('{'), b = out.rfind('}');
  if (a == std::string::npos || b == std::string::npos || b < a) return nullptr;
  return nlohmann::json::parse(out.substr(a, b - a + 1), nullptr, false);
}

// Runs `secmode load` against the server; returns its exit status and
// output.
std::pair<int, std::string> RunLoadCommand(const std::string& dir, const std::string& port,
                                           const std::vector<std::string>& extra,
                                           const std::map<std::string, std::string>& env) {
  common::Command load;
  load.argv = {SECMODE_BIN, "load",       "--port", port,      "--seconds",
               "0.3",       "--nconnect", "2",      "--slots", "8"};
  load.argv.insert(load.argv.end(), extra.begin(), extra.end());
  load.env = env;
  load.log_path = dir + "/load.log";
  auto rc = common::RunAndWait(load, 60000);
  EXPECT_TRUE(rc.ok());
  return {rc.ok() ? *rc : -1, TextOf(load.log_path)};
}

void ServeAndLoad(const std::vector<std::string>& serve_extra,
                  const std::vector<std::string>& load_extra,
                  std::map<std::string, std::string> load_env = {}) {
  TempDir dir("secmode-cli-rpc");
  Served serve(serve_extra);
  ASSERT_FALSE(serve.port.empty());
  if (load_env.empty()) load_env = testing::SharedRealm()->Environment();
  auto [rc, out] = RunLoadCommand(dir.path, serve.port, load_extra, load_env);
  ASSERT_EQ(rc, 0) << out;
  auto json = ReportOf(out);
  ASSERT_TRUE(json.is_object()) << out;
  EXPECT_GT(json["ops"].get<uint64_t>(), 0u) << out;
  EXPECT_EQ(json["errors"].get<uint64_t>(), 0u) << out;
  EXPECT_EQ(json["connections"].get<int>(), 2);
  EXPECT_FALSE(json.contains("failure")) << out;
}

TEST(CliServeLoadTest, SysAcrossProcesses) {
  ServeAndLoad({}, {"--op", "write", "--size", "8192"});
}

TEST(CliServeLoadTest, Krb5iAcrossProcesses) {
  gss::Realm* realm = testing::SharedRealm();
  ServeAndLoad({"--keytab", realm->service_keytab()},
               {"--mode", "krb5i", "--ccache", realm->ccache(), "--op", "read"});
}

// The user's own ticket from the real kinit, with no client keytab MIT
// could fetch one from: named with --ccache, found through KRB5CCNAME, and
// in the configuration's default ccache.
TEST(CliServeLoadTest, AUsersKinitTicketWorksThroughCcacheKrb5ccnameAndTheDefault) {
  gss::Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  const std::string cc = "FILE:" + realm->dir() + "/alice-cli.ccache";
  ASSERT_TRUE(testing::KinitUser(*realm, cc).ok());
  const std::vector<std::string> serve = {"--keytab", realm->service_keytab()};
  ServeAndLoad(serve, {"--mode", "krb5i", "--ccache", cc},
               testing::NoKeytabEnvironment(*realm, ""));
  ServeAndLoad(serve, {"--mode", "krb5p", "--engine", "native"},
               testing::NoKeytabEnvironment(*realm, cc));
  // The default ccache: a configuration whose default_ccache_name is this
  // test's file, no KRB5CCNAME, kinit without -c.
  auto conf = common::ReadFile(realm->krb5_conf());
  ASSERT_TRUE(conf.ok());
  const std::string def = "FILE:" + realm->dir() + "/alice-cli-default.ccache";
  const std::string path = realm->dir() + "/krb5-cli-default.conf";
  ASSERT_TRUE(common::WriteFileAtomically(
                  path, std::regex_replace(*conf, std::regex("default_ccache_name = [^\n]*"),
                                           "default_ccache_name = " + def))
                  .ok());
  auto env = testing::NoKeytabEnvironment(*realm, "");
  env["KRB5_CONFIG"] = path;
  ASSERT_TRUE(testing::KinitUser(*realm, "", {}, {{"KRB5_CONFIG", path}}).ok());
  ASSERT_TRUE(common::ReadFile(def.substr(5)).ok()) << "kinit did not write the default ccache";
  ServeAndLoad(serve, {"--mode", "krb5"}, env);
}

TEST(CliServeLoadTest, AMissingTicketIsAClearRunTimeError) {
  gss::Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  TempDir dir("secmode-cli-rpc");
  Served serve({"--keytab", realm->service_keytab()});
  ASSERT_FALSE(serve.port.empty());
  const std::string cc = "FILE:" + dir.path + "/nobody.ccache";
  auto [rc, out] = RunLoadCommand(dir.path, serve.port, {"--mode", "krb5", "--ccache", cc},
                                  testing::NoKeytabEnvironment(*realm, ""));
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("secmode load:"), std::string::npos) << out;
  EXPECT_NE(out.find("no Kerberos credentials in ccache " + cc), std::string::npos) << out;
  EXPECT_NE(out.find("kinit"), std::string::npos) << out;
}

// The server dies while load runs: load says which connection and what
// happened, exits 1, and still prints what it measured before.
TEST(CliServeLoadTest, TheServerKilledWhileLoadRunsIsReportedWithTheResultsSoFar) {
  TempDir dir("secmode-cli-rpc");
  Served serve({});
  ASSERT_FALSE(serve.port.empty());
  common::Command load;
  load.argv = {SECMODE_BIN,  "load", "--port",  serve.port, "--seconds",  "30",
               "--nconnect", "3",    "--slots", "12",       "--deadline", "60"};
  load.log_path = dir.path + "/load.log";
  std::thread killer([&] {
    sleep(2);  // warm-up (0.2 s) and some measured calls
    kill(std::stoi(serve.proc.pid()), SIGKILL);
  });
  // 2 s before the kill, then at most 20 s to notice it and end.
  auto rc = common::RunAndWait(load, 22000);
  killer.join();
  ASSERT_TRUE(rc.ok()) << "secmode load did not end within 20 s of the server's death";
  const std::string out = TextOf(load.log_path);
  EXPECT_EQ(*rc, 1) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("secmode load: .*connection [1-3] of 3 to "
                                                "127\\.0\\.0\\.1:[0-9]+: the server closed it")))
      << out;
  EXPECT_NE(out.find("reconnecting failed"), std::string::npos) << out;
  auto json = ReportOf(out);
  ASSERT_TRUE(json.is_object()) << out;
  EXPECT_GT(json["ops"].get<uint64_t>(), 0u) << out;
  EXPECT_GT(json["seconds"].get<double>(), 0) << out;
  EXPECT_LT(json["seconds"].get<double>(), 30) << out;
  EXPECT_NE(json.value("failure", ""), "") << out;
}

TEST(CliServeLoadTest, BadArgumentsAreRefused) {
  common::Command load;
  load.argv = {SECMODE_BIN, "load", "--mode", "krb6", "--port", "1"};
  auto rc = common::RunAndWait(load, 20000);
  ASSERT_TRUE(rc.ok());
  EXPECT_NE(*rc, 0);
  common::Command serve;
  serve.argv = {SECMODE_BIN, "serve", "--window-policy", "sometimes", "--seconds", "1"};
  rc = common::RunAndWait(serve, 20000);
  ASSERT_TRUE(rc.ok());
  EXPECT_NE(*rc, 0);
  // A budget below 4 x --max-gather could never let a first call run.
  serve.argv = {SECMODE_BIN, "serve", "--port", "0", "--max-memory", "1048576", "--seconds", "1"};
  rc = common::RunAndWait(serve, 20000);
  ASSERT_TRUE(rc.ok());
  EXPECT_NE(*rc, 0);
}

}  // namespace
}  // namespace secmode
