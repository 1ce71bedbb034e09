#include "lab/lab_hosts.h"

#include <unistd.h>

#include <cmath>
#include <thread>

#include "common/clock.h"
#include "common/files.h"
#include "common/format.h"
#include "common/subprocess.h"

namespace secmode::lab {

using common::Result;
using common::Status;

namespace {

constexpr int kLabPort = 2049;  // inside the lab's own namespace: nothing else is there

std::string Ms(double ms) { return common::Fmt("%g", ms); }

}  // namespace

std::string LabLink::Describe() const {
  const std::string rtt =
      one_way_delay_ms > 0 ? "RTT " + Ms(2 * one_way_delay_ms) + " ms" : "no added delay";
  return rtt + ", " + shape.ToString();
}

Result<std::unique_ptr<LabHosts>> LabHosts::Start(const LabHostsOptions& options,
                                                  gss::Realm* realm) {
  std::unique_ptr<LabHosts> h(new LabHosts());
  h->options_ = options;
  if (h->options_.secmode_path.empty()) h->options_.secmode_path = common::SelfPath();
  if (access(h->options_.secmode_path.c_str(), X_OK) != 0) {
    return Status::InvalidArgument("the lab runs the secmode binary, and '" +
                                   h->options_.secmode_path + "' is not an executable");
  }
  h->realm_ = realm;
  SECMODE_ASSIGN_OR_RETURN(h->net_, NetLab::Create());
  if (realm != nullptr) {
    // The client's ticket for the service, in its ccache before it moves
    // to where the KDC is out of reach.
    common::Command kvno{{"kvno", "-c", realm->ccache(), realm->service_principal()},
                         realm->Environment(),
                         h->net_->dir() + "/kvno.log",
                         ""};
    SECMODE_ASSIGN_OR_RETURN(int rc, common::RunAndWait(kvno, 30000));
    if (rc != 0) {
      return Status::Unavailable("fetching the lab client's service ticket: `" + kvno.ToString() +
                                 "` failed (exit status " + std::to_string(rc) +
                                 "): " + common::TailOfFile(kvno.log_path, 5));
    }
  }
  SECMODE_RETURN_IF_ERROR(h->StartServer());
  return h;
}

LabHosts::~LabHosts() { StopServer(); }

void LabHosts::StopServer() {
  if (server_pid_ <= 0) return;
  common::Terminate(server_pid_, 3000);
  (void)net_->Forget(server_pid_);
  server_pid_ = -1;
}

Status LabHosts::StartServer() {
  std::vector<std::string> argv = {options_.secmode_path,
                                   "serve",
                                   "--address",
                                   kServerAddress,
                                   "--port",
                                   std::to_string(kLabPort),
                                   "--engine",
                                   options_.engine,
                                   "--window",
                                   std::to_string(options_.window),
                                   "--delay-ms",
                                   Ms(link_.one_way_delay_ms)};
  if (realm_ != nullptr) {
    argv.insert(argv.end(), {"--keytab", realm_->service_keytab(), "--principal",
                             realm_->service_principal()});
  }
  common::Command c;
  c.argv = net_->InServer(argv);
  if (realm_ != nullptr) c.env = realm_->Environment();
  c.log_path = net_->dir() + "/serve.log";
  (void)common::WriteFileAtomically(c.log_path, "");
  c.own_process_group = true;
  SECMODE_ASSIGN_OR_RETURN(server_pid_, common::Spawn(c));
  SECMODE_RETURN_IF_ERROR(net_->Track(server_pid_));
  const uint64_t deadline =
      common::NowNs() + static_cast<uint64_t>(options_.server_start_timeout_ms) * 1000000;
  while (common::NowNs() < deadline) {
    auto log = common::ReadFile(c.log_path);
    if (log.ok() && log->find("serving on") != std::string::npos) return Status::Ok();
    if (common::WaitForExit(server_pid_, 0)) {
      (void)net_->Forget(server_pid_);
      server_pid_ = -1;
      return Status::Unavailable("the lab's server ended before it served: `" + c.ToString() +
                                 "`: " + common::TailOfFile(c.log_path, 10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  StopServer();
  return Status::Unavailable("the lab's server did not say it was serving within " +
                             std::to_string(options_.server_start_timeout_ms) + " ms: " +
                             common::TailOfFile(c.log_path, 10));
}

Status LabHosts::SetLink(const LabLink& link) {
  if (!(link.one_way_delay_ms >= 0) || link.one_way_delay_ms > 10000) {
    return Status::InvalidArgument("a lab link's one-way delay must be 0 to 10000 ms, not " +
                                   Ms(link.one_way_delay_ms));
  }
  SECMODE_RETURN_IF_ERROR(net_->Shape(link.shape));
  const bool restart = link.one_way_delay_ms != link_.one_way_delay_ms || server_pid_ <= 0;
  link_ = link;
  if (!restart) return Status::Ok();
  StopServer();
  return StartServer();
}

Result<nlohmann::json> LabHosts::Load(const LabLoad& load) {
  const double deadline_s = load.warmup + load.seconds + 60;
  // family[:enctype[:engine]]: the KDC picks the enctype, the lab the engine.
  const bool kerberos = load.mode != "sys";
  const std::string mode = kerberos ? load.mode + "::" + options_.engine : load.mode;
  std::vector<std::string> argv = {options_.secmode_path,
                                   "load",
                                   "--host",
                                   kServerAddress,
                                   "--port",
                                   std::to_string(kLabPort),
                                   "--mode",
                                   mode,
                                   "--op",
                                   load.op,
                                   "--size",
                                   std::to_string(load.size),
                                   "--connections",
                                   std::to_string(load.connections),
                                   "--slots",
                                   std::to_string(load.slots),
                                   "--seconds",
                                   common::Fmt("%g", load.seconds),
                                   "--warmup",
                                   common::Fmt("%g", load.warmup),
                                   "--timeout-ms",
                                   std::to_string(load.timeout_ms),
                                   "--deadline",
                                   common::Fmt("%g", deadline_s),
                                   "--delay-ms",
                                   Ms(link_.one_way_delay_ms)};
  if (kerberos) {
    if (realm_ == nullptr) return Status::InvalidArgument("the lab has no realm for " + load.mode);
    argv.insert(argv.end(),
                {"--ccache", realm_->ccache(), "--target", realm_->service_hostbased()});
  }
  const std::string base = net_->dir() + "/load-" + std::to_string(++runs_);
  // stdout (the JSON) and stderr apart: the shell in the namespace sends them.
  std::vector<std::string> shell = {
      "sh", "-c", "exec \"$0\" \"$@\" >" + base + ".json 2>" + base + ".log"};
  shell.insert(shell.end(), argv.begin(), argv.end());
  common::Command c;
  c.argv = net_->InClient(shell);
  if (realm_ != nullptr) c.env = realm_->Environment();
  // A group of its own: a terminal's Ctrl-C reaches the owner, which
  // stops after this load, not the load itself. Tracked: killed with the
  // lab, by the reaper too.
  c.own_process_group = true;
  SECMODE_ASSIGN_OR_RETURN(pid_t pid, common::Spawn(c));
  SECMODE_RETURN_IF_ERROR(net_->Track(pid));
  const bool ended = common::WaitForExit(pid, static_cast<int>(deadline_s * 1000) + 30000);
  if (!ended) common::Terminate(pid, 2000);
  (void)net_->Forget(pid);
  auto out = common::ReadFile(base + ".json");
  nlohmann::json j;
  if (out.ok() && !out->empty()) j = nlohmann::json::parse(*out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Unavailable(
        "the lab's load (" + load.mode + " " + load.op + ") measured nothing" +
        (ended ? std::string() : " and was killed after its deadline") + ": " +
        common::TailOfFile(base + ".log", 5));
  }
  std::remove((base + ".json").c_str());
  if (!j.contains("failure")) std::remove((base + ".log").c_str());
  return j;
}

}  // namespace secmode::lab
