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
// every caller squashed to the anonymous user (below), SecType sys and,
// when a keytab is given, krb5, krb5i and krb5p, the GSS
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
// Every caller is the anonymous user kAnonymousUser (nobody) in the export
// (Squash = All_Squash, Anonymous_Uid/Gid = its uid and gid). ganesha.nfsd
// runs as root and its port is open to every local user, and with AUTH_SYS
// a client says itself which uid it is: with No_Root_Squash anyone on the
// machine could create, read and write files in the export as root while a
// run lasted. Squashing was chosen over PrivilegedPort (Ganesha answers a
// call from a port >= 1024 with AUTH_TOOWEAK: only a root process is
// served, as whichever uid it claims, and secmode's client would have to
// bind a reserved port) and over a network namespace (the loads on the
// machine's loopback could not reach it without a lab of their own). The
// export directory is root's, 0755: the anonymous user may read it but not
// create in it, so files a test puts there must be open to it (0644 to be
// read, 0666 to be written). Ganesha's parser still reads what any local
// process sends to the port, as any NFS server's does.
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
  // Whom every caller is in the export (and whom the Kerberos principals
  // given map to).
  static constexpr const char* kAnonymousUser = "nobody";

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
  // kAnonymousUser's uid and gid: the owner of what a client creates.
  uid_t anonymous_uid() const { return anonymous_uid_; }
  gid_t anonymous_gid() const { return anonymous_gid_; }
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
  uid_t anonymous_uid_ = 0;
  gid_t anonymous_gid_ = 0;
  common::Reaper reaper_;
  bool stopped_ = false;
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_GANESHA_H_
