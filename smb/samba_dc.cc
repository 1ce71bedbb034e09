#include "smb/samba_dc.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "common/clock.h"
#include "common/files.h"
#include "common/subprocess.h"

namespace secmode::smb {

using common::Result;
using common::Status;

namespace {

// What secmode sets in [global] after the provisioned lines (see the header).
std::string OurGlobals(const std::string& dir, int log_level) {
  return "\tserver services = s3fs, rpc, ldap, cldap, kdc, winbindd\n"
         "\tserver signing = auto\n"
         "\tserver smb encrypt = desired\n"
         "\tserver min protocol = SMB2_10\n"
         "\tserver multi channel support = yes\n"
         "\tlog file = " +
         dir +
         "/log.%m\n"
         "\tlog level = " +
         std::to_string(log_level) +
         "\n"
         // Never rotated: a trace at a raised level keeps what led to a
         // failure (rotated, its older half is overwritten at the next turn).
         "\tmax log size = 0\n"
         // No LDAPS: nothing here uses it, and the DC would otherwise
         // generate its TLS keys once it has started, its LDAP thread
         // busy on a core beside the first measurements (seen as Samba's
         // busiest thread in them).
         "\ttls enabled = no\n";
}

// Whether a process listens on the Unix socket `path` (a connection is
// accepted into its backlog).
bool AcceptsConnections(const std::string& path) {
  sockaddr_un a{};
  if (path.size() >= sizeof a.sun_path) return false;
  a.sun_family = AF_UNIX;
  memcpy(a.sun_path, path.c_str(), path.size() + 1);
  const common::Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  return fd.get() >= 0 && connect(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
}

}  // namespace

Status SambaDc::Available() {
  // The lab's reason names root (namespaces) and iproute2.
  const std::string lab = lab::LabUnavailableReason();
  if (!lab.empty()) return Status::Unavailable(lab);
  for (const char* p : {"samba", "samba-tool", "kinit", "kvno", "unshare", "mount"}) {
    if (common::FindProgram(p).empty()) {
      return Status::Unavailable(std::string("`") + p +
                                 "` is not installed (Debian: samba samba-ad-dc "
                                 "samba-ad-provision krb5-user util-linux mount)");
    }
  }
  return Status::Ok();
}

std::string SambaDc::service_principal() const {
  return std::string("cifs/") + kDnsName + "@" + kRealm;
}
std::string SambaDc::user_principal() const { return std::string(kUser) + "@" + kRealm; }
SmbClientConfig SambaDc::ClientConfig(const SmbMode& mode) const {
  SmbClientConfig config;
  config.mode = mode;
  config.ccache = ccache();
  config.service_principal = service_principal();
  config.unc = share_unc();
  return config;
}

SmbConnector SambaDc::Connector() const {
  return [this] { return Connect(common::Deadline::AfterMs(5000)); };
}

std::string SambaDc::share_unc() const { return std::string("\\\\") + kDnsName + "\\" + kShare; }

Status SambaDc::Run(const std::vector<std::string>& argv, const std::string& log, int timeout_ms) {
  commands_.push_back(argv);
  common::Command c;
  c.argv = argv;
  c.log_path = dir_ + "/" + log;
  c.env = {{"KRB5_CONFIG", krb5_conf()}, {"KRB5CCNAME", ccache()}};
  SECMODE_ASSIGN_OR_RETURN(int rc, common::RunAndWait(c, timeout_ms));
  if (rc != 0) {
    std::string m = "`";
    m += c.ToString();
    m += "` failed (exit status " + std::to_string(rc) + "): ";
    m += common::TailOfFile(c.log_path, 8);
    return Status::Unavailable(m);
  }
  return Status::Ok();
}

Result<std::unique_ptr<SambaDc>> SambaDc::Start(const SambaDcOptions& options) {
  SECMODE_RETURN_IF_ERROR(Available());
  std::unique_ptr<SambaDc> dc(new SambaDc());
  SECMODE_ASSIGN_OR_RETURN(dc->lab_, lab::NetLab::Create());
  dc->dir_ = dc->lab_->dir() + "/samba";
  // The share's files belong to the domain user's uid (winbind's idmap),
  // which must pass through the directories above the share: they may be
  // traversed, not listed.
  if (chmod(dc->lab_->dir().c_str(), 0711) != 0 || mkdir(dc->dir_.c_str(), 0711) != 0 ||
      chmod(dc->dir_.c_str(), 0711) != 0) {
    return Status::Unavailable("making " + dc->dir_ + ": " + common::ErrnoText(errno));
  }
  const uint64_t t0 = common::NowNs();
  const auto left_ms = [&] {
    const int64_t spent = static_cast<int64_t>((common::NowNs() - t0) / 1000000);
    return static_cast<int>(std::max<int64_t>(1, options.start_timeout_ms - spent));
  };
  SECMODE_RETURN_IF_ERROR(dc->Provision(options.log_level).Annotate("provisioning the Samba DC"));

  // Samba's processes find each other by sockets in /run/samba, a path
  // built into them (smbd looks for winbindd's there whatever smb.conf
  // says), and keep their pid files there: with two DCs on the machine, one
  // DC's smbd asked the other's winbindd to map its users' SIDs and
  // SESSION_SETUP failed with STATUS_INTERNAL_ERROR (and a second DC once
  // refused to start: "samba is already running"). So samba runs in a mount
  // namespace of its own where /run/samba is a directory of this DC's.
  const std::string run = dc->dir_ + "/run";
  if (mkdir(run.c_str(), 0755) != 0) {
    return Status::Unavailable("making " + run + ": " + common::ErrnoText(errno));
  }
  common::Command c;
  c.argv = dc->lab_->InServer(
      {"unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
       "mkdir -p /run/samba && mount --bind \"$1\" /run/samba && exec samba -i -s \"$2\"", "sh",
       run, dc->dir_ + "/etc/smb.conf"});
  c.log_path = dc->log_path();
  c.own_process_group = true;
  dc->commands_.push_back(c.argv);
  SECMODE_ASSIGN_OR_RETURN(dc->pid_, common::Spawn(c));
  SECMODE_RETURN_IF_ERROR(dc->lab_->Track(dc->pid_));
  SECMODE_RETURN_IF_ERROR(dc->WaitUntilServing(left_ms()));
  SECMODE_RETURN_IF_ERROR(dc->GetTickets(left_ms()));

  common::Command v;
  v.argv = {"samba", "--version"};
  v.log_path = dc->dir_ + "/version.log";
  if (common::RunAndWait(v, 10000).ok()) {
    std::string out = common::TailOfFile(v.log_path, 1);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    const std::string prefix = "Version ";
    dc->version_ = out.rfind(prefix, 0) == 0 ? out.substr(prefix.size()) : out;
  }
  return dc;
}

Status SambaDc::Provision(int log_level) {
  // No password on a command line (any local user reads /proc/PID/cmdline)
  // and none in a file: provision makes the Administrator's own (a random
  // one, shown only in provision.log, which is 0600 like every log here),
  // the user gets a random one nobody sees (--random-password), and the
  // client authenticates with the user's keys, exported into a keytab in a
  // 0700 directory.
  SECMODE_RETURN_IF_ERROR(Run(
      lab_->InServer({"samba-tool", "domain", "provision", std::string("--realm=") + kRealm,
                      std::string("--domain=") + kDomain, "--server-role=dc", "--dns-backend=NONE",
                      "--targetdir=" + dir_, std::string("--host-name=") + kHost,
                      std::string("--host-ip=") + lab::kServerAddress,
                      std::string("--option=interfaces=") + lab::kServerAddress + "/32",
                      "--option=bind interfaces only=yes"}),
      "provision.log"));

  const std::string conf_path = dir_ + "/etc/smb.conf";
  SECMODE_ASSIGN_OR_RETURN(std::string conf, common::ReadFile(conf_path));
  // The provisioned [global] first, then ours: in one section a later
  // line wins.
  const size_t end_of_global = conf.find("\n[", conf.find("[global]"));
  const std::string globals = OurGlobals(dir_, log_level);
  if (end_of_global == std::string::npos) {
    conf += globals;
  } else {
    conf.insert(end_of_global + 1, globals);
  }
  const std::string share = share_dir();
  if (mkdir(share.c_str(), 0777) != 0 || chmod(share.c_str(), 0777) != 0) {
    return Status::Unavailable("mkdir " + share + ": " + common::ErrnoText(errno));
  }
  conf += "\n[" + std::string(kShare) + "]\n\tpath = " + share + "\n\tread only = no\n";
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(conf_path, conf));

