#include "common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/clock.h"

extern char** environ;

namespace secmode::common {

std::string Command::ToString() const {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool quote = a.find_first_of(" \t'\"") != std::string::npos || a.empty();
    out += quote ? "'" + a + "'" : a;
  }
  return out;
}

std::string FindProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    return access(program.c_str(), X_OK) == 0 ? program : "";
  }
  std::string path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
  path += ":/usr/sbin:/sbin:/usr/local/sbin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (!dir.empty()) {
      std::string candidate = dir + "/" + program;
      struct stat st;
      if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
          access(candidate.c_str(), X_OK) == 0) {
        return candidate;
      }
    }
    start = end + 1;
  }
  return "";
}

std::string SelfPath() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = 0;
  return buf;
}

Result<pid_t> Spawn(const Command& command) {
  if (command.argv.empty()) return Status::InvalidArgument("empty command");
  std::string exe = FindProgram(command.argv[0]);
  if (exe.empty()) {
    return Status::Unavailable(
        "program '" + command.argv[0] +
        "' not found in PATH, /usr/sbin or /sbin (command: " + command.ToString() + ")");
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    std::string entry = *e;
    std::string key = entry.substr(0, entry.find('='));
    if (!command.env.count(key)) env_strings.push_back(entry);
  }
  for (const auto& [k, v] : command.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = command.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  std::string in = command.stdin_path.empty() ? "/dev/null" : command.stdin_path;
  std::string out = command.log_path.empty() ? "/dev/null" : command.log_path;
  posix_spawn_file_actions_addopen(&actions, 0, in.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Reset signal dispositions and mask so a child never inherits a blocked
  // SIGTERM from a test harness thread.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (command.own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status::IoError("cannot start " + command.ToString() + ": " + strerror(rc));
  }
  return pid;
}

std::string HowChildEnded(pid_t pid) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != pid) {
    return "";
  }
  if (info.si_code == CLD_EXITED) return "exited with status " + std::to_string(info.si_status);
  const char* abbrev = sigabbrev_np(info.si_status);
  return "was killed by signal " + std::to_string(info.si_status) +
         (abbrev ? std::string(" (SIG") + abbrev + ")" : std::string());
}

bool WaitForExit(pid_t pid, int timeout_ms) {
  uint64_t deadline = NowNs() + static_cast<uint64_t>(timeout_ms) * 1000000ull;
  while (true) {
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (NowNs() >= deadline) return false;
    usleep(2000);
  }
}

Result<int> RunAndWait(const Command& command, int timeout_ms) {
  SECMODE_ASSIGN_OR_RETURN(pid_t pid, Spawn(command));
  uint64_t deadline = NowNs() + static_cast<uint64_t>(timeout_ms) * 1000000ull;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    if (r < 0 && errno != EINTR) {
      return Status::IoError("waitpid for " + command.ToString() + ": " + strerror(errno));
    }
    if (NowNs() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return Status::Unavailable("timed out after " + std::to_string(timeout_ms) +
                                 " ms: " + command.ToString());
    }
    usleep(1000);
  }
}

void Terminate(pid_t pid, int grace_ms) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  if (!WaitForExit(pid, grace_ms)) {
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
  }
}

}  // namespace secmode::common
