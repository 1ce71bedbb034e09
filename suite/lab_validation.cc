#include "suite/lab_validation.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/format.h"
#include "common/machine.h"
#include "harness/workload_inputs.h"
#include "sim/workload.h"
#include "sim/workload_model.h"
#include "smb/load.h"
#include "smb/samba_dc.h"

namespace secmode::suite {

using common::Result;
using common::Status;

namespace {

struct LinkSpec {
  double rtt_ms;
  double bits_per_s;  // both directions; 0 = unshaped
};
struct OpSpec {
  const char* op;  // read, write
  uint32_t size;
};
// The requests in flight: NFS iodepth x numjobs over nconnect
// kLabConnections; SMB one job of `iodepth` over `connections` channels
// (iodepth / connections each).
struct DepthSpec {
  int iodepth, numjobs, connections;
};
struct Grid {
  std::vector<LinkSpec> links;  // the first is the undelayed unshaped link (the base)
  std::vector<OpSpec> ops;
  std::vector<DepthSpec> depths;
};

const char* GridName(LabGrid g) {
  switch (g) {
    case LabGrid::kQuick: return "quick";
    case LabGrid::kDefault: return "default";
    case LabGrid::kFull: return "full";
  }
  return "?";
}

constexpr double kTargetOps = 150;  // a point runs long enough for about this many
constexpr double kMinSeconds = 1.5, kMaxSeconds = 6;
constexpr double kMinOpsToRun = 10;  // predicted in kMaxSeconds, else pruned

// One protocol's two hosts on the lab: its server, its load, its ping.
class Target {
 public:
  virtual ~Target() = default;
  virtual Status SetLink(const LinkSpec& spec) = 0;
  // One request at a time on the link as it is (a link of about `rtt_ms`):
  // its median latency in us.
  Result<double> PingUs(double rtt_ms) {
    SECMODE_ASSIGN_OR_RETURN(
        nlohmann::json j, Ping(std::clamp(40 * rtt_ms / 1000, 1.0, 4.0), 0.2 + 2 * rtt_ms / 1000));
    if (j.contains("failure")) {
      return Status::Unavailable("measuring the link's round trip: " +
                                 j["failure"].get<std::string>());
    }
    return j.value("p50_us", 0.0);
  }
  // One point: the load's JSON report (ops_per_second, mb_per_second,
  // p50_us, p99_us, ops, idle_fraction, errors; `failure` when it failed
  // after measuring); an error when it measured nothing.
  virtual Result<nlohmann::json> Load(const std::string& family, const OpSpec& op,
                                      const DepthSpec& depth, double seconds, double warmup) = 0;
  // The server, as the report names it.
  virtual std::string Server() const = 0;
  // The model's inputs that only this protocol has (its connections, the
  // server's window).
  virtual void AddModelInputs(nlohmann::json& inputs) const = 0;

 protected:
  // One request at a time for `seconds`: the load's JSON report.
  virtual Result<nlohmann::json> Ping(double seconds, double warmup) = 0;
};

// `secmode serve` and `secmode load` (lab/lab_hosts.h).
class NfsTarget : public Target {
 public:
  NfsTarget(std::unique_ptr<lab::LabHosts> hosts, uint32_t window)
      : hosts_(std::move(hosts)), window_(window) {}
  Status SetLink(const LinkSpec& spec) override {
    lab::LabLink link;
    link.one_way_delay_ms = spec.rtt_ms / 2;
    link.shape = {spec.bits_per_s, spec.bits_per_s};
    return hosts_->SetLink(link);
  }
  // A one-slot sys GETATTR.
  Result<nlohmann::json> Ping(double seconds, double warmup) override {
    lab::LabLoad l;
    l.mode = "sys";
    l.op = "getattr";
    l.size = 0;
    l.connections = 1;
    l.slots = 1;
    l.seconds = seconds;
    l.warmup = warmup;
    return hosts_->Load(l);
  }
  Result<nlohmann::json> Load(const std::string& family, const OpSpec& op, const DepthSpec& depth,
                              double seconds, double warmup) override {
    lab::LabLoad l;
    l.mode = family;
    l.op = op.op;
    l.size = op.size;
    l.connections = depth.connections;
    l.slots = depth.iodepth * depth.numjobs;
    l.seconds = seconds;
    l.warmup = warmup;
    return hosts_->Load(l);
  }
  std::string Server() const override { return "secmode serve"; }
  void AddModelInputs(nlohmann::json& inputs) const override {
    inputs["server_window"] = window_;
    inputs["connections"] = kLabConnections;
  }