  // An MIT client configuration for the client namespace: this realm only,
  // its KDC on the server's address, no DNS.
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(
      krb5_conf(), std::string("[libdefaults]\n  default_realm = ") + kRealm +
                       "\n  dns_lookup_kdc = false\n  dns_lookup_realm = false\n"
                       "  dns_canonicalize_hostname = false\n  rdns = false\n"
                       "[realms]\n  " +
                       kRealm + " = {\n    kdc = " + lab::kServerAddress +
                       ":88\n  }\n[domain_realm]\n  " + kDnsName + " = " + kRealm + "\n"));
  // The user is made in the database before the server starts, and its
  // keys are exported from it (no server needed).
  SECMODE_RETURN_IF_ERROR(Run(
      lab_->InServer({"samba-tool", "user", "create", kUser, "--random-password", "-s", conf_path}),
      "user.log"));
  const std::string keys = keys_dir();
  if (mkdir(keys.c_str(), 0700) != 0 || chmod(keys.c_str(), 0700) != 0) {
    return Status::Unavailable("making " + keys + ": " + common::ErrnoText(errno));
  }
  return Run(lab_->InServer({"samba-tool", "domain", "exportkeytab", user_keytab(),
                             "--principal=" + user_principal(), "-s", conf_path}),
             "exportkeytab.log");
}

