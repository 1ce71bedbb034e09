#include "lab/net_lab.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "common/files.h"
#include "common/format.h"
#include "common/subprocess.h"

namespace secmode::lab {

using common::Result;
using common::Status;

namespace {

constexpr const char* kServerIf = "lab-s";
constexpr const char* kClientIf = "lab-c";

std::string Rate(double bits_per_s) {
  if (bits_per_s <= 0) return "unshaped";
  if (bits_per_s >= 1e9) return common::Fmt("%g Gbit/s", bits_per_s / 1e9);
  if (bits_per_s >= 1e6) return common::Fmt("%g Mbit/s", bits_per_s / 1e6);
  return common::Fmt("%g kbit/s", bits_per_s / 1e3);
}

// "`ip ...` failed (exit status N): <the end of its log>" (built by
// appending: GCC 12 warns wrongly on "`" + std::string).
Status CommandFailed(const common::Command& c, int rc) {
  std::string m = "`";
  m += c.ToString();
  m += "` failed (exit status ";
  m += std::to_string(rc);
  m += "): ";
  m += common::TailOfFile(c.log_path, 5);
  return Status::Unavailable(m);
}

}  // namespace

std::string LinkShape::ToString() const {
  if (c2s_bits_per_s == s2c_bits_per_s) {
    return c2s_bits_per_s <= 0 ? "unshaped" : Rate(c2s_bits_per_s) + " both ways";
  }
  return "c->s " + Rate(c2s_bits_per_s) + ", s->c " + Rate(s2c_bits_per_s);
}

std::string LabUnavailableReason() {
  if (geteuid() != 0) {
    return "the lab makes network namespaces and a veth pair: it needs root (this is uid " +
           std::to_string(geteuid()) + ")";
  }
  if (common::FindProgram("ip").empty()) return "iproute2's `ip` is not installed";
  if (common::FindProgram("tc").empty()) return "iproute2's `tc` is not installed";
  return "";
}

Result<std::unique_ptr<NetLab>> NetLab::Create() {
  const std::string why = LabUnavailableReason();
  if (!why.empty()) return Status::Unavailable("no lab: " + why);
  std::unique_ptr<NetLab> lab(new NetLab());
  SECMODE_ASSIGN_OR_RETURN(lab->dir_, common::MakeTempDirectory("secmode-lab-"));
  auto reaper = common::Reaper::Start(lab->dir_, "", "secmode-lab-reaper");
  if (!reaper.ok()) {
    (void)common::RemoveTree(lab->dir_);
    return reaper.status();
  }
  lab->reaper_ = std::move(*reaper);
  // Unique per process and lab: the directory's random suffix.
  static std::atomic<int> count{0};
  const std::string base =
      "secmode-lab-" + std::to_string(getpid()) + "-" + std::to_string(count.fetch_add(1));
  lab->server_ns_ = base + "-server";
  lab->client_ns_ = base + "-client";
  Status built = lab->Build();
  if (!built.ok()) {
    (void)lab->Destroy();
    return built;
  }
  return lab;
}

NetLab::~NetLab() { (void)Destroy(); }

Status NetLab::Ip(const std::vector<std::string>& args) {
  common::Command c;
  c.argv = {"ip"};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  c.log_path = dir_ + "/ip.log";
  (void)common::WriteFileAtomically(c.log_path, "");
  SECMODE_ASSIGN_OR_RETURN(int rc, common::RunAndWait(c, 20000));
  if (rc != 0) return CommandFailed(c, rc);
  return Status::Ok();
}

std::string NetLab::KillInsideScript() const {
  // Every process in the lab's namespaces is the lab's: a server's children
  // too (samba's smbd, winbindd ...), which would otherwise outlive their
  // killed parent for a moment and write into the directory being removed.
  // Until none is left (a fork between listing and killing is caught by
  // the next round), at most ten rounds.
  return "for i in 1 2 3 4 5 6 7 8 9 10; do p=$(ip netns pids " + server_ns_ +
         " 2>/dev/null; ip netns pids " + client_ns_ +
         " 2>/dev/null); [ -z \"$p\" ] && break; kill -9 $p 2>/dev/null; sleep 0.1; done\n";
}

Status NetLab::WriteOnReap() {
  std::string script;
  for (pid_t p : tracked_) script += "kill -9 " + std::to_string(p) + "\n";
  if (made_) {
    script += KillInsideScript();
    script += "ip netns del " + server_ns_ + "\nip netns del " + client_ns_ + "\n";
  }
  return common::WriteFileAtomically(dir_ + "/on-reap", script);
}

Status NetLab::Build() {
  // The reaper learns of the namespaces before they exist: deleting one
  // that was never made is harmless.
  made_ = true;
  SECMODE_RETURN_IF_ERROR(WriteOnReap());
  SECMODE_RETURN_IF_ERROR(Ip({"netns", "add", server_ns_}));
  SECMODE_RETURN_IF_ERROR(Ip({"netns", "add", client_ns_}));
  SECMODE_RETURN_IF_ERROR(Ip({"link", "add", kServerIf, "netns", server_ns_, "type", "veth", "peer",
                              "name", kClientIf, "netns", client_ns_}));
  SECMODE_RETURN_IF_ERROR(
      Ip({"-n", server_ns_, "addr", "add", std::string(kServerAddress) + "/30", "dev", kServerIf}));
  SECMODE_RETURN_IF_ERROR(
      Ip({"-n", client_ns_, "addr", "add", std::string(kClientAddress) + "/30", "dev", kClientIf}));
  for (const std::string& ns : {server_ns_, client_ns_}) {
    SECMODE_RETURN_IF_ERROR(Ip({"-n", ns, "link", "set", "lo", "up"}));
  }
  SECMODE_RETURN_IF_ERROR(Ip({"-n", server_ns_, "link", "set", kServerIf, "up"}));
  SECMODE_RETURN_IF_ERROR(Ip({"-n", client_ns_, "link", "set", kClientIf, "up"}));
  return Status::Ok();
}

Status NetLab::Shape(const LinkShape& shape) {
  if (!made_) return Status::Internal("the lab was destroyed");
  if (!(shape.c2s_bits_per_s >= 0) || !(shape.s2c_bits_per_s >= 0)) {
    return Status::InvalidArgument("a link rate must not be negative");
  }
  auto one = [&](const std::string& ns, const char* dev, double bits) -> Status {
    common::Command c;
    c.log_path = dir_ + "/tc.log";
    (void)common::WriteFileAtomically(c.log_path, "");
    if (bits <= 0) {
      // Nothing to remove is fine: the pair starts without a qdisc of ours.
      c.argv = {"tc", "-n", ns, "qdisc", "del", "dev", dev, "root"};
      SECMODE_ASSIGN_OR_RETURN(int rc, common::RunAndWait(c, 20000));
      (void)rc;
      return Status::Ok();
    }
    const double bytes_per_s = bits / 8;
    // A quarter millisecond of the rate in the bucket (two full frames at
    // least): a message goes out at the link's rate, as on a real link,
    // not at once after an idle spell. A queue of 100 ms of it (4 MiB at
    // least): TCP fills it without a drop (the model has no loss).
    const int64_t burst = std::max<int64_t>(2 * 1514, std::llround(bytes_per_s * 0.25e-3));
    const int64_t limit = std::max<int64_t>(4 << 20, std::llround(bytes_per_s * 0.1));
    c.argv = {"tc",
              "-n",
              ns,
              "qdisc",
              "replace",
              "dev",
              dev,
              "root",
              "tbf",
              "rate",
              std::to_string(std::llround(bits)) + "bit",
              "burst",
              std::to_string(burst),
              "limit",
              std::to_string(limit)};
    SECMODE_ASSIGN_OR_RETURN(int rc, common::RunAndWait(c, 20000));
    if (rc != 0) return CommandFailed(c, rc);
    return Status::Ok();
  };
  SECMODE_RETURN_IF_ERROR(one(client_ns_, kClientIf, shape.c2s_bits_per_s));
  SECMODE_RETURN_IF_ERROR(one(server_ns_, kServerIf, shape.s2c_bits_per_s));
  shape_ = shape;
  return Status::Ok();
}

std::vector<std::string> NetLab::InServer(const std::vector<std::string>& argv) const {
  std::vector<std::string> v = {"ip", "netns", "exec", server_ns_};
  v.insert(v.end(), argv.begin(), argv.end());
  return v;
}

std::vector<std::string> NetLab::InClient(const std::vector<std::string>& argv) const {
  std::vector<std::string> v = {"ip", "netns", "exec", client_ns_};
  v.insert(v.end(), argv.begin(), argv.end());
  return v;
}

Result<common::Fd> NetLab::ConnectFromClient(const std::string& host, uint16_t port,
                                             common::Deadline deadline) const {
  if (!made_) return Status::Internal("the lab was destroyed");
  Result<common::Fd> out = Status::Internal("the connecting thread did not run");
  // setns(CLONE_NEWNET) moves only the calling thread: a thread of its own
  // enters the namespace, connects, and ends there.
  std::thread t([&] {
    const std::string path = "/var/run/netns/" + client_ns_;
    const int ns = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0) {
      out = Status::Unavailable("open " + path + ": " + common::ErrnoText(errno));
      return;
    }
    const int rc = setns(ns, CLONE_NEWNET);
    const int err = errno;
    close(ns);
    if (rc != 0) {
      out = Status::Unavailable("setns(" + path + "): " + common::ErrnoText(err));
      return;
    }
    out = common::Connect(host, port, deadline);
  });
  t.join();
  return out;
}

Status NetLab::Track(pid_t pid) {
  tracked_.push_back(pid);
  return WriteOnReap();
}

Status NetLab::Forget(pid_t pid) {
  tracked_.erase(std::remove(tracked_.begin(), tracked_.end(), pid), tracked_.end());
  return WriteOnReap();
}

Status NetLab::Destroy() {
  if (dir_.empty()) return Status::Ok();
  Status first = Status::Ok();
  auto note = [&](const Status& s) {
    if (first.ok() && !s.ok()) first = s;
  };
  for (pid_t p : tracked_) common::Terminate(p, 2000);
  tracked_.clear();
  if (made_) {
    common::Command c;
    c.argv = {"sh", "-c", KillInsideScript()};
    note(common::RunAndWait(c, 20000).status());
    // Each namespace is deleted even when the other cannot be (one that was
    // never made fails harmlessly).
    Status a = Ip({"netns", "del", server_ns_});
    Status b = Ip({"netns", "del", client_ns_});
    note(a);
    note(b);
    made_ = false;
  }
  note(common::RemoveTree(dir_));
  dir_.clear();
  reaper_.Release();
  return first;
}

}  // namespace secmode::lab
