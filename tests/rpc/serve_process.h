// Test helper: `secmode serve` as a process of its own (so its memory and
// descriptors can be read from /proc/PID), optionally under resource limits
// set by the shell (`ulimit -n`, `-v`, `-s`), with the shared realm's
// environment. Stopped (SIGTERM) and its directory removed when destroyed;
// a reaper (common/throwaway.h) does both if the test process dies first
// (killed by ctest's timeout, SIGINT, SIGKILL).
// SECMODE_SERVE_BIN in the environment names another secmode binary to run
// instead (the same tests against another build, e.g. to see the old
// behaviour a fix changed).
#ifndef SECMODE_TESTS_RPC_SERVE_PROCESS_H_
#define SECMODE_TESTS_RPC_SERVE_PROCESS_H_

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/files.h"
#include "common/subprocess.h"
#include "common/throwaway.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc::proc {

class ServeProcess {
 public:
  ServeProcess() = default;
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;
  ~ServeProcess() {
    if (pid_ > 0) common::Terminate(pid_, 3000);
    if (!dir_.empty()) (void)common::RemoveTree(dir_);
    reaper_.Release();  // nothing left for it to do
  }

  // Starts `binary serve --port 0 args...` after `ulimits` ("-n 256 -s
  // 8192": each "-X value" pair becomes one `ulimit -X value`); ASSERTs
  // that it says where it serves. `env` overrides the realm's environment.
  void Start(const std::string& binary, const std::vector<std::string>& args,
             const std::string& ulimits = "", const std::map<std::string, std::string>& env = {}) {
    auto dir = common::MakeTempDirectory("secmode-serve-test");
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    dir_ = *dir;
    auto reaper = common::Reaper::Start(dir_, kPidFile, "secmode-serve-test-reaper");
    ASSERT_TRUE(reaper.ok()) << reaper.status().ToString();
    reaper_ = std::move(*reaper);
    log_path_ = dir_ + "/serve.log";
    std::string script;
    std::istringstream limits(ulimits);
    std::string flag, value;
    while (limits >> flag >> value) script += "ulimit " + flag + " " + value + " && ";
    script += "exec \"$0\" \"$@\"";
    common::Command cmd;
    const char* other = getenv("SECMODE_SERVE_BIN");
    cmd.argv = {"sh", "-c", script, other != nullptr ? other : binary, "serve", "--port", "0"};
    cmd.argv.insert(cmd.argv.end(), args.begin(), args.end());
    cmd.env = secmode::testing::SharedRealm()->Environment();
    for (const auto& [k, v] : env) cmd.env[k] = v;
    cmd.log_path = log_path_;
    auto pid = common::Spawn(cmd);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    pid_ = *pid;  // sh execs secmode: the same pid
    auto written = common::WriteFileAtomically(dir_ + "/" + kPidFile, std::to_string(pid_));
    ASSERT_TRUE(written.ok()) << written.ToString();
    std::regex re("serving on 127\\.0\\.0\\.1:([0-9]+)");
    std::smatch m;
    std::string log;
    for (int i = 0; i < 500; ++i) {
      log = Log();
      if (std::regex_search(log, m, re)) break;
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        Reaped();
        FAIL() << "secmode serve exited at start (status " << status << "):\n" << log;
      }
      usleep(20000);
    }
    ASSERT_TRUE(std::regex_search(log, m, re)) << log;
    port_ = static_cast<uint16_t>(std::stoi(m[1]));
  }

  std::string Log() const {
    std::ifstream in(log_path_);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  bool Running() const { return pid_ > 0 && kill(pid_, 0) == 0; }
  // SIGTERM, then the wait status (-1 if it had to be killed after 10 s).
  int Stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 1000; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        Reaped();
        return status;
      }
      usleep(10000);
    }
    common::Terminate(pid_, 100);
    Reaped();
    return -1;
  }
  uint16_t port() const { return port_; }
  std::string pid() const { return std::to_string(pid_); }
  const std::string& dir() const { return dir_; }

 private:
  static constexpr const char* kPidFile = "serve.pid";
  // Waited for: the reaper must not kill its pid, which another process
  // may get from now on.
  void Reaped() {
    pid_ = -1;
    unlink((dir_ + "/" + kPidFile).c_str());
  }
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string dir_, log_path_;
  common::Reaper reaper_;
};

}  // namespace secmode::rpc::proc

#endif  // SECMODE_TESTS_RPC_SERVE_PROCESS_H_
