#include "sim/explain.h"

#include <cmath>
#include <limits>

namespace secmode::sim {

using common::Result;
using common::Status;

namespace {

// Azure NetApp Files SMB figures (../shared/DESIGN.md): signing cut one
// connection's sequential read from 875 to about 250 MiB/s, client CPU
// bound; encryption costs 10-15% on read/write and 5% on metadata-heavy work.
constexpr const char* kSmbSource = "Azure NetApp Files, SMB";
constexpr double kSmbUnsignedMiBs = 875, kSmbSignedMiBs = 250;
constexpr double kSmbEncLow = 0.10, kSmbEncHigh = 0.15, kSmbEncMetadata = 0.05;

const LegCosts* Find(const std::vector<LegCosts>& modes, const std::string& mode) {
  for (const LegCosts& m : modes) {
    if (m.mode == mode) return &m;
  }
  return nullptr;
}

// ns of `leg` of `m` minus `plain`'s at `bytes`.
Result<double> Extra(const LegCosts& m, const LegCosts& plain, const char* leg, int64_t bytes) {
  auto a = m.legs.find(leg);
  auto b = plain.legs.find(leg);
  if (a == m.legs.end() || b == plain.legs.end()) {
    return Status::InvalidArgument(std::string("no measured cost of ") + leg + " for " +
                                   (a == m.legs.end() ? m.Label() : plain.Label()));
  }
  SECMODE_ASSIGN_OR_RETURN(double x, CostAt(a->second, bytes));
  SECMODE_ASSIGN_OR_RETURN(double y, CostAt(b->second, bytes));
  return x - y;
}

}  // namespace

std::vector<PublishedChange> PublishedNfsChanges() {
  const char* source = "Azure NetApp Files, NFSv4.1, AES-256";
  return {{source, "krb5", -53, 0.2}, {source, "krb5i", -55, 0.6}, {source, "krb5p", -77, 1.6}};
}

Result<nlohmann::json> ExplainNfs(const Workload& w, const Environment& env, const LegCosts& sys,
                                  const std::vector<LegCosts>& modes,
                                  const std::vector<PublishedChange>& published,
                                  double baseline_iops) {
  SECMODE_ASSIGN_OR_RETURN(std::vector<ModePrediction> predicted,
                           PredictWorkload(w, env, sys, modes));
  nlohmann::json rows = nlohmann::json::array();
  for (const PublishedChange& p : published) {
    const LegCosts* m = Find(modes, p.mode);
    if (m == nullptr) {
      return Status::InvalidArgument("no measured costs of " + p.mode + " to set beside " +
                                     p.source);
    }
    if (!(p.iops_change_pct < 0 && p.iops_change_pct > -100)) {
      return Status::InvalidArgument(p.mode +
                                     ": the published IOPS change must be a drop "
                                     "between 0 and -100%");
    }
    SECMODE_ASSIGN_OR_RETURN(LegsExtra extra, LegsExtraPerOp(w, *m, sys));
    const double f = -p.iops_change_pct / 100;
    const double path_us = (extra.client_ns + extra.server_ns) / 1e3;
    nlohmann::json row = {{"source", p.source},
                          {"mode", m->Label()},
                          {"published_iops_change_pct", p.iops_change_pct},
                          {"published_latency_change_ms", p.latency_change_ms},
                          {"crypto_client_us", extra.client_ns / 1e3},
                          {"crypto_server_us", extra.server_ns / 1e3},
                          {"crypto_path_us", path_us},
                          {"bottleneck_demand_factor", 1 / (1 - f)}};
    if (p.latency_change_ms > 0) {
      row["crypto_share_of_latency_change"] = path_us / (p.latency_change_ms * 1e3);
      row["implied_sys_latency_ms"] = p.latency_change_ms * (1 - f) / f;
    }
    for (const ModePrediction& mp : predicted) {
      if (mp.mode == m->Label()) row["model_iops_change_pct"] = mp.iops_change_pct;
    }
    if (baseline_iops > 0) {
      const double x1 = baseline_iops * (1 - f);
      const double stage_us = (1 / x1 - 1 / baseline_iops) * 1e6;
      row["published_iops"] = x1;
      row["serial_stage_extra_us"] = stage_us;
      row["crypto_share_of_serial_stage"] = extra.server_ns / 1e3 / stage_us;
      row["rest_of_serial_stage_us"] = stage_us - extra.server_ns / 1e3;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<nlohmann::json> ExplainSmb(const LegCosts& plain, const std::vector<LegCosts>& modes) {
  nlohmann::json rows = nlohmann::json::array();
  const double implied_ms_per_mib = (1 / kSmbSignedMiBs - 1 / kSmbUnsignedMiBs) * 1e3;
  int64_t smallest = std::numeric_limits<int64_t>::max();
  for (const auto& [leg, curve] : plain.legs) {
    if (!curve.empty()) smallest = std::min(smallest, curve.begin()->first);
  }
  for (const LegCosts& m : modes) {
    const bool sign = m.mode.rfind("smb-sign-", 0) == 0;
    const bool enc = m.mode.rfind("smb-enc-", 0) == 0;
    if (!sign && !enc) continue;
    // A read's reply: the client verifies (or decrypts) one MiB.
    SECMODE_ASSIGN_OR_RETURN(double open_ns, Extra(m, plain, "client-open", 1 << 20));
    const double ms_per_mib = open_ns / 1e6;  // 1 MiB = 1 << 20 bytes
    nlohmann::json row = {
        {"source", kSmbSource}, {"mode", m.mode}, {"client_extra_ms_per_mib", ms_per_mib}};
    if (sign) {
      row["published"] = "one connection's sequential read 875 -> 250 MiB/s, client CPU bound";
      row["implied_client_extra_ms_per_mib"] = implied_ms_per_mib;
      row["crypto_share"] = ms_per_mib / implied_ms_per_mib;
    } else {
      row["published"] = "10-15% of read/write throughput, 5% on metadata";
      // f = c T / (1 + c T) -> T = f / ((1 - f) c), c in s per MiB.
      const double c = ms_per_mib / 1e3;
      row["unencrypted_mib_per_s_for_10pct"] = kSmbEncLow / ((1 - kSmbEncLow) * c);
      row["unencrypted_mib_per_s_for_15pct"] = kSmbEncHigh / ((1 - kSmbEncHigh) * c);
      if (smallest != std::numeric_limits<int64_t>::max()) {
        SECMODE_ASSIGN_OR_RETURN(double s, Extra(m, plain, "client-seal", smallest));
        SECMODE_ASSIGN_OR_RETURN(double o, Extra(m, plain, "client-open", smallest));
        const double op_s = (s + o) / 1e9;
        row["metadata_bytes"] = smallest;
        row["metadata_client_extra_us"] = op_s * 1e6;
        row["unencrypted_ops_per_s_for_5pct"] = kSmbEncMetadata / ((1 - kSmbEncMetadata) * op_s);
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace secmode::sim
