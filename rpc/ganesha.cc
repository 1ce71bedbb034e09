#include "rpc/ganesha.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "common/clock.h"
#include "common/files.h"
#include "common/socket.h"
#include "common/subprocess.h"

namespace secmode::rpc {

using common::Connect;
using common::Deadline;
using common::Result;
using common::Status;

namespace {

constexpr const char* kReady = "NFS SERVER INITIALIZED";

std::string Config(const std::string& dir, uint16_t port, const std::string& keytab, uid_t anon_uid,
                   gid_t anon_gid) {
  const std::string sec = keytab.empty() ? "sys" : "sys, krb5, krb5i, krb5p";
  std::string c =
      "NFS_CORE_PARAM {\n"
      "  Protocols = 4;\n"
      "  NFS_Port = " +
      std::to_string(port) +
      ";\n"
      "  Bind_addr = 127.0.0.1;\n"
      "  Enable_UDP = false;\n"
      "  Enable_NLM = false;\n"
      "  Enable_RQUOTA = false;\n"
      "}\n"
      "NFSV4 {\n"
      "  Graceless = true;\n"
      "  RecoveryRoot = " +
      dir +
      "/recovery;\n"
      "  IdmapConf = " +
      dir +
      "/idmapd.conf;\n"
      "}\n";
  if (!keytab.empty()) {
    c += "NFS_KRB5 {\n  PrincipalName = nfs;\n  KeytabPath = " + keytab +
         ";\n  CCacheDir = " + dir + "/ccache;\n  Active_krb5 = true;\n}\n";
  }
  c += "EXPORT {\n"
       "  Export_Id = 1;\n"
       "  Path = " +
       dir +
       "/export;\n"
       "  Pseudo = " +
       std::string(Ganesha::kPseudoPath) +
       ";\n"
       "  Access_Type = RW;\n"
       "  Squash = All_Squash;\n"
       "  Anonymous_Uid = " +
       std::to_string(anon_uid) + ";\n  Anonymous_Gid = " + std::to_string(anon_gid) +
       ";\n"
       "  SecType = " +
       sec +
       ";\n"
       "  Protocols = 4;\n"
       "  Transports = TCP;\n"
       "  FSAL { Name = VFS; }\n"
       "}\n"
       "LOG { Default_Log_Level = EVENT; }\n";
  return c;
}

// libnfsidmap's configuration, private to this server: the Kerberos
// principals it is told about map to `nobody` (static method), so a
// principal without a local account is a known, unprivileged user instead
// of one Ganesha refuses (NFS4ERR_ACCESS); the export then squashes it to
// the anonymous user like every other caller.
std::string IdmapConfig(const std::vector<std::string>& principals) {
  std::string c =
      "[General]\n"
      "Domain = secmode.test\n"
      "[Translation]\n"
      "Method = static,nsswitch\n"
      "[Static]\n";
  for (const std::string& p : principals) c += p + " = " + Ganesha::kAnonymousUser + "\n";
  return c;
}

bool Contains(const std::string& path, const char* what) {
  auto text = common::ReadFile(path);
  return text.ok() && text->find(what) != std::string::npos;
}

}  // namespace

Status Ganesha::Available() {
  if (geteuid() != 0) {
    return Status::Unavailable("nfs-ganesha needs root here (ganesha.nfsd sets capabilities)");
  }
  if (common::FindProgram("ganesha.nfsd").empty()) {
    return Status::Unavailable(
        "ganesha.nfsd is not installed (Debian packages nfs-ganesha and nfs-ganesha-vfs; "
        "make run / make test install them)");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Ganesha>> Ganesha::Start(const GaneshaOptions& options) {
  SECMODE_RETURN_IF_ERROR(Available());
  std::unique_ptr<Ganesha> g(new Ganesha());
  const passwd* nobody = getpwnam(kAnonymousUser);
  if (nobody == nullptr) {
    return Status::Unavailable(
        std::string("nfs-ganesha's export squashes every caller to the user ") + kAnonymousUser +
        ", which this machine does not have");
  }
  g->anonymous_uid_ = nobody->pw_uid;
  g->anonymous_gid_ = nobody->pw_gid;
  SECMODE_ASSIGN_OR_RETURN(g->dir_, common::MakeTempDirectory("secmode-ganesha-"));
  SECMODE_ASSIGN_OR_RETURN(g->reaper_,
                           common::Reaper::Start(g->dir_, "server.pid", "secmode-ganesha-reaper"));
  // The export may be read, not written, by the anonymous user every
  // caller is squashed to (its parent, the private directory, is not open
  // at all): Ganesha caches its attributes from the start, so they are
  // right before it starts.
  for (const char* sub : {"/export", "/recovery", "/ccache"}) {
    const mode_t mode = std::string(sub) == "/export" ? 0755 : 0700;
    if (mkdir((g->dir_ + sub).c_str(), mode) != 0 || chmod((g->dir_ + sub).c_str(), mode) != 0) {
      return Status::IoError("mkdir " + g->dir_ + sub + ": " + std::strerror(errno));
    }
  }
  SECMODE_RETURN_IF_ERROR(g->Launch(options));
  return g;
}

Status Ganesha::Launch(const GaneshaOptions& options) {
  for (int attempt = 0;; ++attempt) {
    port_ = static_cast<uint16_t>(common::FreeLoopbackPort(/*udp=*/false));
    if (port_ == 0) return Status::Unavailable("no free loopback port for nfs-ganesha");
    const std::string conf = dir_ + "/ganesha.conf";
    SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(
        conf, Config(dir_, port_, options.keytab, anonymous_uid_, anonymous_gid_)));
    SECMODE_RETURN_IF_ERROR(
        common::WriteFileAtomically(dir_ + "/idmapd.conf", IdmapConfig(options.principals)));
    common::Command cmd;
    cmd.argv = {"ganesha.nfsd", "-F", "-f", conf, "-L", log_path(), "-p", dir_ + "/ganesha.pid"};
    cmd.env = options.env;
    if (!options.keytab.empty()) cmd.env["KRB5_KTNAME"] = "FILE:" + options.keytab;
    cmd.log_path = dir_ + "/ganesha.out";
    cmd.own_process_group = true;
    SECMODE_ASSIGN_OR_RETURN(pid_, common::Spawn(cmd));
    SECMODE_RETURN_IF_ERROR(
        common::WriteFileAtomically(dir_ + "/server.pid", std::to_string(pid_) + "\n"));
    const uint64_t deadline =
        common::NowNs() + static_cast<uint64_t>(options.start_timeout_ms) * 1000000ull;
    bool lost_port = false;
    while (true) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        const std::string said = common::TailOfFile(log_path(), 40);
        lost_port = said.find("in use") != std::string::npos;
        if (!lost_port || attempt + 1 >= kPortAttempts) {
          return Status::Unavailable("ganesha.nfsd exited during start-up (status " +
                                     std::to_string(status) + ")\ncommand: " + cmd.ToString() +
                                     "\nlog " + log_path() + ":\n" + said);
        }
        break;
      }
      if (Contains(log_path(), kReady)) {
        auto fd = Connect("127.0.0.1", port_, Deadline::AfterMs(200));
        if (fd.ok()) {
          auto log = common::ReadFile(log_path());
          const std::string key = "Ganesha Version ";
          const size_t at = log.ok() ? log->find(key) : std::string::npos;
          if (at != std::string::npos) {
            const size_t from = at + key.size();
            version_ = log->substr(from, log->find_first_of(" \n", from) - from);
          }
          return Status::Ok();
        }
      }
      if (common::NowNs() > deadline) {
        return Status::Unavailable(
            "nfs-ganesha did not serve on 127.0.0.1:" + std::to_string(port_) + " within " +
            std::to_string(options.start_timeout_ms) + " ms\n" + Describe());
      }
      usleep(10000);
    }
    // The port was taken between choosing it and the bind: its log moves
    // aside, and the next attempt has its own.
    rename(log_path().c_str(), (dir_ + "/port-" + std::to_string(port_) + "-ganesha.log").c_str());
  }
}

Ganesha::~Ganesha() { Stop(); }

Status Ganesha::Stop() {
  if (stopped_) return Status::Ok();
  stopped_ = true;
  if (pid_ > 0) {
    common::Terminate(pid_, 5000);  // SIGTERM: it unexports and exits
    pid_ = -1;
  }
  Status removed = dir_.empty() ? Status::Ok() : common::RemoveTree(dir_);
  reaper_.Release();
  return removed;
}

std::string Ganesha::Describe() const {
  std::string state = "not started";
  if (pid_ > 0) {
    const std::string how = common::HowChildEnded(pid_);
    state = how.empty() ? "running" : how;
  }

  return "nfs-ganesha (ganesha.nfsd pid " + std::to_string(pid_) +
         ", 127.0.0.1:" + std::to_string(port_) + ", " + state + "); end of " + log_path() + ":\n" +
         common::TailOfFile(log_path(), 20);
}

}  // namespace secmode::rpc
