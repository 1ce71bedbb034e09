// `secmode serve` and `secmode load` as separate processes talking over
// loopback TCP (nothing shared but the socket), with AUTH_SYS and with
// RPCSEC_GSS krb5i against the throwaway realm's keytab and ccache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/files.h"
#include "common/subprocess.h"
#include "tests/support/shared_realm.h"

namespace secmode {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void ServeAndLoad(const std::vector<std::string>& serve_extra,
                  const std::vector<std::string>& load_extra) {
  auto dir = common::MakeTempDirectory("secmode-cli-rpc");
  ASSERT_TRUE(dir.ok());
  struct Cleanup {
    std::string path;
    ~Cleanup() { (void)common::RemoveTree(path); }
  } cleanup{*dir};
  common::Command serve;
  serve.argv = {SECMODE_BIN, "serve", "--port", "0", "--seconds", "20"};
  serve.argv.insert(serve.argv.end(), serve_extra.begin(), serve_extra.end());
  serve.env = testing::SharedRealm()->Environment();
  serve.log_path = *dir + "/serve.log";
  auto pid = common::Spawn(serve);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  struct Killer {
    pid_t pid;
    ~Killer() { common::Terminate(pid, 2000); }
  } killer{*pid};
  std::smatch m;
  std::string log;
  std::regex re("serving on 127\\.0\\.0\\.1:([0-9]+)");
  for (int i = 0; i < 200; ++i) {
    log = Slurp(serve.log_path);
    if (std::regex_search(log, m, re)) break;
    usleep(20000);
  }
  ASSERT_TRUE(std::regex_search(log, m, re)) << log;
  std::string port = m[1];

  common::Command load;
  load.argv = {SECMODE_BIN, "load",       "--port", port,      "--seconds",
               "0.3",       "--nconnect", "2",      "--slots", "8"};
  load.argv.insert(load.argv.end(), load_extra.begin(), load_extra.end());
  load.env = testing::SharedRealm()->Environment();
  load.log_path = *dir + "/load.log";
  auto rc = common::RunAndWait(load, 60000);
  ASSERT_TRUE(rc.ok());
  std::string out = Slurp(load.log_path);
  ASSERT_EQ(*rc, 0) << out;
  // The JSON report is the part between the first '{' and the last '}'.
  auto json = nlohmann::json::parse(out.substr(out.find('{'), out.rfind('}') - out.find('{') + 1));
  EXPECT_GT(json["ops"].get<uint64_t>(), 0u) << out;
  EXPECT_EQ(json["errors"].get<uint64_t>(), 0u) << out;
  EXPECT_EQ(json["connections"].get<int>(), 2);
}

TEST(CliServeLoadTest, SysAcrossProcesses) {
  ServeAndLoad({}, {"--op", "write", "--size", "8192"});
}

TEST(CliServeLoadTest, Krb5iAcrossProcesses) {
  gss::Realm* realm = testing::SharedRealm();
  ServeAndLoad({"--keytab", realm->service_keytab()},
               {"--mode", "krb5i", "--ccache", realm->ccache(), "--op", "read"});
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
}

}  // namespace
}  // namespace secmode
