// Subprocess: run or start helper programs (krb5kdc, kdb5_util, tshark ...).
//
// Uses posix_spawn, so it is safe to call from a multi-threaded process. The
// child gets this process's environment with `env` overriding entries, and
// its stdout and stderr appended to `log_path` (or /dev/null if empty).
#ifndef SECMODE_COMMON_SUBPROCESS_H_
#define SECMODE_COMMON_SUBPROCESS_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace secmode::common {

struct Command {
  std::vector<std::string> argv;           // argv[0] is searched in PATH,
                                           // then /usr/sbin and /sbin
  std::map<std::string, std::string> env;  // overrides
  std::string log_path;                    // stdout+stderr appended here
  std::string stdin_path;                  // "" means /dev/null
  // The child leads a process group of its own, so a terminal's Ctrl-C
  // (SIGINT to the foreground group) reaches only this process, which then
  // stops the child itself (a server such as krb5kdc that must outlive the
  // first SIGINT).
  bool own_process_group = false;
  std::string ToString() const;  // the command line, for errors
};

// Finds `program` as the shell would, also looking in /usr/sbin and /sbin
// (where Debian puts krb5kdc for non-root users' PATH). "" if absent.
std::string FindProgram(const std::string& program);

// This process's executable (/proc/self/exe); "" if it cannot be read.
std::string SelfPath();

// Starts the command and returns its pid.
Result<pid_t> Spawn(const Command& command);

// Runs the command to completion (at most `timeout_ms`, then SIGKILL) and
// returns its exit status; non-zero exit is not an error here.
Result<int> RunAndWait(const Command& command, int timeout_ms = 60000);

// How `pid` (a child not yet reaped) ended, without reaping it: "exited
// with status 1", "was killed by signal 9 (SIGKILL)"; "" while it runs.
std::string HowChildEnded(pid_t pid);

// Waits up to `timeout_ms` for `pid` to exit; true if it did (and was reaped).
bool WaitForExit(pid_t pid, int timeout_ms);

// SIGTERM, then SIGKILL after `grace_ms`, and reaps.
void Terminate(pid_t pid, int grace_ms = 2000);

}  // namespace secmode::common

#endif  // SECMODE_COMMON_SUBPROCESS_H_