Status SambaDc::WaitUntilServing(int timeout_ms) {
  // Serving: the KDC and SMB ports accept connections, and so does
  // winbindd's socket. smbd asks winbindd to map the user's SIDs to ids in
  // every SESSION_SETUP, a channel's binding included
  // (source4/auth/unix_token.c security_token_to_unix_token ->
  // source4/libcli/wbclient/wbclient.c wbc_sids_to_xids, which answers
  // NT_STATUS_INTERNAL_ERROR for any failure of libwbclient, winbindd not
  // listening yet included); samba starts winbindd beside smbd, and
  // winbindd listens only at the end of its start-up
  // (source3/winbindd/winbindd.c main: winbindd_setup_listeners), which on a
  // loaded machine came a second after port 445 accepted connections.
  const std::string winbindd = dir_ + "/run/winbindd/pipe";
  const common::Deadline until = common::Deadline::AfterMs(timeout_ms);
  for (;;) {
    const std::string how = common::HowChildEnded(pid_);
    if (!how.empty()) return Status::Unavailable("samba " + how + ": " + Describe());
    bool all = AcceptsConnections(winbindd);
    for (uint16_t port : {uint16_t{88}, kSmbPort}) {
      if (!all) break;
      all = lab_->ConnectFromClient(lab::kServerAddress, port, common::Deadline::AfterMs(500)).ok();
    }
    if (all) return Status::Ok();
    if (until.Passed()) {
      return Status::Unavailable("samba did not accept connections on ports 88 and 445 and " +
                                 winbindd + " within " + std::to_string(timeout_ms) +
                                 " ms: " + Describe());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Status SambaDc::GetTickets(int timeout_ms) {
  // The KDC may accept connections a moment before it answers: kinit is
  // tried again until the deadline.
  const common::Deadline until = common::Deadline::AfterMs(timeout_ms);
  Status got = Status::Ok();
  do {
    got = Run(lab_->InClient({"kinit", "-k", "-t", user_keytab(), user_principal()}), "kinit.log",
              10000);
    if (got.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (!until.Passed());
  SECMODE_RETURN_IF_ERROR(got.Annotate("a ticket for " + user_principal()));
  return Run(lab_->InClient({"kvno", service_principal()}), "kvno.log", 10000)
      .Annotate("a service ticket for " + service_principal());
}

Result<common::Fd> SambaDc::Connect(common::Deadline deadline) const {
  if (!lab_) return Status::Internal("the Samba DC was stopped");
  return lab_->ConnectFromClient(lab::kServerAddress, kSmbPort, deadline);
}

SambaDc::~SambaDc() { (void)Stop(); }

Status SambaDc::Stop() {
  if (pid_ > 0) {
    // SIGTERM to samba ends its children (smbd, winbindd, the KDC and LDAP
    // workers notice their parent is gone).
    common::Terminate(pid_, 5000);
    if (lab_) (void)lab_->Forget(pid_);
    pid_ = -1;
  }
  if (!lab_) return Status::Ok();
  Status destroyed = lab_->Destroy();
  lab_.reset();
  return destroyed;
}

std::string SambaDc::Describe() const {
  std::string state = "not started";
  if (pid_ > 0) {
    const std::string how = common::HowChildEnded(pid_);
    state = how.empty() ? "running" : how;
  }
  return "Samba AD DC (samba pid " + std::to_string(pid_) + ", " + lab::kServerAddress +
         " in the lab's server namespace, " + state + "); end of " + log_path() + ":\n" +
         common::TailOfFile(log_path(), 20) + "\nend of " + client_log_path() + ":\n" +
         common::TailOfFile(client_log_path(), 20);
}

}  // namespace secmode::smb
