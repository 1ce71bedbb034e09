#include "common/throwaway.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/subprocess.h"

extern char** environ;

namespace secmode::common {

int FreeLoopbackPort(bool udp) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (tcp < 0 || bind(tcp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      if (tcp >= 0) close(tcp);
      continue;
    }
    socklen_t len = sizeof addr;
    getsockname(tcp, reinterpret_cast<sockaddr*>(&addr), &len);
    bool ok = true;
    if (udp) {
      int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      ok = u >= 0 && bind(u, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
      if (u >= 0) close(u);
    }
    close(tcp);
    if (ok) return ntohs(addr.sin_port);
  }
  return 0;
}

Result<Reaper> Reaper::Start(const std::string& dir, const std::string& pid_file,
                             const std::string& name) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::IoError(std::string("pipe2: ") + strerror(errno));
  const std::string script =
      "trap '' INT TERM HUP; cat >/dev/null; "
      "if [ -f \"$1/$2\" ]; then kill -9 \"$(cat \"$1/$2\")\" 2>/dev/null; fi; "
      "if [ -f \"$1/on-reap\" ]; then sh \"$1/on-reap\" >/dev/null 2>&1; fi; "
      "rm -rf \"$1\"";
  std::vector<std::string> args = {"sh", "-c", script, name, dir, pid_file};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[0]);
  if (rc != 0) {
    close(fds[1]);
    return Status::IoError("cannot start the reaper /bin/sh (" + name + "): " + strerror(rc));
  }
  Reaper r;
  r.pid_ = pid;
  r.fd_ = fds[1];
  return r;
}

Reaper& Reaper::operator=(Reaper&& o) noexcept {
  if (this != &o) {
    Release();
    pid_ = o.pid_;
    fd_ = o.fd_;
    o.pid_ = o.fd_ = -1;
  }
  return *this;
}

void Reaper::Release() {
  if (fd_ >= 0) {
    close(fd_);  // EOF: the reaper does what is left and exits
    fd_ = -1;
  }
  if (pid_ > 0) {
    if (!WaitForExit(pid_, 5000)) Terminate(pid_);
    pid_ = -1;
  }
}

}  // namespace secmode::common
