// Realm: a throwaway MIT Kerberos realm (a real krb5kdc) for tests and
// benchmarks.
//
// Start() makes a private 0700 temp directory with krb5.conf and kdc.conf
// (no DNS, a free loopback port, file logging), creates the database, a user
// principal and the nfs/localhost service principal with keys for every AES
// enctype, writes their keytabs, starts `krb5kdc -n`, waits until it answers
// and gets the user's TGT into a private ccache. It never reads or writes the
// machine's /etc/krb5.conf or default ccache, and needs no root.
//
// The KDC listens on 127.0.0.1 (TCP and UDP) on a port that was free; if
// krb5kdc cannot bind it (another process took it between the choice and the
// bind, or RealmOptions::kdc_port is taken), Start picks another free port
// and starts it again (up to kPortAttempts ports). krb5kdc leads a process
// group of its own, so a terminal's Ctrl-C reaches the owner, which stops it.
//
// When the KDC fails while the realm is in use (killed, stopped), whatever
// asks it fails: a refused connection at once; an unanswered one when MIT's
// library gives up (its own fixed retry schedule: MIT 1.20 has no krb5.conf
// setting for it). ExplainKdcFailure() prefixes such an error with the KDC's
// address and what became of its process.
//
// Nothing is left behind: the destructor (and Stop) kills the KDC and removes
// the directory. A reaper process started first does the same if this
// process dies any other way (exception, SIGINT, SIGTERM, even SIGKILL): it
// waits for EOF on a pipe only this process holds.
//
// The MIT library reads its configuration from KRB5_CONFIG, which is
// process-wide, so only one Realm may be alive per process; Start() sets
// KRB5_CONFIG and KRB5RCACHEDIR (a private replay-cache directory), unsets
// KRB5RCACHENAME and KRB5RCACHETYPE (which would choose another replay cache,
// or none), and Stop() restores all four.
// Thread safety: Start/Stop from one thread; the accessors are const and safe.
#ifndef SECMODE_GSS_REALM_H_
#define SECMODE_GSS_REALM_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/throwaway.h"

namespace secmode::gss {

struct RealmOptions {
  std::string name = "SECMODE.TEST";
  int start_timeout_ms = 20000;
  // The loopback port to try first; 0 picks a free one. A port krb5kdc
  // cannot bind is replaced by a free one, as in the race above.
  int kdc_port = 0;
};

// How many ports Start tries before it gives up on a KDC that cannot bind.
inline constexpr int kPortAttempts = 4;

class Realm {
 public:
  static common::Result<std::unique_ptr<Realm>> Start(const RealmOptions& options = {});
  ~Realm();
  Realm(const Realm&) = delete;
  Realm& operator=(const Realm&) = delete;

  // Kills the KDC and removes the directory; idempotent.
  common::Status Stop();

  const std::string& name() const { return name_; }
  const std::string& dir() const { return dir_; }
  int kdc_port() const { return port_; }
  pid_t kdc_pid() const { return kdc_pid_; }
  pid_t reaper_pid() const { return reaper_.pid(); }
  std::string user_principal() const { return "user@" + name_; }
  std::string service_principal() const { return "nfs/localhost@" + name_; }
  // As gss_import_name(GSS_C_NT_HOSTBASED_SERVICE) wants it.
  std::string service_hostbased() const { return "nfs@localhost"; }
  std::string krb5_conf() const { return dir_ + "/krb5.conf"; }
  std::string ccache() const { return "FILE:" + dir_ + "/user.ccache"; }
  std::string user_keytab() const { return dir_ + "/user.keytab"; }
  std::string service_keytab() const { return dir_ + "/nfs.keytab"; }
  std::string kdc_log() const { return dir_ + "/kdc.log"; }

  // Adds principal `name`@realm with a password and no keytab, for tests of
  // a user's own `kinit` (the realm's `user` has a keytab, with which MIT
  // may fetch tickets on its own). Its tickets live at most the KDC's
  // max_life.
  common::Status AddPasswordPrincipal(const std::string& name, const std::string& password);

  // What the realm knows of its KDC, for error messages: its address, pid
  // and whether its process runs, was stopped, or exited (how), e.g. "the
  // realm's KDC (krb5kdc pid 123, 127.0.0.1:40123) was killed by signal 9
  // (Killed)". The process is inspected without being reaped.
  std::string DescribeKdc() const;
  // Ok while the KDC process runs (not stopped) and accepts TCP connections;
  // otherwise Unavailable with DescribeKdc().
  common::Status CheckKdc() const;
  // `failure` (of something that asked the KDC: a context establishment, a
  // kinit) prefixed with DescribeKdc() when CheckKdc() fails; unchanged when
  // the KDC is well (the failure had another cause).
  common::Status ExplainKdcFailure(const common::Status& failure) const;
  // Gets the user's TGT again from the KDC (kinit with the user keytab)
  // into ccache(); an error names the KDC when it is the cause.
  common::Status Kinit();
  // The ports Start tried before the one the KDC listens on (they could not
  // be bound), in order; empty when the first one worked.
  const std::vector<int>& refused_ports() const { return refused_ports_; }

  // Environment for child programs (kinit, gssrpc peers) that should use this
  // realm: KRB5_CONFIG, KRB5_KDC_PROFILE, KRB5CCNAME, KRB5_KTNAME ...
  std::map<std::string, std::string> Environment() const;

 private:
  Realm() = default;
  common::Status Create(const RealmOptions& options);
  common::Status StartReaper();
  common::Status WriteConfig();
  common::Status RunTool(const std::vector<std::string>& argv, const std::string& log);
  common::Status StartKdc(int timeout_ms);
  // Whether the KDC runs and accepts connections; `description` says what
  // DescribeKdc() says.
  bool KdcWell(std::string* description) const;

  std::string name_;
  std::string dir_;
  int port_ = 0;
  std::vector<int> refused_ports_;
  pid_t kdc_pid_ = -1;
  common::Reaper reaper_;
  bool stopped_ = false;
  std::map<std::string, std::string> saved_env_;
};

}  // namespace secmode::gss

#endif  // SECMODE_GSS_REALM_H_
