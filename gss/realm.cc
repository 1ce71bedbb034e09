#include "gss/realm.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "common/clock.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "common/throwaway.h"
#include "gss/enctype.h"

namespace secmode::gss {

using common::Status;

namespace {

std::atomic<bool> g_realm_alive{false};

// The state letter of /proc/PID/stat (R, S, T, Z ...); '?' if unreadable.
char ProcessState(pid_t pid) {
  auto stat = common::ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.ok()) return '?';
  const size_t paren = stat->rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat->size()) return '?';
  return (*stat)[paren + 2];
}

// Lines of the file at `path` that contain `part` (0 when it cannot be read).
size_t CountInFile(const std::string& path, const std::string& part) {
  std::ifstream in(path);
  size_t count = 0;
  std::string line;
  while (std::getline(in, line)) count += line.find(part) != std::string::npos;
  return count;
}

bool TcpAnswers(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

}  // namespace

common::Result<std::unique_ptr<Realm>> Realm::Start(const RealmOptions& options) {
  bool expected = false;
  if (!g_realm_alive.compare_exchange_strong(expected, true)) {
    return Status::InvalidArgument(
        "a Realm is already running in this process (KRB5_CONFIG is process-wide)");
  }
  std::unique_ptr<Realm> realm(new Realm());
  Status s = realm->Create(options);
  if (!s.ok()) {
    realm->Stop();
    return s;
  }
  return realm;
}

Realm::~Realm() { Stop(); }

Status Realm::Create(const RealmOptions& options) {
  name_ = options.name;
  SECMODE_ASSIGN_OR_RETURN(dir_, common::MakeTempDirectory("secmode-realm-"));
  SECMODE_RETURN_IF_ERROR(StartReaper());
  for (int attempt = 0;; ++attempt) {
    port_ = attempt == 0 && options.kdc_port > 0 ? options.kdc_port
                                                 : common::FreeLoopbackPort(/*udp=*/true);
    if (port_ == 0) return Status::Unavailable("no free loopback port for the KDC");
    SECMODE_RETURN_IF_ERROR(WriteConfig());
    if (attempt == 0) {
      SECMODE_RETURN_IF_ERROR(
          RunTool({"kdb5_util", "-r", name_, "create", "-s", "-P", "secmode-master-key"},
                  dir_ + "/kdb5_util.log"));
      const std::string log = dir_ + "/kadmin.log";
      for (const char* princ : {"user", "nfs/localhost"}) {
        SECMODE_RETURN_IF_ERROR(RunTool(
            {"kadmin.local", "-r", name_, "-q", std::string("addprinc -randkey ") + princ}, log));
      }
      SECMODE_RETURN_IF_ERROR(RunTool(
          {"kadmin.local", "-r", name_, "-q", "ktadd -k " + user_keytab() + " -norandkey user"},
          log));
      SECMODE_RETURN_IF_ERROR(
          RunTool({"kadmin.local", "-r", name_, "-q",
                   "ktadd -k " + service_keytab() + " -norandkey nfs/localhost"},
                  log));
    }
    Status started = StartKdc(options.start_timeout_ms);
    if (started.ok()) break;
    // The port was taken (by another process between choosing it and the
    // bind, or it was RealmOptions::kdc_port): krb5kdc logs EADDRINUSE and
    // exits. Its logs move aside, so the next attempt's are its own.
    const std::string said =
        common::TailOfFile(kdc_log(), 40) + common::TailOfFile(dir_ + "/krb5kdc.out", 40);
    const bool lost_port = said.find("in use") != std::string::npos;
    if (!lost_port || attempt + 1 >= kPortAttempts) {
      if (lost_port) {
        return started.Annotate("the KDC could not bind any of " + std::to_string(kPortAttempts) +
                                " loopback ports");
      }
      return started;
    }
    refused_ports_.push_back(port_);
    const std::string aside = dir_ + "/port-" + std::to_string(port_) + "-";
    rename(kdc_log().c_str(), (aside + "kdc.log").c_str());
    rename((dir_ + "/krb5kdc.out").c_str(), (aside + "krb5kdc.out").c_str());
  }
  SECMODE_RETURN_IF_ERROR(Kinit());
  // The in-process GSS library must see this realm only.
  for (const char* var : {"KRB5_CONFIG", "KRB5RCACHEDIR", "KRB5RCACHENAME", "KRB5RCACHETYPE"}) {
    const char* old = getenv(var);
    saved_env_[var] = old ? std::string(old) : std::string("\x01unset");
  }
  setenv("KRB5_CONFIG", krb5_conf().c_str(), 1);
  setenv("KRB5RCACHEDIR", dir_.c_str(), 1);
  // An acceptor keeps MIT's replay cache (a replayed AP-REQ, e.g. a captured
  // RPCSEC_GSS INIT, is refused), in this directory: MIT reads
  // KRB5RCACHENAME (which could name another place, or none:) before
  // KRB5RCACHETYPE and KRB5RCACHEDIR.
  unsetenv("KRB5RCACHENAME");
  unsetenv("KRB5RCACHETYPE");
  return Status::Ok();
}