 private:
  std::unique_ptr<lab::LabHosts> hosts_;
  uint32_t window_;
};

// smb/load.h in this process (the lab's client namespace) against a
// throwaway Samba AD DC in the lab's server namespace; the whole round trip
// held on the client.
class SmbTarget : public Target {
 public:
  explicit SmbTarget(std::unique_ptr<smb::SambaDc> dc) : dc_(std::move(dc)) {}
  ~SmbTarget() override { (void)dc_->Stop(); }
  Status SetLink(const LinkSpec& spec) override {
    SECMODE_RETURN_IF_ERROR(dc_->lab().Shape({spec.bits_per_s, spec.bits_per_s}));
    round_trip_us_ = static_cast<uint32_t>(std::llround(spec.rtt_ms * 1000));
    return Status::Ok();
  }
  // One smb-plain QUERY_INFO at a time.
  Result<nlohmann::json> Ping(double seconds, double warmup) override {
    return Run("smb-plain", smb::SmbOp::kMetadata, 0, 1, 1, seconds, warmup);
  }
  Result<nlohmann::json> Load(const std::string& family, const OpSpec& op, const DepthSpec& depth,
                              double seconds, double warmup) override {
    SECMODE_ASSIGN_OR_RETURN(smb::SmbOp o, smb::ParseSmbOp(op.op));
    return Run(family, o, op.size, depth.connections,
               std::max(1, depth.iodepth * depth.numjobs / depth.connections), seconds, warmup);
  }
  std::string Server() const override { return "Samba " + dc_->version() + " AD DC (throwaway)"; }
  void AddModelInputs(nlohmann::json& inputs) const override {
    inputs["connections"] = "the point's channels, one session";
  }

 private:
  Result<nlohmann::json> Run(const std::string& family, smb::SmbOp op, uint32_t size, int channels,
                             int outstanding, double seconds, double warmup) {
    smb::SmbLoadOptions o;
    o.op = op;
    if (op != smb::SmbOp::kMetadata) o.size = size;
    o.connections = 1;
    o.channels = channels;
    o.outstanding = outstanding;
    o.seconds = seconds;
    o.warmup_seconds = warmup;
    o.round_trip_us = round_trip_us_;
    dc_->WatchThreads(&o);
    SECMODE_ASSIGN_OR_RETURN(const smb::SmbMode mode, smb::ParseSmbModeName(family));
    smb::SmbClientConfig config = dc_->ClientConfig(mode);
    config.timeout_ms = 60000;  // a slow link's queue is not a lost request
    std::optional<smb::SmbLoadReport> partial;
    auto r = smb::RunSmbLoad(o, config, dc_->Connector(), &partial);
    if (!r.ok() && !partial) return r.status();
    nlohmann::json j = harness::SmbLoadReportJson(r.ok() ? *r : *partial);
    if (!r.ok()) j["failure"] = r.status().ToString();
    return j;
  }

