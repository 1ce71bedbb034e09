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
// Nothing is left behind: the destructor (and Stop) kills the KDC and removes
// the directory. A reaper process started first does the same if this
// process dies any other way (exception, SIGINT, SIGTERM, even SIGKILL): it
// waits for EOF on a pipe only this process holds.
//
// The MIT library reads its configuration from KRB5_CONFIG, which is
// process-wide, so only one Realm may be alive per process; Start() sets
// KRB5_CONFIG (and a private replay-cache directory) and Stop() restores them.
// Thread safety: Start/Stop from one thread; the accessors are const and safe.
#ifndef SECMODE_GSS_REALM_H_
#define SECMODE_GSS_REALM_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace secmode::gss {

struct RealmOptions {
  std::string name = "SECMODE.TEST";
  int start_timeout_ms = 20000;
};

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
  pid_t reaper_pid() const { return reaper_pid_; }
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

  std::string name_;
  std::string dir_;
  int port_ = 0;
  pid_t kdc_pid_ = -1;
  pid_t reaper_pid_ = -1;
  int reaper_fd_ = -1;
  bool stopped_ = false;
  std::map<std::string, std::string> saved_env_;
};

}  // namespace secmode::gss

#endif  // SECMODE_GSS_REALM_H_