// The reaper (common/throwaway.h) kills the KDC named in kdc.pid and
// removes the directory if this process dies without Stop().
Status Realm::StartReaper() {
  SECMODE_ASSIGN_OR_RETURN(reaper_, common::Reaper::Start(dir_, "kdc.pid", "secmode-realm-reaper"));
  return Status::Ok();
}

Status Realm::WriteConfig() {
  const std::string p = std::to_string(port_);
  std::string krb5 =
      "[libdefaults]\n"
      "  default_realm = " +
      name_ +
      "\n"
      "  dns_lookup_kdc = false\n"
      "  dns_lookup_realm = false\n"
      "  dns_canonicalize_hostname = false\n"
      "  rdns = false\n"
      "  udp_preference_limit = 1\n"
      "  permitted_enctypes = " +
      KdcEnctypeList("") +
      "\n"
      "  default_ccache_name = " +
      ccache() +
      "\n"
      "  default_keytab_name = FILE:" +
      service_keytab() +
      "\n"
      "  default_client_keytab_name = FILE:" +
      user_keytab() +
      "\n"
      "[realms]\n"
      "  " +
      name_ +
      " = {\n"
      "    kdc = 127.0.0.1:" +
      p +
      "\n"
      "  }\n"
      "[domain_realm]\n"
      "  localhost = " +
      name_ +
      "\n"
      "[logging]\n"
      "  default = FILE:" +
      dir_ + "/krb5lib.log\n";
  std::string kdc =
      "[kdcdefaults]\n"
      "  kdc_listen = 127.0.0.1:" +
      p +
      "\n"
      "  kdc_tcp_listen = 127.0.0.1:" +
      p +
      "\n"
      "[realms]\n"
      "  " +
      name_ +
      " = {\n"
      "    database_name = " +
      dir_ +
      "/principal\n"
      "    key_stash_file = " +
      dir_ +
      "/stash\n"
      "    acl_file = " +
      dir_ +
      "/kadm5.acl\n"
      "    master_key_type = aes256-cts-hmac-sha1-96\n"
      "    supported_enctypes = " +
      KdcEnctypeList(":normal") +
      "\n"
      "    max_life = 24h\n"
      "  }\n"
      "[logging]\n"
      "  kdc = FILE:" +
      kdc_log() +
      "\n"
      "  admin_server = FILE:" +
      dir_ +
      "/kadmind.log\n"
      "  default = FILE:" +
      dir_ + "/krb5lib.log\n";
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir_ + "/krb5.conf", krb5));
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir_ + "/kdc.conf", kdc));
  return common::WriteFileAtomically(dir_ + "/kadm5.acl", "");
}

std::map<std::string, std::string> Realm::Environment() const {
  return {{"KRB5_CONFIG", krb5_conf()},
          {"KRB5_KDC_PROFILE", dir_ + "/kdc.conf"},
          {"KRB5CCNAME", ccache()},
          {"KRB5_KTNAME", "FILE:" + service_keytab()},
          {"KRB5_CLIENT_KTNAME", "FILE:" + user_keytab()},
          {"KRB5RCACHEDIR", dir_}};
}

Status Realm::RunTool(const std::vector<std::string>& argv, const std::string& log) {
  common::Command cmd{argv, Environment(), log, ""};
  auto rc = common::RunAndWait(cmd, 60000);
  if (!rc.ok()) return rc.status();
  if (*rc != 0) {
    return Status::Unavailable(argv[0] + " failed with exit status " + std::to_string(*rc) +
                               "\ncommand: " + cmd.ToString() + "\nlog " + log + ":\n" +
                               common::TailOfFile(log));
  }
  return Status::Ok();
}

Status Realm::Kinit() {
  // kinit traces where it sent each request and what came back, and the KDC
  // logs each request it answered: a refusal says whose KDC answered it.
  const std::string trace = dir_ + "/kinit.trace";
  unlink(trace.c_str());
  auto env = Environment();
  env["KRB5_TRACE"] = trace;
  const std::string log = dir_ + "/kinit.log";
  // What the KDC logs of an answer: an AS_REQ line, or one it resent from
  // its lookaside cache ("repeated").
  auto answered = [&] {
    return CountInFile(kdc_log(), "AS_REQ") + CountInFile(kdc_log(), "DISPATCH: repeated");
  };
  const size_t logged_before = answered();
  common::Command cmd{
      {"kinit", "-k", "-t", user_keytab(), "-c", ccache(), user_principal()}, env, log, ""};
  auto rc = common::RunAndWait(cmd, 60000);
  if (!rc.ok()) return ExplainKdcFailure(rc.status());
  if (*rc == 0) return Status::Ok();
  const size_t answers = CountInFile(trace, "Received answer");
  const size_t logged_after = answered();
  const size_t logged = logged_after > logged_before ? logged_after - logged_before : 0;
  std::string whose = "kinit had " + std::to_string(answers) + " answers, the realm's KDC logged " +
                      std::to_string(logged) + " AS_REQ meanwhile";
  if (logged < answers) whose += ": another process answered on the realm's port";
  return ExplainKdcFailure(Status::Unavailable(
      "kinit failed with exit status " + std::to_string(*rc) + "\ncommand: " + cmd.ToString() +
      "\nlog " + log + ":\n" + common::TailOfFile(log) + whose + "\nkinit's trace " + trace +
      ":\n" + common::TailOfFile(trace, 30) + "the KDC's log " + kdc_log() + ":\n" +
      common::TailOfFile(kdc_log(), 6)));
}

