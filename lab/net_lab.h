// NetLab: two hosts on one machine. Two network namespaces the lab creates
// ("server" and "client"), joined by a veth pair made inside them (the
// machine's own namespace never sees an interface or an address of the
// lab), each with its loopback up and one address on the pair:
// kServerAddress and kClientAddress. Each direction can be shaped by the
// kernel (tc tbf on the sending end's interface); this kernel has no netem,
// so the round trip is added by the programs themselves (`secmode serve
// --delay-ms`, `secmode load --delay-ms`, common/delay_line.h).
//
// Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and iproute2's `ip` and
// `tc`; Create says which one is missing. Nothing is left behind: the
// destructor kills the processes the lab was told about (Track), then any
// process still inside its namespaces (a server's children), and deletes
// both namespaces (the pair goes with them); a reaper (common/throwaway.h)
// does the same when the owner dies without doing so (an exception,
// SIGINT, even SIGKILL), from the lab's private directory's on-reap script.
//
// Thread safety: none; one owner. Ownership: the lab owns its namespaces,
// its directory and the reaper; move-only through unique_ptr.
#ifndef SECMODE_LAB_NET_LAB_H_
#define SECMODE_LAB_NET_LAB_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/socket.h"
#include "common/status.h"
#include "common/throwaway.h"

namespace secmode::lab {

inline constexpr const char* kServerAddress = "10.77.0.1";
inline constexpr const char* kClientAddress = "10.77.0.2";

// Each direction's rate in bits per second; 0: not shaped.
struct LinkShape {
  double c2s_bits_per_s = 0;
  double s2c_bits_per_s = 0;
  std::string ToString()
      const;  // "1 Gbit/s both ways", "unshaped", "c->s 100 Mbit/s, s->c unshaped"
};

// Why a lab cannot be made here ("" when it can): not root, no `ip`, no
// `tc`. Tests skip with it.
std::string LabUnavailableReason();

class NetLab {
 public:
  static common::Result<std::unique_ptr<NetLab>> Create();
  ~NetLab();
  NetLab(const NetLab&) = delete;
  NetLab& operator=(const NetLab&) = delete;

  // Sets both directions' token bucket (tbf: the rate; a bucket of a
  // quarter millisecond of it, two full frames at least, so each message is
  // serialised at the rate as on a real link; a queue of 100 ms of it, 4 MiB
  // at least, so TCP is not made to drop); a rate of 0 removes that
  // direction's.
  common::Status Shape(const LinkShape& shape);
  const LinkShape& shape() const { return shape_; }

  // `argv` run inside a namespace: {"ip", "netns", "exec", <name>, argv...}.
  std::vector<std::string> InServer(const std::vector<std::string>& argv) const;
  std::vector<std::string> InClient(const std::vector<std::string>& argv) const;

  // A TCP connection from the client namespace to host:port (a thread of
  // this process enters the namespace only to create and connect the
  // socket; the socket stays there for life and any thread may use it).
  // So a client inside this process reaches a server in the lab, e.g.
  // smb/samba_dc.h's domain controller on kServerAddress.
  common::Result<common::Fd> ConnectFromClient(const std::string& host, uint16_t port,
                                               common::Deadline deadline) const;

  // A process the lab must kill when it ends (or its reaper, if the owner
  // dies first); Forget when it has ended otherwise.
  common::Status Track(pid_t pid);
  common::Status Forget(pid_t pid);

  // Kills the tracked processes, deletes the namespaces, removes the
  // directory; idempotent. The first failure is returned; the rest is
  // still done.
  common::Status Destroy();

  const std::string& server_namespace() const { return server_ns_; }
  const std::string& client_namespace() const { return client_ns_; }
  const std::string& dir() const { return dir_; }  // logs go here
  pid_t reaper_pid() const { return reaper_.pid(); }

 private:
  NetLab() = default;
  common::Status Build();
  common::Status Ip(const std::vector<std::string>& args);  // `ip ARGS`, its output in the error
  common::Status WriteOnReap();
  std::string KillInsideScript() const;  // sh: kill what runs in the namespaces

  std::string dir_, server_ns_, client_ns_;
  std::vector<pid_t> tracked_;
  LinkShape shape_;
  bool made_ = false;  // the namespaces exist (to delete)
  common::Reaper reaper_;
};

}  // namespace secmode::lab

#endif  // SECMODE_LAB_NET_LAB_H_
