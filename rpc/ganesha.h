// Ganesha: a throwaway nfs-ganesha (Debian's nfs-ganesha and
// nfs-ganesha-vfs, `ganesha.nfsd -F`) as a real NFSv4 server peer, started
// like the realm's KDC (gss/realm.h).
//
// Start() makes a private 0700 directory with the configuration, the log,
// the recovery root, the callback ccache directory and the exported
// directory, chooses a free loopback port and starts ganesha.nfsd in the
// foreground in a process group of its own: NFSv4 only (minor versions 0-2)
// on TCP on 127.0.0.1 (Enable_UDP = false: no UDP listeners), no grace
// period, one VFS export of the directory at pseudo path /export with
// SecType sys and, when a keytab is given, krb5, krb5i and krb5p, the GSS
// acceptor in-process with that keytab (principal nfs, as the realm's
// nfs/localhost), its own idmapd.conf (the given principals are `nobody`).
// Ganesha also registers NFS v4 on TCP with a portmapper if one runs
// (rpcbind; on a clean exit it unregisters); without one it logs "Cannot
// register" and serves. It waits until the log says the server is
// initialised and the port accepts connections; a port taken meanwhile is
// replaced (up to kPortAttempts). Ganesha logs CRIT lines about a missing
// D-Bus and the callback channel's machine credentials and serves anyway.
//
// Nothing is left behind: Stop() and the destructor end the server (SIGTERM:
// it shuts down cleanly; SIGKILL after a grace) and remove the directory; a
// common::Reaper does both if the owner dies any other way.
//
// Root is needed (ganesha.nfsd changes capabilities and owners). Available()
// says why it cannot run here (not root, program missing): callers skip with
// that reason. Thread safety: Start/Stop from one thread; accessors const.
#ifndef SECMODE_RPC_GANESHA_H_
#define SECMODE_RPC_GANESHA_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/throwaway.h"

namespace secmode::rpc {

struct GaneshaOptions {
  // The GSS acceptor's keytab (a principal nfs/<host>); "" = sec=sys only.
  std::string keytab;
  // For ganesha.nfsd: the realm's environment (KRB5_CONFIG ...).
  std::map<std::string, std::string> env;
  // Kerberos principals ("user@REALM") that map to the local user nobody
  // (a private idmapd.conf): Ganesha refuses a principal it cannot map.
  std::vector<std::string> principals;
  int start_timeout_ms = 20000;
};

class Ganesha {
 public:
  static constexpr int kPortAttempts = 4;
  static constexpr const char* kPseudoPath = "/export";

  // Ok, or Unavailable naming why nfs-ganesha cannot be started here.
  static common::Status Available();
  static common::Result<std::unique_ptr<Ganesha>> Start(const GaneshaOptions& options);
  ~Ganesha();
  Ganesha(const Ganesha&) = delete;
  Ganesha& operator=(const Ganesha&) = delete;

  // Ends the server and removes the directory; idempotent.
  common::Status Stop();

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_; }
  std::string export_dir() const { return dir_ + "/export"; }
  std::string log_path() const { return dir_ + "/ganesha.log"; }
  // The server's version from its first log line ("4.3"), "" if not seen.
  const std::string& version() const { return version_; }
  // For errors: the address, the pid, whether the process still runs, and
  // the end of the log.
  std::string Describe() const;

 private:
  Ganesha() = default;
  common::Status Launch(const GaneshaOptions& options);

  std::string dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
  std::string version_;
  common::Reaper reaper_;
  bool stopped_ = false;
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_GANESHA_H_