bool Realm::KdcWell(std::string* description) const {
  std::string who = "the realm's KDC (krb5kdc";
  if (kdc_pid_ > 0) who += " pid " + std::to_string(kdc_pid_);
  who += ", 127.0.0.1:" + std::to_string(port_) + ")";
  if (kdc_pid_ <= 0) {
    *description = who + " is not running";
    return false;
  }
  const std::string exit = common::HowChildEnded(kdc_pid_);
  if (!exit.empty()) {
    *description = who + " " + exit;
    return false;
  }
  const char state = ProcessState(kdc_pid_);
  if (state == 'T' || state == 't') {
    *description = who + " is stopped (process state " + state + "), so it answers nothing";
    return false;
  }
  if (!TcpAnswers(port_)) {
    *description = who + " runs but refuses TCP connections";
    return false;
  }
  *description = who + " runs and accepts connections";
  return true;
}

std::string Realm::DescribeKdc() const {
  std::string description;
  KdcWell(&description);
  return description;
}

Status Realm::CheckKdc() const {
  std::string description;
  if (KdcWell(&description)) return Status::Ok();
  return Status::Unavailable(description);
}

Status Realm::ExplainKdcFailure(const Status& failure) const {
  if (failure.ok()) return failure;
  std::string description;
  if (KdcWell(&description)) return failure;
  return failure.Annotate(description);
}

Status Realm::StartKdc(int timeout_ms) {
  common::Command cmd{{"krb5kdc", "-n", "-r", name_, "-P", dir_ + "/krb5kdc.pid"},
                      Environment(),
                      dir_ + "/krb5kdc.out",
                      ""};
  cmd.own_process_group = true;
  SECMODE_ASSIGN_OR_RETURN(kdc_pid_, common::Spawn(cmd));
  common::WriteFileAtomically(dir_ + "/kdc.pid", std::to_string(kdc_pid_) + "\n");
  uint64_t deadline = common::NowNs() + static_cast<uint64_t>(timeout_ms) * 1000000ull;
  while (true) {
    int status = 0;
    if (waitpid(kdc_pid_, &status, WNOHANG) == kdc_pid_) {
      kdc_pid_ = -1;
      const std::string how = WIFEXITED(status)
                                  ? "with status " + std::to_string(WEXITSTATUS(status))
                                  : "on signal " + std::to_string(WTERMSIG(status));
      return Status::Unavailable("krb5kdc exited during start-up " + how + " (port " +
                                 std::to_string(port_) + ")\ncommand: " + cmd.ToString() +
                                 "\nlog " + kdc_log() + ":\n" + common::TailOfFile(kdc_log()) +
                                 common::TailOfFile(dir_ + "/krb5kdc.out"));
    }
    // Up when krb5kdc itself says so: a listener on the port alone could be
    // another process's (the one that took the port), answering nothing.
    if (common::TailOfFile(kdc_log(), 40).find("commencing operation") != std::string::npos &&
        TcpAnswers(port_)) {
      return Status::Ok();
    }
    if (common::NowNs() > deadline) {
      common::Terminate(kdc_pid_);
      kdc_pid_ = -1;
      return Status::Unavailable("krb5kdc did not answer on 127.0.0.1:" + std::to_string(port_) +
                                 " within " + std::to_string(timeout_ms) +
                                 " ms\ncommand: " + cmd.ToString() + "\nlog " + kdc_log() + ":\n" +
                                 common::TailOfFile(kdc_log()));
    }
    usleep(5000);
  }
}

Status Realm::Stop() {
  if (stopped_) return Status::Ok();
  stopped_ = true;
  if (kdc_pid_ > 0) {
    common::Terminate(kdc_pid_, 3000);
    kdc_pid_ = -1;
  }
  Status removed = dir_.empty() ? Status::Ok() : common::RemoveTree(dir_);
  reaper_.Release();  // the reaper finds nothing left to do and exits
  for (const auto& [var, value] : saved_env_) {
    if (value == "\x01unset") {
      unsetenv(var.c_str());
    } else {
      setenv(var.c_str(), value.c_str(), 1);
    }
  }
  saved_env_.clear();
  g_realm_alive = false;
  return removed;
}

Status Realm::AddPasswordPrincipal(const std::string& name, const std::string& password) {
  if (name.empty() || password.empty() || name.find_first_of(" \t\n\"'@") != std::string::npos ||
      password.find_first_of(" \t\n\"'") != std::string::npos) {
    return Status::InvalidArgument("principal names and passwords here are single words");
  }
  return RunTool({"kadmin.local", "-r", name_, "-q", "addprinc -pw " + password + " " + name},
                 dir_ + "/kadmin.log");
}

}  // namespace secmode::gss
