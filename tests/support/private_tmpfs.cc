#include "tests/support/private_tmpfs.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/files.h"

namespace secmode::testing {

namespace {

bool WriteProcFile(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// In the child: a private mount namespace (and a user namespace when not
// root). "" on success, else why not (the test is then skipped).
std::string EnterPrivateMountNamespace() {
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  if (geteuid() == 0) {
    if (unshare(CLONE_NEWNS) != 0) {
      return std::string("unshare(CLONE_NEWNS) as root: ") + strerror(errno);
    }
  } else {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
      return std::string("not root, and unshare(CLONE_NEWUSER | CLONE_NEWNS): ") + strerror(errno) +
             " (run as root, or allow unprivileged user namespaces)";
    }
    WriteProcFile("/proc/self/setgroups", "deny");
    if (!WriteProcFile("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
        !WriteProcFile("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n")) {
      return std::string("cannot map ids in the user namespace: ") + strerror(errno);
    }
  }
  // Nothing mounted here may propagate back to the machine's namespace.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return std::string("making / private in the new mount namespace: ") + strerror(errno);
  }
  return "";
}

}  // namespace

TmpfsOutcome InPrivateTmpfs(const std::string& mount_point, size_t size_bytes,
                            const std::function<std::string()>& body) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {false, std::string("pipe2: ") + strerror(errno)};
  pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return {false, std::string("fork: ") + strerror(errno)};
  }
  if (child == 0) {
    close(fds[0]);
    std::string verdict;
    char kind = 'F';
    std::string why = EnterPrivateMountNamespace();
    if (!why.empty()) {
      kind = 'S';
      verdict = why;
    } else if (mount("tmpfs", mount_point.c_str(), "tmpfs", 0,
                     ("size=" + std::to_string(size_bytes) + ",mode=0755").c_str()) != 0) {
      kind = 'S';
      verdict = "cannot mount a tmpfs on " + mount_point + ": " + strerror(errno);
    } else {
      verdict = body();
    }
    std::string message = std::string(1, kind) + verdict;
    size_t done = 0;
    while (done < message.size()) {
      ssize_t n = write(fds[1], message.data() + done, message.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string message;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) message.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (message.empty()) {
    return {false, "the test's child process died (wait status " + std::to_string(status) +
                       ") before it gave a verdict"};
  }
  return {message[0] == 'S', message.substr(1)};
}

common::Status RemountReadOnly(const std::string& mount_point, size_t size_bytes) {
  if (mount("tmpfs", mount_point.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY,
            ("size=" + std::to_string(size_bytes)).c_str()) != 0) {
    return common::Status::IoError("remounting " + mount_point +
                                   " read-only: " + common::ErrnoText(errno));
  }
  return common::Status::Ok();
}

common::Status FillUp(const std::string& dir) {
  const std::string path = dir + "/filler";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return common::Status::IoError("creating " + path + ": " + common::ErrnoText(errno));
  std::vector<char> block(4096, 'x');
  while (true) {
    ssize_t n = write(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ENOSPC) break;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return common::Status::IoError("filling " + path + ": " + common::ErrnoText(err));
    }
  }
  close(fd);
  return common::Status::Ok();
}

}  // namespace secmode::testing