  std::unique_ptr<smb::SambaDc> dc_;
  uint32_t round_trip_us_ = 0;
};

// What differs between the protocols before their target runs: the names,
// the baseline and the default families, the grid's depths, the model's
// server and how the report describes its inputs. The validation itself
// (RunLabValidation and what it calls) is written once over this and a
// Target.
struct Protocol {
  const char* name;                 // the document's "protocol"
  const char* tag;                  // each log line's
  const char* baseline;             // measured first in every group; its costs are the protocol's
  const char* engine;               // the micro rows' engine for the other families ("" = any)
  std::vector<std::string> others;  // the default families besides the baseline
  std::vector<DepthSpec> quick_depths, default_depths, full_depths;
  const char* legs_note;                    // after the cost source in model_inputs.legs
  const char* round_trip;                   // model_inputs.round_trip
  const char* cores_note;                   // after model_inputs.cores
  void (*server_model)(sim::Environment*);  // the server's threads in the model, or null
  // A group of points that differ only by mode, as the rows and log name it.
  std::string (*group)(const OpSpec& op, const DepthSpec& depth);
  // Its two hosts on the lab, with `realm` (NFS's; null for SMB).
  Result<std::unique_ptr<Target>> (*start)(gss::Realm* realm, const LabValidationOptions& o);
};

Result<std::unique_ptr<Target>> StartNfs(gss::Realm* realm, const LabValidationOptions& o) {
  if (realm == nullptr) return Status::InvalidArgument("the NFS lab needs a realm");
  lab::LabHostsOptions ho;
  ho.secmode_path = o.secmode_path;
  ho.engine = "native";
  SECMODE_ASSIGN_OR_RETURN(auto hosts, lab::LabHosts::Start(ho, realm));
  return std::unique_ptr<Target>(std::make_unique<NfsTarget>(std::move(hosts), ho.window));
}

Result<std::unique_ptr<Target>> StartSmb(gss::Realm*, const LabValidationOptions&) {
  SECMODE_ASSIGN_OR_RETURN(auto dc, smb::SambaDc::Start());
  return std::unique_ptr<Target>(std::make_unique<SmbTarget>(std::move(dc)));
}

const Protocol& ProtocolOf(LabProtocol protocol) {
  // NFS: iodepth x numjobs over nconnect kLabConnections.
  static const Protocol kNfs = {
      "nfs",
      "lab",
      "sys",
      "native",
      {"krb5", "krb5i", "krb5p"},
      {{1, 1, kLabConnections}, {64, 1, kLabConnections}},
      {{1, 1, kLabConnections}, {64, 1, kLabConnections}},
      {{1, 1, kLabConnections},
       {64, 1, kLabConnections},
       {1, 4, kLabConnections},
       {64, 4, kLabConnections}},
      " (native engine)",
      "measured on each link: a one-slot sys GETATTR's median latency minus the "
      "same on the undelayed unshaped link",
      "",
      nullptr,
      [](const OpSpec& op, const DepthSpec& depth) {
        return common::Sprintf("%s %u B qd%dx%d", op.op, op.size, depth.iodepth, depth.numjobs);
      },
      StartNfs};
  // SMB: one job over 1, 4 or 16 channels, 1 or 16 in flight on each.
  static const Protocol kSmb = {
      "smb",
      "smb-lab",
      "smb-plain",
      "",
      {"smb-sign-aes-cmac", "smb-enc-aes-128-gcm"},
      {{1, 1, 1}, {64, 1, 4}},
      {{1, 1, 1}, {64, 1, 4}, {64, 1, 16}},
      {{1, 1, 1}, {16, 1, 1}, {4, 1, 4}, {64, 1, 4}, {16, 1, 16}, {256, 1, 16}},
      "",
      "measured on each link: one QUERY_INFO at a time, its median latency minus the "
      "same on the undelayed unshaped link",
      "; Samba serves the session on one thread",
      harness::UseSambaServer,
      [](const OpSpec& op, const DepthSpec& depth) {
        return common::Sprintf("%s %u B %d channel(s) x %d", op.op, op.size, depth.connections,
                               depth.iodepth / depth.connections);
      },
      StartSmb};
  return protocol == LabProtocol::kSmb ? kSmb : kNfs;
}

Grid GridFor(LabGrid g, const Protocol& p) {
  switch (g) {
    case LabGrid::kQuick:
      return {
          {{0, 0}, {20, 1e9}, {2, 100e6}}, {{"read", 4096}, {"write", 1u << 20}}, p.quick_depths};
    case LabGrid::kDefault:
      return {{{0, 0}, {1, 0}, {20, 1e9}, {200, 100e6}},
              {{"read", 4096}, {"write", 1u << 20}},
              p.default_depths};
    case LabGrid::kFull: break;
  }
  Grid full;
  for (double rtt : {0.0, 1.0, 20.0, 200.0}) {
    for (double bits : {0.0, 1e9, 100e6}) full.links.push_back({rtt, bits});
  }
  full.ops = {{"read", 4096}, {"write", 4096}, {"read", 1u << 20}, {"write", 1u << 20}};
  full.depths = p.full_depths;
  return full;
}

std::string Rule() {
  return common::Sprintf(
      "the model's assumptions hold at a point unless it is CPU-bound: predicted so (its most "
      "used station is a CPU over half busy, or over half of an operation's time is CPU), or "
      "measured so (the machine under %g%% idle during "
      "the point). The model gives client and server a core each and no CPU to the network, "
      "while in the lab they share this machine's CPUs with the kernel's TCP and the delay "
      "lines that emulate the round trip. Where they hold, the measured throughput must be "
      "within %g%% of the predicted. In each group of points that differ only by mode, every "
      "pair of modes the model separates by %g%% or more must be measured in the same order; "
      "closer pairs are ties, not checked.",
      kLabMinIdle * 100, kLabTolerance * 100, (kLabOrderMargin - 1) * 100);
}

// The model's inputs from the run (the costs) and this machine (its cores).
struct ModelInputs {
  std::vector<std::string> families;  // the baseline first
  sim::LegCosts baseline;
  std::vector<sim::LegCosts> legs;  // the families other than the baseline, in order
  harness::ProtocolCosts protocol;
  std::string protocol_cost_source;
  int cpus = 1, cores_each = 1;
};

Result<ModelInputs> InputsFrom(const harness::RunResults& run, const Protocol& p,
                               const LabValidationOptions& o) {
  ModelInputs in;
  // The costs, all from the run.
  const std::string baseline = p.baseline;
  SECMODE_ASSIGN_OR_RETURN(in.baseline, harness::LegCostsFromRun(run, baseline));
  in.families = o.families;
  if (in.families.empty()) {
    in.families.push_back(baseline);
    for (const std::string& f : p.others) {
      if (harness::LegCostsFromRun(run, f, p.engine).ok()) in.families.push_back(f);
    }
  }
  for (const std::string& f : in.families) {
    if (f == baseline) continue;
    auto l = harness::LegCostsFromRun(run, f, p.engine);
    if (!l.ok()) return l.status().Annotate("the lab's " + f + " costs");
    in.legs.push_back(*l);
  }
  SECMODE_ASSIGN_OR_RETURN(in.protocol,
                           harness::ProtocolCostsFromRun(run, baseline, &in.protocol_cost_source));
  // This machine's CPUs (the lab runs here, whatever machine made the
  // costs), halved; no end runs more than a thread per connection.
  in.cpus = std::max(1, common::LogicalCpus());
  in.cores_each = std::clamp(in.cpus / 2, 1, kLabConnections);
  return in;
}

// The document before its points: what ran and what the model was given.
nlohmann::json DocumentHead(const Protocol& p, const LabValidationOptions& o, const ModelInputs& in,
                            const Target& target) {
  nlohmann::json doc;
  doc["protocol"] = p.name;
  doc["grid"] = GridName(o.grid);
  doc["rule"] = Rule();
  doc["server"] = target.Server();
  doc["model_inputs"] = {
      {"legs", "micro rows of " + o.cost_source + p.legs_note + ", linear between measured sizes"},
      {"protocol_cpu", in.protocol_cost_source},
      {"round_trip", p.round_trip},
      {"link_rate",
       common::Sprintf("tbf rate x %.4f (TCP payload per 1514-byte frame)", kFramePayloadShare)},
      {"cores", common::Sprintf("client %d, server %d (this machine's %d logical CPUs halved)%s",
                                in.cores_each, in.cores_each, in.cpus, p.cores_note)},
      {"tcp_window", "none: the delay is added in user space, TCP does not see it"}};
  target.AddModelInputs(doc["model_inputs"]);
  doc["links"] = nlohmann::json::array();
  doc["rows"] = nlohmann::json::array();
  doc["pruned"] = nlohmann::json::array();
  doc["order"] = nlohmann::json::array();
  return doc;
}

// One validation while its points run: what it measures with and where
// it writes.
struct LabRun {
  const Protocol& p;
  const LabValidationOptions& o;
  const ModelInputs& in;
  Target& target;
  nlohmann::json& doc;
  bool interrupted = false;

