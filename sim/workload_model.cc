#include "sim/workload_model.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "sim/scenario.h"

namespace secmode::sim {

using common::Result;
using common::Status;

namespace {

// The mode's cost of `leg` minus sys's at `payload` bytes (the smallest
// measured size when the message carries none).
Result<double> ExtraNs(const LegCosts& mode, const LegCosts& sys, const std::string& leg,
                       int64_t payload) {
  auto m = mode.legs.find(leg);
  auto s = sys.legs.find(leg);
  if (m == mode.legs.end() || m->second.empty()) {
    return Status::InvalidArgument("no measured cost of " + leg + " for " + mode.Label());
  }
  if (s == sys.legs.end() || s->second.empty()) {
    return Status::InvalidArgument("no measured cost of " + leg + " for " + sys.Label());
  }
  SECMODE_ASSIGN_OR_RETURN(double mv, CostAt(m->second, payload));
  SECMODE_ASSIGN_OR_RETURN(double sv, CostAt(s->second, payload));
  return mv - sv;
}

// One kind of operation (read, write or metadata) at the job's size.
struct OpDemand {
  double client_ns = 0, server_ns = 0, call_bytes = 0, reply_bytes = 0;
};

Result<OpDemand> Demand(const Workload& w, const Environment& env, const LegCosts& mode,
                        const LegCosts& sys, const char* op) {
  const std::string kind(op);
  const int64_t call_payload = kind == "write" ? w.bs : 0;
  const int64_t reply_payload = kind == "read" ? w.bs : 0;
  const int64_t size = kind == "metadata" ? 0 : w.bs;
  const CostCurve& client = kind == "read"    ? env.client.read
                            : kind == "write" ? env.client.write
                                              : env.client.metadata;
  const CostCurve& server = kind == "read"    ? env.server.read
                            : kind == "write" ? env.server.write
                                              : env.server.metadata;
  OpDemand d;
  // One measured size says nothing of how the cost grows with the size.
  for (const CostCurve* c : {&client, &server}) {
    if (c->size() == 1 && c->begin()->first != 0 && c->begin()->first != size) {
      return Status::InvalidArgument("the protocol's own cost of " + kind +
                                     " was measured at " + std::to_string(c->begin()->first) +
                                     " bytes only, not at " + std::to_string(size));
    }
  }
  auto base = CostAt(client, size);
  if (!base.ok()) return base.status().Annotate("client protocol cost of " + kind);
  d.client_ns = *base;
  base = CostAt(server, size);
  if (!base.ok()) return base.status().Annotate("server protocol cost of " + kind);
  d.server_ns = *base;
  if (mode.mode != sys.mode) {
    SECMODE_ASSIGN_OR_RETURN(LegsExtra extra, LegsExtraAt(mode, sys, call_payload, reply_payload));
    d.client_ns += extra.client_ns;
    d.server_ns += extra.server_ns;
  }
  d.client_ns = std::max(0.0, d.client_ns);
  d.server_ns = std::max(0.0, d.server_ns);
  d.call_bytes = static_cast<double>(mode.wire.call + call_payload);
  d.reply_bytes = static_cast<double>(mode.wire.reply + reply_payload);
  return d;
}

Result<ModePrediction> PredictOne(const Workload& w, const Environment& env, const LegCosts& mode,
                                  const LegCosts& sys) {
  OpDemand d;
  if (w.IsMetadata()) {
    SECMODE_ASSIGN_OR_RETURN(d, Demand(w, env, mode, sys, "metadata"));
  } else {
    const double p = w.ReadShare();
    OpDemand r, wr;
    if (p > 0) {
      SECMODE_ASSIGN_OR_RETURN(r, Demand(w, env, mode, sys, "read"));
    }
    if (p < 1) {
      SECMODE_ASSIGN_OR_RETURN(wr, Demand(w, env, mode, sys, "write"));
    }
    d.client_ns = p * r.client_ns + (1 - p) * wr.client_ns;
    d.server_ns = p * r.server_ns + (1 - p) * wr.server_ns;
    d.call_bytes = p * r.call_bytes + (1 - p) * wr.call_bytes;
    d.reply_bytes = p * r.reply_bytes + (1 - p) * wr.reply_bytes;
  }
  ModePrediction out;
  out.mode = mode.Label();
  out.stations.push_back({"client CPU", d.client_ns * 1e-9, env.client_cores, false});
  if (env.c2s_bytes_per_s > 0) {
    out.stations.push_back({"link c->s", d.call_bytes / env.c2s_bytes_per_s, 1, false});
  }
  const int server_servers =
      env.server_threads > 0 ? std::min(env.server_cores, env.server_threads) : env.server_cores;
  out.stations.push_back({"server CPU", d.server_ns * 1e-9, server_servers, false});
  if (env.s2c_bytes_per_s > 0) {
    out.stations.push_back({"link s->c", d.reply_bytes / env.s2c_bytes_per_s, 1, false});
  }
  if (env.storage_ns > 0) {
    out.stations.push_back({"storage", static_cast<double>(env.storage_ns) * 1e-9, 1, true});
  }
  if (env.rtt_ns > 0) {
    out.stations.push_back({"network round trip", static_cast<double>(env.rtt_ns) * 1e-9, 1, true});
  }
  const int64_t outstanding = w.Outstanding();
  const int64_t on_wire = std::min(outstanding, env.slots);
  const MvaResult m = SolveClosedMva(out.stations, on_wire);
  double x = m.throughput;
  out.utilisation = m.utilisation;
  // Each connection carries at most a TCP window per round trip each way.
  if (env.tcp_window_bytes > 0 && env.rtt_ns > 0) {
    const double per_direction = static_cast<double>(env.connections) *
                                 static_cast<double>(env.tcp_window_bytes) /
                                 (static_cast<double>(env.rtt_ns) * 1e-9);
    const double cap = std::min(per_direction / d.call_bytes, per_direction / d.reply_bytes);
    if (cap < x) {
      const double scale = cap / x;
      for (double& u : out.utilisation) u *= scale;
      x = cap;
      out.tcp_window_limited = true;
    }
  }
  out.iops = x;
  out.mb_per_s = w.IsMetadata() ? 0 : x * static_cast<double>(w.bs) / 1e6;
  // Little's law over every I/O in flight: those waiting for a slot too.
  out.mean_latency_s = x > 0 ? static_cast<double>(outstanding) / x : 0;
  double fixed = 0;  // one operation's service and delays, nothing waited for
  for (const Station& s : out.stations) fixed += s.demand_s;
  const double queueing = std::max(0.0, out.mean_latency_s - fixed);
  out.p99_latency_s = fixed + queueing * std::log(100.0);
  // The bottleneck: the most utilised station.
  size_t top = out.stations.size();
  for (size_t i = 0; i < out.stations.size(); ++i) {
    if (out.stations[i].delay) continue;
    if (top == out.stations.size() || out.utilisation[i] > out.utilisation[top]) top = i;
  }
  if (out.tcp_window_limited) {
    out.bottleneck = "tcp window";
  } else if (top < out.stations.size() && out.utilisation[top] >= 0.5) {
    out.bottleneck = out.stations[top].name;
  } else {
    out.bottleneck = "latency";
  }
  return out;
}

double Interpolate(int64_t x0, double y0, int64_t x1, double y1, int64_t x) {
  if (x1 == x0) return y0;
  return y0 + (y1 - y0) * static_cast<double>(x - x0) / static_cast<double>(x1 - x0);
}

}  // namespace

Result<LegsExtra> LegsExtraAt(const LegCosts& mode, const LegCosts& sys, int64_t call_payload,
                              int64_t reply_payload) {
  SECMODE_ASSIGN_OR_RETURN(double cs, ExtraNs(mode, sys, "client-seal", call_payload));
  SECMODE_ASSIGN_OR_RETURN(double co, ExtraNs(mode, sys, "client-open", reply_payload));
  SECMODE_ASSIGN_OR_RETURN(double so, ExtraNs(mode, sys, "server-open", call_payload));
  SECMODE_ASSIGN_OR_RETURN(double ss, ExtraNs(mode, sys, "server-seal", reply_payload));
  return LegsExtra{cs + co, so + ss};
}

Result<LegsExtra> LegsExtraPerOp(const Workload& w, const LegCosts& mode, const LegCosts& sys) {
  if (w.IsMetadata()) return LegsExtraAt(mode, sys, 0, 0);
  LegsExtra out;
  const double p = w.ReadShare();
  if (p > 0) {
    SECMODE_ASSIGN_OR_RETURN(LegsExtra r, LegsExtraAt(mode, sys, 0, w.bs));
    out.client_ns += p * r.client_ns;
    out.server_ns += p * r.server_ns;
  }
  if (p < 1) {
    SECMODE_ASSIGN_OR_RETURN(LegsExtra wr, LegsExtraAt(mode, sys, w.bs, 0));
    out.client_ns += (1 - p) * wr.client_ns;
    out.server_ns += (1 - p) * wr.server_ns;
  }
  return out;
}

Result<double> CostAt(const CostCurve& curve, int64_t bytes) {
  if (curve.empty()) return Status::InvalidArgument("no measured cost");
  auto hi = curve.lower_bound(bytes);
  if (hi == curve.begin()) return hi->second;  // at or below the smallest size
  if (hi != curve.end() && hi->first == bytes) return hi->second;
  if (hi == curve.end()) {  // beyond the largest: the last two sizes' slope
    auto last = std::prev(curve.end());
    if (last == curve.begin()) return last->second;
    auto before = std::prev(last);
    return Interpolate(before->first, before->second, last->first, last->second, bytes);
  }
  auto lo = std::prev(hi);
  return Interpolate(lo->first, lo->second, hi->first, hi->second, bytes);
}

std::string LegCosts::Label() const {
  if (mode == "sys" || enctype.empty()) return mode;
  return mode + ":" + enctype + ":" + engine;
}

bool IsSmbMode(const std::string& mode) { return mode.rfind("smb-", 0) == 0; }

std::string BaselineOf(const std::string& mode) { return IsSmbMode(mode) ? "smb-plain" : "sys"; }

Status Environment::Validate() const {
  if (rtt_ns < 0) return Status::InvalidArgument("rtt must not be negative");
  if (!(c2s_bytes_per_s >= 0) || !(s2c_bytes_per_s >= 0)) {
    return Status::InvalidArgument("bandwidth must not be negative");
  }
  if (connections < 1) return Status::InvalidArgument("connections must be at least 1");
  if (slots < 1 || slots > kMaxModelSlots) {
    return Status::InvalidArgument("slots must be 1 to " + std::to_string(kMaxModelSlots));
  }
  if (client_cores < 1) return Status::InvalidArgument("client cores must be at least 1");
  if (server_cores < 1) return Status::InvalidArgument("server cores must be at least 1");
  if (server_threads < 0) return Status::InvalidArgument("server threads must not be negative");
  if (storage_ns < 0) return Status::InvalidArgument("storage latency must not be negative");
  if (tcp_window_bytes < 0) return Status::InvalidArgument("tcp window must not be negative");
  return Status::Ok();
}

nlohmann::json Environment::ToJson() const {
  return {{"rtt_ms", static_cast<double>(rtt_ns) / 1e6},
          {"c2s_bytes_per_s", c2s_bytes_per_s},
          {"s2c_bytes_per_s", s2c_bytes_per_s},
          {"connections", connections},
          {"slots", slots},
          {"client_cores", client_cores},
          {"server_cores", server_cores},
          {"server_threads", server_threads},
          {"storage_ms", static_cast<double>(storage_ns) / 1e6},
          {"tcp_window_bytes", tcp_window_bytes},
          {"protocol_cost_source", protocol_cost_source}};
}

MvaResult SolveClosedMva(const std::vector<Station>& stations, int64_t customers) {
  // Seidmann: a c-server station is a queue of D/c and a delay of D(c-1)/c.
  std::vector<double> queue_d(stations.size()), delay_d(stations.size());
  for (size_t k = 0; k < stations.size(); ++k) {
    const Station& s = stations[k];
    const double c = std::max(1, s.servers);
    if (s.delay) {
      delay_d[k] = s.demand_s;
    } else {
      queue_d[k] = s.demand_s / c;
      delay_d[k] = s.demand_s * (c - 1) / c;
    }
  }
  MvaResult r;
  r.residence_s.assign(stations.size(), 0);
  r.utilisation.assign(stations.size(), 0);
  std::vector<double> q(stations.size(), 0);
  for (int64_t n = 1; n <= std::max<int64_t>(1, customers); ++n) {
    double total = 0;
    for (size_t k = 0; k < stations.size(); ++k) {
      r.residence_s[k] = delay_d[k] + queue_d[k] * (1 + q[k]);
      total += r.residence_s[k];
    }
    r.throughput = total > 0 ? static_cast<double>(n) / total : 0;
    r.response_s = total;
    // Customers at the queue part (the delay part never waits).
    for (size_t k = 0; k < stations.size(); ++k) q[k] = r.throughput * queue_d[k] * (1 + q[k]);
  }
  for (size_t k = 0; k < stations.size(); ++k) {
    if (!stations[k].delay) {
      r.utilisation[k] = r.throughput * stations[k].demand_s / std::max(1, stations[k].servers);
    }
  }
  return r;
}

nlohmann::json ModePrediction::ToJson() const {
  nlohmann::json demands = nlohmann::json::object(), util = nlohmann::json::object();
  for (size_t i = 0; i < stations.size(); ++i) {
    demands[stations[i].name] = stations[i].demand_s * 1e6;
    if (!stations[i].delay) util[stations[i].name] = utilisation[i];
  }
  return {{"mode", mode},
          {"iops", iops},
          {"mb_per_s", mb_per_s},
          {"mean_latency_ms", mean_latency_s * 1e3},
          {"p99_latency_ms_estimate", p99_latency_s * 1e3},
          {"bottleneck", bottleneck},
          {"tcp_window_limited", tcp_window_limited},
          {"iops_change_pct", iops_change_pct},
          {"latency_change_ms", latency_change_ms},
          {"demand_us", demands},
          {"utilisation", util}};
}

Result<std::vector<ModePrediction>> PredictWorkload(const Workload& w, const Environment& env,
                                                    const LegCosts& sys,
                                                    const std::vector<LegCosts>& modes) {
  SECMODE_RETURN_IF_ERROR(w.Validate());
  SECMODE_RETURN_IF_ERROR(env.Validate());
  if (sys.mode != BaselineOf(sys.mode)) {
    return Status::InvalidArgument("the baseline must be sys or smb-plain, not " + sys.mode);
  }
  for (const LegCosts& m : modes) {
    if (BaselineOf(m.mode) != sys.mode) {
      return Status::InvalidArgument("mode " + m.mode + " is taken against " +
                                     BaselineOf(m.mode) + ", not " + sys.mode +
                                     ": predict NFS and SMB modes apart");
    }
  }
  std::vector<ModePrediction> out;
  SECMODE_ASSIGN_OR_RETURN(ModePrediction base, PredictOne(w, env, sys, sys));
  out.push_back(base);
  for (const LegCosts& m : modes) {
    if (m.mode == sys.mode) continue;
    auto p = PredictOne(w, env, m, sys);
    if (!p.ok()) return p.status().Annotate(m.Label());
    p->iops_change_pct = base.iops > 0 ? (p->iops / base.iops - 1) * 100 : 0;
    p->latency_change_ms = (p->mean_latency_s - base.mean_latency_s) * 1e3;
    out.push_back(*p);
  }
  return out;
}

}  // namespace secmode::sim
