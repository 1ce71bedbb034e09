#include "tests/support/processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <fstream>

#include "common/clock.h"

namespace secmode::testing {

namespace fs = std::filesystem;

bool WaitUntil(const std::function<bool()>& cond, int timeout_ms) {
  const uint64_t deadline = common::NowNs() + static_cast<uint64_t>(timeout_ms) * 1000000ull;
  while (common::NowNs() < deadline) {
    if (cond()) return true;
    usleep(10000);
  }
  return cond();
}

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

std::string ExpectOwnerDeathCleansUp(const std::function<std::string()>& start, int sig) {
  int fds[2];
  if (pipe(fds) != 0) {
    ADD_FAILURE() << "pipe: " << strerror(errno);
    return "";
  }
  pid_t child = fork();
  if (child < 0) {
    ADD_FAILURE() << "fork: " << strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return "";
  }
  if (child == 0) {
    close(fds[0]);
    std::string msg = start() + "\n";
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
  if (msg.rfind("error", 0) == 0 || msg.find(' ') == std::string::npos) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    ADD_FAILURE() << "the child could not start its server: " << msg;
    return "";
  }
  const std::string dir = msg.substr(0, msg.find(' '));
  const pid_t server = static_cast<pid_t>(std::stol(msg.substr(msg.find(' ') + 1)));
  EXPECT_TRUE(fs::exists(dir));
  EXPECT_TRUE(ProcessRunning(server));
  kill(child, sig);
  int status;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WaitUntil([&] { return !ProcessRunning(server) && !fs::exists(dir); }, 10000))
      << "after signal " << sig << ": server running=" << ProcessRunning(server)
      << " dir exists=" << fs::exists(dir);
  return dir;
}

}  // namespace secmode::testing
