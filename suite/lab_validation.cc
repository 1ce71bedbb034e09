#include "suite/lab_validation.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/format.h"
#include "common/machine.h"
#include "harness/workload_inputs.h"
#include "sim/workload.h"
#include "sim/workload_model.h"

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
struct DepthSpec {
  int iodepth, numjobs;
};
struct Grid {
  std::vector<LinkSpec> links;  // the first is the undelayed unshaped link (the base)
  std::vector<OpSpec> ops;
  std::vector<DepthSpec> depths;
};

Grid GridFor(LabGrid g) {
  switch (g) {
    case LabGrid::kQuick:
      return {{{0, 0}, {20, 1e9}, {2, 100e6}},
              {{"read", 4096}, {"write", 1u << 20}},
              {{1, 1}, {64, 1}}};
    case LabGrid::kDefault:
      return {{{0, 0}, {1, 0}, {20, 1e9}, {200, 100e6}},
              {{"read", 4096}, {"write", 1u << 20}},
              {{1, 1}, {64, 1}}};
    case LabGrid::kFull:
      break;
  }
  Grid full;
  for (double rtt : {0.0, 1.0, 20.0, 200.0}) {
    for (double bits : {0.0, 1e9, 100e6}) full.links.push_back({rtt, bits});
  }
  full.ops = {{"read", 4096}, {"write", 4096}, {"read", 1u << 20}, {"write", 1u << 20}};
  full.depths = {{1, 1}, {64, 1}, {1, 4}, {64, 4}};
  return full;
}

const char* GridName(LabGrid g) {
  switch (g) {
    case LabGrid::kQuick:
      return "quick";
    case LabGrid::kDefault:
      return "default";
    case LabGrid::kFull:
      return "full";
  }
  return "?";
}

constexpr double kTargetOps = 150;       // a point runs long enough for about this many
constexpr double kMinSeconds = 1.5, kMaxSeconds = 6;
constexpr double kMinOpsToRun = 10;      // predicted in kMaxSeconds, else pruned

// A one-slot sys GETATTR's median latency on the link as it is, in us.
Result<double> PingUs(lab::LabHosts& hosts, double rtt_ms) {
  lab::LabLoad l;
  l.mode = "sys";
  l.op = "getattr";
  l.size = 0;
  l.connections = 1;
  l.slots = 1;
  l.seconds = std::clamp(40 * rtt_ms / 1000, 1.0, 4.0);
  l.warmup = 0.2 + 2 * rtt_ms / 1000;
  SECMODE_ASSIGN_OR_RETURN(nlohmann::json j, hosts.Load(l));
  if (j.contains("failure")) {
    return Status::Unavailable("measuring the link's round trip: " + j["failure"].get<std::string>());
  }
  return j.value("p50_us", 0.0);
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

}  // namespace

