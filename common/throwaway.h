// What a throwaway server (the realm's KDC, nfs-ganesha ...) needs from its
// owner: a loopback port that is free now, and a reaper that kills the
// server and removes its private directory when the owner dies without
// doing so itself (an exception, SIGINT, SIGTERM, even SIGKILL).
//
// The reaper is `sh` in a session of its own, ignoring INT/TERM/HUP, blocked
// reading a pipe whose only write end the owner holds (close-on-exec, so no
// other child inherits it). When the owner exits for any reason the read
// returns EOF; the reaper then sends SIGKILL to the pid written in the
// directory's `pid_file` (if there is one), runs the directory's `on-reap`
// shell script (if there is one: what else the owner made and must not
// leave behind, e.g. the lab's network namespaces and the processes in
// them; the owner keeps it current, written atomically) and removes the
// directory. An
// owner that stops its server and removes the directory itself calls
// Release() (or lets the Reaper go out of scope): the reaper wakes, finds
// nothing left and exits.
//
// Ownership: a Reaper owns the pipe's write end and the reaper process;
// move-only. Thread safety: none; one owner.
#ifndef SECMODE_COMMON_THROWAWAY_H_
#define SECMODE_COMMON_THROWAWAY_H_

#include <sys/types.h>

#include <string>

#include "common/status.h"

namespace secmode::common {

// A port free on 127.0.0.1 for TCP (and UDP too with `udp`) right now; 0
// when none was found. The server binds it a moment later: a caller must
// handle losing the race (start again with another port).
int FreeLoopbackPort(bool udp);

class Reaper {
 public:
  // `name` is the reaper's argv[0] (seen in ps), e.g. "secmode-realm-reaper".
  static Result<Reaper> Start(const std::string& dir, const std::string& pid_file,
                              const std::string& name);
  Reaper() = default;
  Reaper(Reaper&& o) noexcept : pid_(o.pid_), fd_(o.fd_) { o.pid_ = o.fd_ = -1; }
  Reaper& operator=(Reaper&& o) noexcept;
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;
  ~Reaper() { Release(); }

  // Closes the pipe and waits for the reaper to exit (it does what is left
  // to do: nothing, once the owner has cleaned up). Idempotent.
  void Release();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace secmode::common

#endif  // SECMODE_COMMON_THROWAWAY_H_