  void Say(const std::string& line) const {
    if (o.log) *o.log << p.tag << ": " << line << std::endl;
  }
  // Whether the signal came (then `interrupted` stays set).
  bool Interrupted() {
    if (o.interrupt && o.interrupt->load() != 0) interrupted = true;
    return interrupted;
  }
};

// One group of points (a link, an op and size, a depth) as the model sees
// it: the load, the environment and the name.
struct Point {
  std::string link;
  double rtt_us;  // the link's round trip as measured
  sim::Workload w;
  sim::Environment env;
  OpSpec op;
  DepthSpec depth;
  std::string group;
};

// The model's side of a row: its prediction and whether its assumptions
// hold (row["predicted"], ["assumptions_hold"], ["why_not"]); true when the
// point is CPU-bound as predicted.
bool JudgePrediction(const sim::ModePrediction& p, const Point& pt, int cpus, nlohmann::json& row) {
  // How much of one operation's time (its demands at every station)
  // is CPU: where it is small, the costs hardly decide the point.
  double cpu_s = 0, all_s = 0, client_s = 0, server_s = 0;
  for (const sim::Station& st : p.stations) {
    all_s += st.demand_s;
    if (st.name.find("CPU") != std::string::npos) cpu_s += st.demand_s;
    if (st.name == "client CPU") client_s = st.demand_s;
    if (st.name == "server CPU") server_s = st.demand_s;
  }
  const double cpu_share = all_s > 0 ? cpu_s / all_s : 0.0;
  row["predicted"] = {{"iops", p.iops},
                      {"mb_per_s", p.mb_per_s},
                      {"mean_latency_ms", p.mean_latency_s * 1e3},
                      {"bottleneck", p.bottleneck},
                      {"cpu_share", cpu_share},
                      // Each end's CPU per operation the model gave it.
                      {"client_cpu_us_per_op", client_s * 1e6},
                      {"server_cpu_us_per_op", server_s * 1e6}};
  double top_use = 0;
  std::string top_station;
  for (size_t i = 0; i < p.stations.size(); ++i) {
    if (!p.stations[i].delay && p.utilisation[i] > top_use) {
      top_use = p.utilisation[i];
      top_station = p.stations[i].name;
    }
  }
  // CPU-bound: a CPU station over half busy, or most of an
  // operation's time CPU. The second also catches one call at a
  // time, whose stations are each busy only for their share of the
  // call, however CPU-bound the call is.
  bool cpu_bound =
      (top_use >= 0.5 && top_station.find("CPU") != std::string::npos) || cpu_share >= 0.5;
  row["assumptions_hold"] = !cpu_bound;
  if (cpu_bound && pt.w.Outstanding() == 1 && pt.env.rtt_ns == 0) {
    row["why_not"] =
        "one call at a time with no delay: its round trip is both ends' wakeups and the "
        "kernel's TCP path, which the per-op CPU (measured with many calls in flight, in "
        "batches) leaves out";
  } else if (cpu_bound) {
    row["why_not"] = common::Sprintf(
        "CPU-bound (%s %.0f%% busy, %.0f%% of an operation's time CPU): the model gives "
        "each end its own core; here they share the machine's %d",
        top_station.c_str(), top_use * 100, cpu_share * 100, cpus);
  }
  return cpu_bound;
}

// The load's side of a row: row["measured"] from its report `m`.
void PutMeasured(const nlohmann::json& m, double iops, nlohmann::json& row) {
  row["measured"] = {{"iops", iops},
                     {"mb_per_s", m.value("mb_per_second", 0.0)},
                     {"p50_ms", m.value("p50_us", 0.0) / 1e3},
                     {"p99_ms", m.value("p99_us", 0.0) / 1e3},
                     {"ops", m.value("ops", 0)},
                     {"idle_fraction", m.value("idle_fraction", -1.0)},
                     {"errors", m.value("errors", 0)}};
  // NFS: the CPU of the client's delay-line threads (the emulated
  // round trip) per call they wrote: the holding, which a real
  // network does not put on the host, and the write's system call,
  // which the client would make anyway; and the load's retransmits.
  // (SMB's delay lines count in the client's CPU.)
  if (m.contains("sender_calls")) {
    row["measured"]["delay_line_cpu_us_per_call"] =
        m.value("sender_calls", 0) > 0
            ? m.value("sender_cpu_ns", 0.0) / 1e3 / m.value("sender_calls", 1.0)
            : 0.0;
    row["measured"]["retransmits"] = m.value("retransmits", 0);
  }
  if (m.contains("failure")) row["measured"]["failure"] = m["failure"];
  // Each end's CPU per operation as measured, beside the model's:
  // the client's process (SMB: this one, its delay lines included)
  // and Samba's thread serving the session.
  const double client_cpu_s = m.value("client_cpu_seconds", -1.0);
  if (client_cpu_s >= 0 && m.value("ops", 0.0) > 0) {
    row["measured"]["client_cpu_us_per_op"] = client_cpu_s * 1e6 / m.value("ops", 1.0);
  }
  const double thread_s = m.value("server_session_thread_cpu_seconds", -1.0);
  if (thread_s >= 0 && m.value("ops", 0.0) > 0) {
    row["measured"]["server_thread_us_per_op"] = thread_s * 1e6 / m.value("ops", 1.0);
    row["measured"]["server_thread_core_share"] = thread_s / m.value("seconds", 1.0);
  }
}

// One mode at one point, predicted `p`: its row in doc["rows"] (or
// ["pruned"]), its measured rate in *measured, *group_holds false where the
// model's assumptions do not hold. False when the signal stopped it.
bool MeasurePoint(LabRun& run, const Point& pt, const std::string& family,
                  const sim::ModePrediction& p, std::map<std::string, double>* measured,
                  bool* group_holds) {
  nlohmann::json row = {{"link", pt.link},
                        {"mode", family},
                        {"costs", p.mode},
                        {"op", pt.op.op},
                        {"size", pt.op.size},
                        {"iodepth", pt.depth.iodepth},
                        {"numjobs", pt.depth.numjobs},
                        {"connections", pt.depth.connections},
                        {"slots", pt.w.Outstanding()}};
  if (p.iops * kMaxSeconds < kMinOpsToRun) {
    row["why"] = common::Sprintf("predicted %.2f operations/s: fewer than %g in %g s", p.iops,
                                 kMinOpsToRun, kMaxSeconds);
    run.doc["pruned"].push_back(row);
    return true;
  }
  const double seconds = std::clamp(kTargetOps / p.iops, kMinSeconds, kMaxSeconds);
  const double warmup = std::clamp(0.3 + 3 * pt.rtt_us / 1e6, 0.3, 3.0);
  auto m = run.target.Load(family, pt.op, pt.depth, seconds, warmup);
  row["seconds"] = seconds;
  row["warmup"] = warmup;
  bool cpu_bound = JudgePrediction(p, pt, run.in.cpus, row);
  if (!m.ok() && run.Interrupted()) return false;  // stopped by the signal, not a failure
  if (!m.ok()) {
    row["error"] = m.status().ToString();
    run.doc["rows"].push_back(row);
    run.Say(pt.link + ": " + family + " " + pt.group + ": " + m.status().ToString());
    return true;
  }
  const double iops = m->value("ops_per_second", 0.0);
  (*measured)[family] = iops;
  // The machine's CPUs as measured during the point: nearly all
  // busy, the lab's shared CPUs (client, server, the kernel's TCP,
  // the delay lines, which a real network does not run on the
  // hosts) are the limit, which the model does not have.
  const double idle = m->value("idle_fraction", -1.0);
  if (!cpu_bound && idle >= 0 && idle < kLabMinIdle) {
    cpu_bound = true;
    row["assumptions_hold"] = false;
    row["why_not"] = common::Sprintf(
        "the machine's CPUs were %.0f%% busy during the point (measured): the lab's "
        "client, server, kernel TCP and delay lines share them; the model gives each "
        "end its own core and runs no delay line",
        (1 - idle) * 100);
  }
  if (cpu_bound) *group_holds = false;
  PutMeasured(*m, iops, row);
  const double ratio = p.iops > 0 ? iops / p.iops : 0;
  row["ratio"] = ratio;
  row["within_tolerance"] = std::fabs(ratio - 1) <= kLabTolerance;
  run.Say(pt.link + ": " + family + " " + pt.group + ": measured " +
          common::Sprintf("%.1f ops/s (%.2f MB/s), predicted %.1f (%s), ratio %.2f%s", iops,
                          m->value("mb_per_second", 0.0), p.iops, p.bottleneck.c_str(), ratio,
                          cpu_bound ? ", CPU-bound" : ""));
  run.doc["rows"].push_back(row);
  return true;
}

// The modes' order in one group: every pair the model separates by
// kLabOrderMargin, measured in the same order or not.
nlohmann::json OrderOf(const Point& pt,
                       const std::map<std::string, const sim::ModePrediction*>& by_family,
                       const std::map<std::string, double>& measured_rate, bool group_holds) {
  nlohmann::json pairs = nlohmann::json::array();
  bool agrees = true;
  for (const auto& [a, ra] : measured_rate) {
    for (const auto& [b, rb] : measured_rate) {
      const double pa = by_family.at(a)->iops, pb = by_family.at(b)->iops;
      if (pb <= 0 || pa < kLabOrderMargin * pb) continue;  // a not clearly above b
      const bool same = ra > rb;
      agrees = agrees && same;
      pairs.push_back({{"faster", a},
                       {"slower", b},
                       {"predicted_ratio", pa / pb},
                       {"measured_ratio", rb > 0 ? ra / rb : 0.0},
                       {"agrees", same}});
    }
  }
  return {{"link", pt.link},
          {"group", pt.group},
          {"pairs", pairs},
          {"agrees", agrees},
          {"assumptions_hold", group_holds}};
}

// Every mode at one op and depth on the link set up now (`spec`, its round
// trip measured `rtt_us`): the rows and the modes' order.
Status MeasureGroup(LabRun& run, const std::string& link, const LinkSpec& spec, double rtt_us,
                    const OpSpec& op, const DepthSpec& depth) {
  Point pt{link, rtt_us, {}, {}, op, depth, run.p.group(op, depth)};
  sim::Workload& w = pt.w;
  w.rw = std::string(op.op) == "read" ? sim::Rw::kRead : sim::Rw::kWrite;
  w.bs = op.size;
  w.iodepth = depth.iodepth;
  w.numjobs = depth.numjobs;
  w.engine = sim::EngineClass::kAsync;
  w.ioengine = "libaio";
  sim::Environment& env = pt.env;
  env.rtt_ns = static_cast<int64_t>(rtt_us * 1000);
  env.c2s_bytes_per_s = env.s2c_bytes_per_s = spec.bits_per_s / 8 * kFramePayloadShare;
  env.connections = depth.connections;
  env.slots = w.Outstanding();
  if (run.p.server_model) run.p.server_model(&env);
  env.client_cores = env.server_cores = run.in.cores_each;
  env.client = run.in.protocol.client;
  env.server = run.in.protocol.server;
  env.protocol_cost_source = run.in.protocol_cost_source;
  SECMODE_ASSIGN_OR_RETURN(auto preds, sim::PredictWorkload(w, env, run.in.baseline, run.in.legs));
  // preds: the baseline first, then `legs` in order; keep the asked families.
  std::map<std::string, const sim::ModePrediction*> by_family;
  by_family[run.p.baseline] = &preds[0];
  for (size_t i = 0; i < run.in.legs.size(); ++i) by_family[run.in.legs[i].mode] = &preds[i + 1];
  std::map<std::string, double> measured_rate;
  bool group_holds = true;  // the model's assumptions hold at every point of the group
  for (const std::string& family : run.in.families) {
    if (run.Interrupted()) break;
    if (!MeasurePoint(run, pt, family, *by_family.at(family), &measured_rate, &group_holds)) break;
  }
  if (measured_rate.size() >= 2) {
    run.doc["order"].push_back(OrderOf(pt, by_family, measured_rate, group_holds));
  }
  return Status::Ok();
}

// One link of the grid: set up and measured (the base link, the first,
// sets *base_ping_us), then every op and depth on it. A link that cannot be
// set up or measured is reported and skipped; the base link is needed by
// every other.
Status MeasureLink(LabRun& run, const Grid& grid, size_t li, double* base_ping_us) {
  const LinkSpec& spec = grid.links[li];
  lab::LabLink link;  // its name
  link.one_way_delay_ms = spec.rtt_ms / 2;
  link.shape = {spec.bits_per_s, spec.bits_per_s};
  const std::string name = link.Describe();
  Status set = run.target.SetLink(spec);
  auto ping = set.ok() ? run.target.PingUs(spec.rtt_ms) : Result<double>(set);
  if (!ping.ok()) {
    if (run.Interrupted()) return Status::Ok();
    if (li == 0) return ping.status().Annotate("the lab's undelayed, unshaped link");
    run.doc["links"].push_back({{"link", name}, {"error", ping.status().ToString()}});
    run.Say(name + ": " + ping.status().ToString() + "; its points are not run");
    return Status::Ok();
  }
  const double ping_us = *ping;
  if (li == 0) *base_ping_us = ping_us;
  const double rtt_us = li == 0 ? 0 : std::max(0.0, ping_us - *base_ping_us);
  run.doc["links"].push_back({{"link", name},
                              {"rtt_ms", spec.rtt_ms},
                              {"bits_per_s", spec.bits_per_s},
                              {"ping_p50_us", ping_us},
                              {"measured_rtt_ms", rtt_us / 1000}});
  run.Say(name + ": one request at a time " + common::Sprintf("%.0f", ping_us) +
          " us, round trip " + common::Sprintf("%.3f", rtt_us / 1000) + " ms");
  for (const OpSpec& op : grid.ops) {
    for (const DepthSpec& depth : grid.depths) {
      if (run.Interrupted()) break;
      SECMODE_RETURN_IF_ERROR(MeasureGroup(run, name, spec, rtt_us, op, depth));
    }
    if (run.interrupted) break;
  }
  return Status::Ok();
}

// doc["summary"]: the rows and order groups counted.
nlohmann::json Summary(const nlohmann::json& doc) {
  int points = 0, held = 0, within = 0, order_groups = 0, order_agree = 0, order_held = 0,
      order_held_agree = 0;
  for (const auto& r : doc["rows"]) {
    ++points;
    if (r.value("assumptions_hold", false)) {
      ++held;
      if (r.value("within_tolerance", false)) ++within;
    }
  }
  for (const auto& g : doc["order"]) {
    ++order_groups;
    if (g.value("agrees", false)) ++order_agree;
    if (g.value("assumptions_hold", false)) {
      ++order_held;
      if (g.value("agrees", false)) ++order_held_agree;
    }
  }
  return {{"points", points},
          {"assumptions_hold", held},
          {"within_tolerance_where_they_hold", within},
          {"pruned", doc["pruned"].size()},
          {"order_groups", order_groups},
          {"order_groups_agree", order_agree},
          {"order_groups_assumptions_hold", order_held},
          {"order_groups_agree_where_they_hold", order_held_agree}};
}

}  // namespace

std::string LabBaseline(LabProtocol protocol) { return ProtocolOf(protocol).baseline; }

std::string LabValidationUnavailableReason(LabProtocol protocol) {
  const std::string why = lab::LabUnavailableReason();
  if (!why.empty() || protocol == LabProtocol::kNfs) return why;
  const Status samba = smb::SambaDc::Available();
  return samba.ok() ? "" : std::string(samba.message());
}

Result<nlohmann::json> RunLabValidation(const harness::RunResults& run, gss::Realm* realm,
                                        const LabValidationOptions& o) {
  const Protocol& p = ProtocolOf(o.protocol);
  SECMODE_ASSIGN_OR_RETURN(const ModelInputs in, InputsFrom(run, p, o));
  SECMODE_ASSIGN_OR_RETURN(std::unique_ptr<Target> target, p.start(realm, o));
  const Grid grid = GridFor(o.grid, p);
  nlohmann::json doc = DocumentHead(p, o, in, *target);
  LabRun lab{p, o, in, *target, doc};
  double base_ping_us = 0;
  for (size_t li = 0; li < grid.links.size() && !lab.interrupted; ++li) {
    SECMODE_RETURN_IF_ERROR(MeasureLink(lab, grid, li, &base_ping_us));
  }
  doc["summary"] = Summary(doc);
  if (lab.interrupted) doc["interrupted"] = true;
  return doc;
}

}  // namespace secmode::suite
