// SambaDc: a throwaway Samba Active Directory domain controller (Debian's
// samba, samba-ad-dc, samba-ad-provision) as the real SMB3 server peer, with
// its own Kerberos KDC, started like the realm's KDC (gss/realm.h) and
// nfs-ganesha (rpc/ganesha.h).
//
// Why a domain controller: a standalone smbd (security = user) answers a
// Kerberos SPNEGO token with NT_STATUS_BAD_TOKEN_TYPE, a member server
// without a DC answers NT_STATUS_NO_LOGON_SERVERS; the published SMB
// figures ran against servers joined to Active Directory.
//
// Where: a DC's ports are fixed (88, 389, 445 ...), so it runs in the
// server namespace of a lab::NetLab of its own (lab/net_lab.h) on
// lab::kServerAddress, and parallel tests and the machine's own services
// never collide. The client side reaches it from the lab's client
// namespace: Connect() makes TCP connections there for this process, and
// the Kerberos tickets are fetched there (MIT `kinit` with the user's
// keytab, then `kvno` for the server's cifs/ principal) into a ccache file
// in the private directory, so the GSS-API in this process never needs the
// DC's KDC (whatever KRB5_CONFIG this process has, e.g. the NFS side's
// realm).
//
// Start(): a private directory (inside the lab's), `samba-tool domain
// provision` (realm kRealm, domain kDomain, host kHost, no DNS server) run
// in the server namespace, a share `kShare` in the directory, a user kUser
// with a random password no one sees, its keys exported into a keytab in a
// 0700 directory (no password is ever on a command line, which any local
// user can read in /proc, or in a file), smb.conf amended (below),
// `samba -i` in the foreground in the server namespace and in a mount
// namespace of its own where /run/samba (the sockets Samba's processes find
// each other by, a path built into them) is the DC's own directory, so two
// DCs on the machine never reach each other's winbindd (its log kept),
// waited for until its
// KDC and SMB ports accept connections from the client namespace, winbindd
// listens (smbd asks it to map the user's SIDs in every SESSION_SETUP, and
// fails the session with STATUS_INTERNAL_ERROR while winbindd has not
// started: samba starts both at once) and a ticket is issued. smb.conf:
// signing offered, not required ("server signing = auto", so smb-plain can
// be measured; a DC requires it by default); encryption offered to clients that negotiate a cipher
// ("server smb encrypt = desired"); SMB 2.1 (HMAC-SHA256 signing) to 3.1.1; multichannel on; only
// the services the measurement needs; the log level asked for (SambaDcOptions), the logs in the
// directory, never rotated.
//
// Nothing is left behind: Stop() and the destructor end samba (SIGTERM: its
// children go with it; SIGKILL after a grace), then the lab deletes the
// namespaces and the directory; the lab's reaper does all of it if the owner
// dies any other way.
//
// Root is needed (namespaces; samba). Available() says why it cannot run
// here (not root, a program missing): callers skip with that reason. Thread
// safety: Start/Stop from one thread; accessors const; Connect from any
// thread.
#ifndef SECMODE_SMB_SAMBA_DC_H_
#define SECMODE_SMB_SAMBA_DC_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/machine.h"
#include "common/socket.h"
#include "common/status.h"
#include "lab/net_lab.h"
#include "smb/load.h"

namespace secmode::smb {

struct SambaDcOptions {
  int start_timeout_ms = 60000;
  // smb.conf's "log level" (0 to 10): 1 by default; 10 traces every
  // request (slow, large logs: for an investigation).
  int log_level = 1;
};

class SambaDc {
 public:
  static constexpr const char* kRealm = "SMB.SECMODE.TEST";
  static constexpr const char* kDomain = "SECMODE";
  static constexpr const char* kHost = "dc1";
  static constexpr const char* kDnsName = "dc1.smb.secmode.test";
  static constexpr const char* kShare = "share";
  static constexpr const char* kUser = "bench";
  static constexpr uint16_t kSmbPort = 445;

