#include "suite/smb_e2e_summary.h"

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "common/stats.h"
#include "harness/workload_inputs.h"
#include "sim/workload_model.h"

namespace secmode::suite {

namespace {

using Case = std::tuple<std::string, uint64_t, int>;  // op, size, channels

Case CaseOf(const nlohmann::json& run) {
  return {run.value("op", ""), run.value("size", uint64_t{0}), run.value("channels", 1)};
}

std::string FigureOf(const std::string& op) {
  return op == "metadata" ? "ops_per_second" : "mb_per_second";
}

// Each run's value of `key`.
std::vector<double> Values(const std::vector<const nlohmann::json*>& runs, const char* key) {
  std::vector<double> v;
  for (const nlohmann::json* r : runs) v.push_back(r->value(key, 0.0));
  return v;
}

// The median over the runs that measured it (>= 0) of `key` per answered
// operation, in us; absent (null) when none did.
nlohmann::json MedianUsPerOp(const std::vector<const nlohmann::json*>& runs, const char* key) {
  std::vector<double> v;
  for (const nlohmann::json* r : runs) {
    const double seconds = r->value(key, -1.0), ops = r->value("ops", 0.0);
    if (seconds >= 0 && ops > 0) v.push_back(seconds / ops * 1e6);
  }
  if (v.empty()) return nullptr;
  return common::Median(v);
}

uint64_t Sum(const std::vector<const nlohmann::json*>& runs, const char* key) {
  uint64_t total = 0;
  for (const nlohmann::json* r : runs) total += r->value(key, uint64_t{0});
  return total;
}

}  // namespace

nlohmann::json SummarizeSmbE2e(const nlohmann::json& runs,
                               const std::vector<harness::MicroRow>& micro, int logical_cpus) {
  nlohmann::json rows = nlohmann::json::array();
  if (!runs.is_array()) return rows;
  // Runs by mode and case, in order of first appearance (pointers into `runs`).
  // And smb-plain's run of each case and repetition, for the pairing.
  std::vector<std::pair<std::string, Case>> order;
  std::map<std::pair<std::string, Case>, std::vector<const nlohmann::json*>> by_row;
  std::map<std::pair<Case, int>, const nlohmann::json*> plain;
  for (const nlohmann::json& run : runs) {
    const auto key = std::make_pair(run.value("mode", ""), CaseOf(run));
    auto [it, inserted] = by_row.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.push_back(&run);
    if (key.first == "smb-plain") plain[{key.second, run.value("repetition", 0)}] = &run;
  }
  const auto plain_legs = harness::LegCostsFromMicro(micro, "smb-plain");

  for (const auto& key : order) {
    const std::vector<const nlohmann::json*>& rs = by_row[key];
    const std::string& mode = key.first;
    const auto& [op, size, channels] = key.second;
    const std::string figure = FigureOf(op);
    const common::Spread ops = common::Summarize(Values(rs, "ops_per_second"));
    const common::Spread mbs = common::Summarize(Values(rs, "mb_per_second"));
    nlohmann::json row = {{"mode", mode},
                          {"op", op},
                          {"size", size},
                          {"channels", channels},
                          {"outstanding", rs.front()->value("outstanding", 1)},
                          {"dialect", rs.front()->value("dialect", "")},
                          {"repetitions", rs.size()},
                          {"figure", figure},
                          {"ops_per_second", ops.median},
                          {"ops_per_second_range", {ops.min, ops.max}},
                          {"mb_per_second", mbs.median},
                          {"mb_per_second_range", {mbs.min, mbs.max}},
                          {"p50_us", common::Median(Values(rs, "p50_us"))},
                          {"p99_us", common::Median(Values(rs, "p99_us"))},
                          {"ops", Sum(rs, "ops")},
                          {"errors", Sum(rs, "errors")},
                          {"requests", Sum(rs, "requests")},
                          {"signed_requests", Sum(rs, "signed_requests")},
                          {"encrypted_requests", Sum(rs, "encrypted_requests")},
                          {"responses_verified", Sum(rs, "responses_verified")},
                          {"responses_decrypted", Sum(rs, "responses_decrypted")}};
    row["first_error"] = "";
    for (const nlohmann::json* r : rs) {
      if (!r->value("first_error", "").empty()) {
        row["first_error"] = r->value("first_error", "");
        break;
      }
    }
    nlohmann::json copies = nlohmann::json::array();
    for (const nlohmann::json* r : rs) copies.push_back(*r);
    row["runs"] = std::move(copies);
    // Where the CPU went, per operation: this process (the client), Samba's
    // threads (all, and the one serving the session) and that thread's
    // share of a core over the measured time.
    row["client_us_per_op"] = MedianUsPerOp(rs, "client_cpu_seconds");
    row["server_us_per_op"] = MedianUsPerOp(rs, "server_cpu_seconds");
    row["server_thread_us_per_op"] = MedianUsPerOp(rs, "server_session_thread_cpu_seconds");
    row["server_thread_system_us_per_op"] =
        MedianUsPerOp(rs, "server_session_thread_system_seconds");
    std::vector<double> shares;
    for (const nlohmann::json* r : rs) {
      const double busiest = r->value("server_session_thread_cpu_seconds", -1.0);
      const double seconds = r->value("seconds", 0.0);
      if (busiest >= 0 && seconds > 0) shares.push_back(busiest / seconds);
    }
    row["server_thread_core_share"] =
        shares.empty() ? nlohmann::json(nullptr) : nlohmann::json(common::Median(shares));
    if (mode == "smb-plain") {
      rows.push_back(std::move(row));
      continue;
    }

    // The change, paired by repetition.
    std::vector<double> changes;
    std::vector<std::pair<const nlohmann::json*, const nlohmann::json*>> pairs;  // mode, plain
    for (const nlohmann::json* r : rs) {
      const auto p = plain.find({key.second, r->value("repetition", 0)});
      if (p == plain.end()) continue;
      pairs.emplace_back(r, p->second);
      const double base = p->second->value(figure, 0.0);
      if (base > 0) changes.push_back(r->value(figure, 0.0) / base - 1);
    }
    if (!changes.empty()) {
      const common::Spread c = common::Summarize(changes);
      row["vs_plain"] = {{"median", c.median}, {"min", c.min}, {"max", c.max}, {"pairs", c.n}};
    }

    // What the crypto explains, pair by pair.
    auto skip = [&row](const std::string& why) { row["from_legs_skipped"] = why; };
    const auto legs = harness::LegCostsFromMicro(micro, mode);
    const int64_t call = op == "write" ? static_cast<int64_t>(size) : 0;
    const int64_t reply = op == "read" ? static_cast<int64_t>(size) : 0;
    std::vector<double> plain_cpu, mode_cpu, extra_cpu;
    bool idle_known = true;
    for (const auto& [m, p] : pairs) {
      const std::optional<double> cm = harness::BusyCpuNsPerCall(*m, logical_cpus);
      const std::optional<double> cp = harness::BusyCpuNsPerCall(*p, logical_cpus);
      if (!cm || !cp) {
        idle_known = false;
        break;
      }
      mode_cpu.push_back(*cm);
      plain_cpu.push_back(*cp);
      extra_cpu.push_back(*cm - *cp);
    }
    if (!plain_legs.ok()) {
      skip(std::string(plain_legs.status().message()));
    } else if (!legs.ok()) {
      skip(std::string(legs.status().message()));
    } else if (pairs.empty()) {
      skip("no smb-plain run of the same case");
    } else if (!idle_known) {
      skip("the machine's idle time was not measured");
    } else if (auto extra = sim::LegsExtraAt(*legs, *plain_legs, call, reply); !extra.ok()) {
      skip(std::string(extra.status().message()));
    } else {
      const double legs_extra = extra->client_ns + extra->server_ns;
      // Each run's busy CPU time spent at its smb-plain partner's CPU per
      // operation plus the legs' extra.
      std::vector<double> predicted, ratio;
      for (size_t i = 0; i < pairs.size(); ++i) {
        const double per_op = plain_cpu[i] + legs_extra;
        const double ops_i = pairs[i].first->value("ops_per_second", 0.0);
        const double p = per_op > 0 ? ops_i * mode_cpu[i] / per_op : 0;
        predicted.push_back(p);
        if (p > 0) ratio.push_back(ops_i / p);
      }
      const common::Spread e = common::Summarize(extra_cpu);
      nlohmann::json f = {{"call_payload", call},
                          {"reply_payload", reply},
                          {"pairs", pairs.size()},
                          {"plain_cpu_ns_per_op", common::Median(plain_cpu)},
                          {"measured_cpu_ns_per_op", common::Median(mode_cpu)},
                          {"extra_cpu_ns_per_op", e.median},
                          {"extra_cpu_ns_per_op_range", {e.min, e.max}},
                          {"legs_extra_ns", legs_extra},
                          {"predicted_ops_per_second", common::Median(predicted)},
                          {"measured_over_predicted", common::Median(ratio)}};
      // A share only of a growth every pair shows: where some pair used no
      // more CPU than smb-plain, the extra is within the runs' noise.
      f["crypto_share"] =
          e.min > 0 ? nlohmann::json(legs_extra / e.median) : nlohmann::json(nullptr);
      row["from_legs"] = std::move(f);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace secmode::suite
