#include "suite/smb_e2e_summary.h"

#include <algorithm>
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

uint64_t Sum(const std::vector<const nlohmann::json*>& runs, const char* key) {
  uint64_t total = 0;
  for (const nlohmann::json* r : runs) total += r->value(key, uint64_t{0});
  return total;
}

// The median busy CPU per operation of `runs`; nothing when any lacks it.
std::optional<double> MedianBusyCpu(const std::vector<const nlohmann::json*>& runs, int cpus) {
  std::vector<double> v;
  for (const nlohmann::json* r : runs) {
    const std::optional<double> cpu = harness::BusyCpuNsPerCall(*r, cpus);
    if (!cpu) return std::nullopt;
    v.push_back(*cpu);
  }
  if (v.empty()) return std::nullopt;
  return common::Median(v);
}

}  // namespace

nlohmann::json SummarizeSmbE2e(const nlohmann::json& runs,
                               const std::vector<harness::MicroRow>& micro, int logical_cpus) {
  nlohmann::json rows = nlohmann::json::array();
  if (!runs.is_array()) return rows;
  // Runs by mode and case, in order of first appearance (pointers into `runs`).
  std::vector<std::pair<std::string, Case>> order;
  std::map<std::pair<std::string, Case>, std::vector<const nlohmann::json*>> by_row;
  for (const nlohmann::json& run : runs) {
    const auto key = std::make_pair(run.value("mode", ""), CaseOf(run));
    auto [it, inserted] = by_row.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.push_back(&run);
  }
  // smb-plain's run of each case and repetition, for the pairing.
  std::map<std::pair<Case, int>, const nlohmann::json*> plain;
  for (const nlohmann::json& run : runs) {
    if (run.value("mode", "") == "smb-plain") {
      plain[{CaseOf(run), run.value("repetition", 0)}] = &run;
    }
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
    if (mode == "smb-plain") {
      rows.push_back(std::move(row));
      continue;
    }

    // The change, paired by repetition.
    std::vector<double> changes;
    std::vector<const nlohmann::json*> plain_runs;
    for (const nlohmann::json* r : rs) {
      const auto p = plain.find({key.second, r->value("repetition", 0)});
      if (p == plain.end()) continue;
      plain_runs.push_back(p->second);
      const double base = p->second->value(figure, 0.0);
      if (base > 0) changes.push_back(r->value(figure, 0.0) / base - 1);
    }
    if (!changes.empty()) {
      const common::Spread c = common::Summarize(changes);
      row["vs_plain"] = {{"median", c.median}, {"min", c.min}, {"max", c.max}, {"pairs", c.n}};
    }

    // What the crypto explains.
    auto skip = [&row](const std::string& why) { row["from_legs_skipped"] = why; };
    const auto legs = harness::LegCostsFromMicro(micro, mode);
    const std::optional<double> plain_cpu = MedianBusyCpu(plain_runs, logical_cpus);
    const std::optional<double> measured_cpu = MedianBusyCpu(rs, logical_cpus);
    const int64_t call = op == "write" ? static_cast<int64_t>(size) : 0;
    const int64_t reply = op == "read" ? static_cast<int64_t>(size) : 0;
    if (!plain_legs.ok()) {
      skip(std::string(plain_legs.status().message()));
    } else if (!legs.ok()) {
      skip(std::string(legs.status().message()));
    } else if (plain_runs.empty()) {
      skip("no smb-plain run of the same case");
    } else if (!plain_cpu || !measured_cpu) {
      skip("the machine's idle time was not measured");
    } else if (auto extra = sim::LegsExtraAt(*legs, *plain_legs, call, reply); !extra.ok()) {
      skip(std::string(extra.status().message()));
    } else {
      const double legs_extra = extra->client_ns + extra->server_ns;
      const double end_to_end_extra = *measured_cpu - *plain_cpu;
      const double predicted_cpu = *plain_cpu + legs_extra;
      // The row's busy CPU time spent at the predicted cost per operation.
      const double predicted_ops =
          predicted_cpu > 0 ? ops.median * *measured_cpu / predicted_cpu : 0;
      nlohmann::json f = {{"call_payload", call},
                          {"reply_payload", reply},
                          {"plain_cpu_ns_per_op", *plain_cpu},
                          {"measured_cpu_ns_per_op", *measured_cpu},
                          {"extra_cpu_ns_per_op", end_to_end_extra},
                          {"legs_extra_ns", legs_extra},
                          {"predicted_ops_per_second", predicted_ops},
                          {"measured_over_predicted",
                           predicted_ops > 0 ? ops.median / predicted_ops : 0.0}};
      // A share only of a growth: with no extra CPU end to end there is
      // nothing for the crypto to explain.
      f["crypto_share"] = end_to_end_extra > 0 ? nlohmann::json(legs_extra / end_to_end_extra)
                                               : nlohmann::json(nullptr);
      row["from_legs"] = std::move(f);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace secmode::suite