Result<nlohmann::json> RunLabValidation(const harness::RunResults& run, gss::Realm* realm,
                                        const LabValidationOptions& o) {
  std::ostream* log = o.log;
  auto say = [&](const std::string& line) {
    if (log) *log << "lab: " << line << std::endl;
  };
  // The costs, all from the run.
  SECMODE_ASSIGN_OR_RETURN(sim::LegCosts sys, harness::LegCostsFromRun(run, "sys"));
  std::vector<std::string> families = o.families;
  if (families.empty()) {
    families.push_back("sys");
    for (const char* f : {"krb5", "krb5i", "krb5p"}) {
      if (harness::LegCostsFromRun(run, f, "native").ok()) families.push_back(f);
    }
  }
  std::vector<sim::LegCosts> legs;  // the families other than sys, in order
  for (const std::string& f : families) {
    if (f == "sys") continue;
    auto l = harness::LegCostsFromRun(run, f, "native");
    if (!l.ok()) return l.status().Annotate("the lab's " + f + " costs");
    legs.push_back(*l);
  }
  std::string cost_source;
  SECMODE_ASSIGN_OR_RETURN(harness::ProtocolCosts protocol,
                           harness::ProtocolCostsFromRun(run, "sys", &cost_source));
  // This machine's CPUs (the lab runs here, whatever machine made the
  // costs), halved; no end runs more than a thread per connection.
  const int cpus = std::max(1, common::LogicalCpus());
  const int cores_each = std::clamp(cpus / 2, 1, kLabConnections);

  lab::LabHostsOptions ho;
  ho.secmode_path = o.secmode_path;
  ho.engine = "native";
  SECMODE_ASSIGN_OR_RETURN(auto hosts, lab::LabHosts::Start(ho, realm));

  const Grid grid = GridFor(o.grid);
  nlohmann::json doc;
  doc["grid"] = GridName(o.grid);
  doc["rule"] = Rule();
  doc["model_inputs"] = {
      {"legs", "micro rows of " + o.cost_source + " (native engine), linear between measured sizes"},
      {"protocol_cpu", cost_source},
      {"round_trip", "measured on each link: a one-slot sys GETATTR's median latency minus the "
                     "same on the undelayed unshaped link"},
      {"link_rate", common::Sprintf("tbf rate x %.4f (TCP payload per 1514-byte frame)",
                                kFramePayloadShare)},
      {"cores", common::Sprintf("client %d, server %d (this machine's %d logical CPUs halved)",
                            cores_each, cores_each, cpus)},
      {"tcp_window", "none: the delay is added in user space, TCP does not see it"},
      {"server_window", ho.window},
      {"connections", kLabConnections}};
  doc["links"] = nlohmann::json::array();
  doc["rows"] = nlohmann::json::array();
  doc["pruned"] = nlohmann::json::array();
  doc["order"] = nlohmann::json::array();
  double base_ping_us = 0;
  bool interrupted = false;
  for (size_t li = 0; li < grid.links.size() && !interrupted; ++li) {
    const LinkSpec& spec = grid.links[li];
    lab::LabLink link;
    link.one_way_delay_ms = spec.rtt_ms / 2;
    link.shape = {spec.bits_per_s, spec.bits_per_s};
    const std::string name = link.Describe();
    // A link that cannot be set up or measured is reported and skipped;
    // the base link (the first) is needed by every other.
    Status set = hosts->SetLink(link);
    auto ping = set.ok() ? PingUs(*hosts, spec.rtt_ms) : Result<double>(set);
    if (!ping.ok()) {
      if (o.interrupt && o.interrupt->load() != 0) {
        interrupted = true;
        break;
      }
      if (li == 0) return ping.status().Annotate("the lab's undelayed, unshaped link");
      doc["links"].push_back({{"link", name}, {"error", ping.status().ToString()}});
      say(name + ": " + ping.status().ToString() + "; its points are not run");
      continue;
    }
    const double ping_us = *ping;
    if (li == 0) base_ping_us = ping_us;
    const double rtt_us = li == 0 ? 0 : std::max(0.0, ping_us - base_ping_us);
    doc["links"].push_back({{"link", name},
                            {"rtt_ms", spec.rtt_ms},
                            {"bits_per_s", spec.bits_per_s},
                            {"ping_p50_us", ping_us},
                            {"measured_rtt_ms", rtt_us / 1000}});
    say(name + ": one-slot GETATTR " + common::Sprintf("%.0f", ping_us) + " us, round trip " +
        common::Sprintf("%.3f", rtt_us / 1000) + " ms");
    for (const OpSpec& op : grid.ops) {
      for (const DepthSpec& depth : grid.depths) {
        if (o.interrupt && o.interrupt->load() != 0) {
          interrupted = true;
          break;
        }
        sim::Workload w;
        w.rw = std::string(op.op) == "read" ? sim::Rw::kRead : sim::Rw::kWrite;
        w.bs = op.size;
        w.iodepth = depth.iodepth;
        w.numjobs = depth.numjobs;
        w.engine = sim::EngineClass::kAsync;
        w.ioengine = "libaio";
        sim::Environment env;
        env.rtt_ns = static_cast<int64_t>(rtt_us * 1000);
        env.c2s_bytes_per_s = env.s2c_bytes_per_s = spec.bits_per_s / 8 * kFramePayloadShare;
        env.connections = kLabConnections;
        env.slots = w.Outstanding();
        env.client_cores = env.server_cores = cores_each;
        env.client = protocol.client;
        env.server = protocol.server;
        env.protocol_cost_source = cost_source;
        SECMODE_ASSIGN_OR_RETURN(auto preds, sim::PredictWorkload(w, env, sys, legs));
        // preds: sys first, then `legs` in order; keep the asked families.
        std::map<std::string, const sim::ModePrediction*> by_family;
        by_family["sys"] = &preds[0];
        for (size_t i = 0; i < legs.size(); ++i) by_family[legs[i].mode] = &preds[i + 1];
        std::map<std::string, double> measured_rate;
        const std::string group = common::Sprintf("%s %u B qd%dx%d", op.op, op.size, depth.iodepth,
                                              depth.numjobs);
        for (const std::string& family : families) {
          if (o.interrupt && o.interrupt->load() != 0) {
            interrupted = true;
            break;
          }
          const sim::ModePrediction& p = *by_family.at(family);
          nlohmann::json row = {{"link", name},     {"mode", family},
                                {"costs", p.mode},  {"op", op.op},
                                {"size", op.size},  {"iodepth", depth.iodepth},
                                {"numjobs", depth.numjobs},
                                {"slots", w.Outstanding()}};
          if (p.iops * kMaxSeconds < kMinOpsToRun) {
            row["why"] = common::Sprintf("predicted %.2f operations/s: fewer than %g in %g s", p.iops,
                                     kMinOpsToRun, kMaxSeconds);
            doc["pruned"].push_back(row);
            continue;
          }
          lab::LabLoad l;
          l.mode = family;
          l.op = op.op;
          l.size = op.size;
          l.connections = kLabConnections;
          l.slots = static_cast<int>(w.Outstanding());
          l.seconds = std::clamp(kTargetOps / p.iops, kMinSeconds, kMaxSeconds);
          l.warmup = std::clamp(0.3 + 3 * rtt_us / 1e6, 0.3, 3.0);
          auto m = hosts->Load(l);
          row["seconds"] = l.seconds;
          row["warmup"] = l.warmup;
          // How much of one operation's time (its demands at every station)
          // is CPU: where it is small, the costs hardly decide the point.
          double cpu_s = 0, all_s = 0;
          for (const sim::Station& st : p.stations) {
            all_s += st.demand_s;
            if (st.name.find("CPU") != std::string::npos) cpu_s += st.demand_s;
          }
          const double cpu_share = all_s > 0 ? cpu_s / all_s : 0.0;
          row["predicted"] = {{"iops", p.iops},
                              {"mb_per_s", p.mb_per_s},
                              {"mean_latency_ms", p.mean_latency_s * 1e3},
                              {"bottleneck", p.bottleneck},
                              {"cpu_share", cpu_share}};
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
          bool cpu_bound = (top_use >= 0.5 && top_station.find("CPU") != std::string::npos) ||
                           cpu_share >= 0.5;
          row["assumptions_hold"] = !cpu_bound;
          if (cpu_bound && w.Outstanding() == 1 && env.rtt_ns == 0) {
            row["why_not"] =
                "one call at a time with no delay: its round trip is both ends' wakeups and the "
                "kernel's TCP path, which the per-op CPU (measured with 64 calls in flight, in "
                "batches) leaves out";
          } else if (cpu_bound) {
            row["why_not"] = common::Sprintf(
                "CPU-bound (%s %.0f%% busy, %.0f%% of an operation's time CPU): the model gives "
                "each end its own core; here they share the machine's %d",
                top_station.c_str(), top_use * 100, cpu_share * 100, cpus);
          }
          if (!m.ok() && o.interrupt && o.interrupt->load() != 0) {
            interrupted = true;  // stopped by the signal, not a failure of the point
            break;
          }
          if (!m.ok()) {
            row["error"] = m.status().ToString();
            doc["rows"].push_back(row);
            say(name + ": " + family + " " + group + ": " + m.status().ToString());
            continue;
          }
          const double iops = m->value("ops_per_second", 0.0);
          measured_rate[family] = iops;
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
          row["measured"] = {{"iops", iops},
                             {"mb_per_s", m->value("mb_per_second", 0.0)},
                             {"p50_ms", m->value("p50_us", 0.0) / 1e3},
                             {"p99_ms", m->value("p99_us", 0.0) / 1e3},
                             {"ops", m->value("ops", 0)},
                             {"idle_fraction", m->value("idle_fraction", -1.0)},
                             // CPU of the client's delay-line threads (the emulated
                             // round trip) per call they wrote: the holding, which a
                             // real network does not put on the host, and the write's
                             // system call, which the client would make anyway.
                             {"delay_line_cpu_us_per_call",
                              m->value("sender_calls", 0) > 0
                                  ? m->value("sender_cpu_ns", 0.0) / 1e3 /
                                        m->value("sender_calls", 1.0)
                                  : 0.0},
                             {"retransmits", m->value("retransmits", 0)},
                             {"errors", m->value("errors", 0)}};
          if (m->contains("failure")) row["measured"]["failure"] = (*m)["failure"];
          const double ratio = p.iops > 0 ? iops / p.iops : 0;
          row["ratio"] = ratio;
          row["within_tolerance"] = std::fabs(ratio - 1) <= kLabTolerance;
          say(name + ": " + family + " " + group + ": measured " +
              common::Sprintf("%.1f ops/s (%.2f MB/s), predicted %.1f (%s), ratio %.2f%s", iops,
                          m->value("mb_per_second", 0.0), p.iops, p.bottleneck.c_str(), ratio,
                          cpu_bound ? ", CPU-bound" : ""));
          doc["rows"].push_back(row);
        }
        // The modes' order in this group.
        if (measured_rate.size() >= 2) {
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
          doc["order"].push_back(
              {{"link", name}, {"group", group}, {"pairs", pairs}, {"agrees", agrees}});
        }
      }
      if (interrupted) break;
    }
  }
  int points = 0, held = 0, within = 0, order_groups = 0, order_agree = 0;
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
  }
  doc["summary"] = {{"points", points},
                    {"assumptions_hold", held},
                    {"within_tolerance_where_they_hold", within},
                    {"pruned", doc["pruned"].size()},
                    {"order_groups", order_groups},
                    {"order_groups_agree", order_agree}};
  if (interrupted) doc["interrupted"] = true;
  return doc;
}

}  // namespace secmode::suite