  // Ok, or Unavailable naming why a Samba DC cannot be started here.
  static common::Status Available();
  static common::Result<std::unique_ptr<SambaDc>> Start(const SambaDcOptions& options = {});
  ~SambaDc();
  SambaDc(const SambaDc&) = delete;
  SambaDc& operator=(const SambaDc&) = delete;

  // Ends samba, deletes the lab (namespaces, directory); idempotent.
  common::Status Stop();

  // A TCP connection to the DC's SMB port from the client namespace.
  common::Result<common::Fd> Connect(common::Deadline deadline = {}) const;

  // A client of kUser in `mode` for this DC's share (ccache, principal,
  // share), the timeout left at its default; and a connector that opens
  // each connection from the client namespace (5 s to connect). The DC
  // must outlive both.
  SmbClientConfig ClientConfig(const SmbMode& mode) const;
  SmbConnector Connector() const;

  // The server's Kerberos service principal, "cifs/dc1.smb.secmode.test@SMB.SECMODE.TEST".
  std::string service_principal() const;
  // kUser's ccache ("FILE:<dir>/ccache"): its TGT and a ticket for
  // service_principal(), so no KDC is needed to set up a session.
  std::string ccache() const { return "FILE:" + dir_ + "/ccache"; }
  std::string user_principal() const;
  // kUser's keys (from the DC's database), for kinit; the directory is
  // 0700, the keytab root's.
  std::string keys_dir() const { return dir_ + "/keys"; }
  std::string user_keytab() const { return keys_dir() + "/user.keytab"; }
  // Every command the set-up ran or started, in order (for tests: none holds
  // a password).
  const std::vector<std::vector<std::string>>& commands() const { return commands_; }
  // "\\dc1.smb.secmode.test\share", as TREE_CONNECT names it.
  std::string share_unc() const;
  std::string share_dir() const { return dir_ + "/share"; }
  std::string dir() const { return dir_; }
  std::string log_path() const { return dir_ + "/samba.log"; }
  // The log of the smbd processes serving the lab's client ("log file =
  // <dir>/log.%m": smbd names it after the client's address).
  std::string client_log_path() const { return dir_ + "/log." + lab::kClientAddress; }
  // CPU time so far of every thread of samba and its children (smbd,
  // winbindd, the KDC and LDAP workers: samba's descendants).
  std::vector<common::TaskCpu> ThreadCpu() const { return common::ReadProcessTreeTaskCpu(pid_); }
  // Has a load against this DC read its threads (SmbLoadOptions'
  // server_threads): each session's smbd process serves it on its main
  // thread. The DC must outlive the load.
  void WatchThreads(SmbLoadOptions* o) const {
    o->server_threads = [this] { return ThreadCpu(); };
    o->server_session_thread = "smbd";
  }
  std::string krb5_conf() const { return dir_ + "/krb5.conf"; }
  pid_t pid() const { return pid_; }
  // "4.17.12-Debian", from `samba --version`.
  const std::string& version() const { return version_; }
  lab::NetLab& lab() const { return *lab_; }
  // For errors: the address, the pid, whether samba still runs, the end of
  // its log.
  std::string Describe() const;

 private:
  SambaDc() = default;
  common::Status Provision(int log_level);
  // Runs a set-up command to its end (recorded in commands_), its output in
  // `log` in the directory.
  common::Status Run(const std::vector<std::string>& argv, const std::string& log,
                     int timeout_ms = 120000);
  common::Status WaitUntilServing(int timeout_ms);
  common::Status GetTickets(int timeout_ms);

  std::unique_ptr<lab::NetLab> lab_;
  std::string dir_;
  pid_t pid_ = -1;
  std::string version_;
  std::vector<std::vector<std::string>> commands_;
};

}  // namespace secmode::smb

#endif  // SECMODE_SMB_SAMBA_DC_H_
