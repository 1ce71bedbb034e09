#include "suite/e2e_from_legs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/workload_inputs.h"
#include "sim/workload_model.h"

namespace secmode::suite {

namespace {

std::string LoadKey(const nlohmann::json& row) {
  return row.value("op", "") + "/" + std::to_string(row.value("size", 0u)) + "/" +
         std::to_string(row.value("connections", 0)) + "x" + std::to_string(row.value("slots", 0));
}

}  // namespace

LegsPrediction PredictE2eFromLegs(const std::vector<harness::MicroRow>& micro,
                                  const nlohmann::json& e2e, int logical_cpus) {
  LegsPrediction out;
  auto sys_legs = harness::LegCostsFromMicro(micro, "sys");
  if (!e2e.is_array()) return out;

  std::map<std::string, const nlohmann::json*> sys_rows;  // load key -> sys row
  for (const auto& row : e2e) {
    if (row.value("mode", "") == "sys" &&
        row.value("server", std::string("secmode")) == "secmode") {
      sys_rows.emplace(LoadKey(row), &row);
    }
  }
  auto skip = [&](const nlohmann::json& row, const std::string& why) {
    out.skipped.push_back({{"mode", row.value("mode", "")},
                           {"engine", row.value("engine", "")},
                           {"op", row.value("op", "")},
                           {"size", row.value("size", 0u)},
                           {"reason", why}});
  };
  for (const auto& row : e2e) {
    const std::string mode = row.value("mode", "");
    if (mode == "sys" || row.value("server", std::string("secmode")) != "secmode") continue;
    if (row.value("connections", 0) <= 1 && row.value("slots", 0) <= 1) continue;  // latency-bound
    if (!sys_legs.ok()) {
      skip(row, sys_legs.status().message());
      continue;
    }
    auto sys = sys_rows.find(LoadKey(row));
    if (sys == sys_rows.end()) {
      skip(row, "no sys row with the same op, size and load");
      continue;
    }
    // The sys row's runs (itself and its repeats): their median CPU per call.
    const std::optional<harness::CpuOverRuns> sys_runs =
        harness::MedianCpuNsPerCall(*sys->second, logical_cpus);
    // The row's own figure is its median run's (suite/section_e2e.cc).
    const std::optional<double> measured_cpu = harness::BusyCpuNsPerCall(row, logical_cpus);
    const std::optional<harness::CpuOverRuns> row_runs =
        harness::MedianCpuNsPerCall(row, logical_cpus);
    if (!sys_runs || !measured_cpu || !row_runs) {
      skip(row, "the machine's idle time was not measured");
      continue;
    }
    const std::string op = row.value("op", ""), engine = row.value("engine", ""),
                      enctype = row.value("enctype", "");
    const size_t size = row.value("size", 0u);
    // The payload each message carries: a WRITE's call, a READ's reply.
    const size_t call_size = op == "write" ? size : 0;
    const size_t reply_size = op == "read" ? size : 0;
    auto legs = harness::LegCostsFromMicro(micro, mode, engine, enctype);
    if (!legs.ok()) {
      skip(row, legs.status().message());
      continue;
    }
    auto legs_extra = sim::LegsExtraAt(*legs, *sys_legs, static_cast<int64_t>(call_size),
                                       static_cast<int64_t>(reply_size));
    if (!legs_extra.ok()) {
      skip(row, legs_extra.status().message());
      continue;
    }
    const double extra = legs_extra->client_ns + legs_extra->server_ns;
    const double predicted_cpu = sys_runs->median_ns + extra;
    const double busy_cpu_ns = *measured_cpu * row.value("ops", 0.0);
    const double seconds = row.value("seconds", 0.0);
    const double predicted_ops = predicted_cpu > 0 ? busy_cpu_ns / predicted_cpu / seconds : 0;
    const double measured_ops = row.value("ops_per_second", 0.0);
    const double ratio = predicted_ops > 0 ? measured_ops / predicted_ops : 0;
    // A control run of the same load (row.wide_window: a server whose window
    // dropped nothing; row.context_per_connection: also no context shared,
    // so no call waited for another connection's crypto), predicted from its
    // own busy CPU time.
    auto control = [&](const char* key) -> std::optional<nlohmann::json> {
      if (!row.contains(key) || !row[key].is_object()) return std::nullopt;
      const nlohmann::json& w = row[key];
      const std::optional<double> cpu = harness::BusyCpuNsPerCall(w, logical_cpus);
      const std::optional<harness::CpuOverRuns> runs = harness::MedianCpuNsPerCall(w, logical_cpus);
      const double w_seconds = w.value("seconds", 0.0);
      if (!cpu || !runs || w_seconds <= 0 || predicted_cpu <= 0) return std::nullopt;
      const double w_predicted = *cpu * w.value("ops", 0.0) / predicted_cpu / w_seconds;
      const double w_measured = w.value("ops_per_second", 0.0);
      const double w_ratio = w_predicted > 0 ? w_measured / w_predicted : 0;
      return nlohmann::json{{"window", w.value("window", 0u)},
                            {"server_window_drops", w.value("server_window_drops", 0u)},
                            {"measured_cpu_ns_per_call", *cpu},
                            {"runs", runs->runs},
                            {"measured_cpu_ns_per_call_range", {runs->min_ns, runs->max_ns}},
                            {"predicted_ops_per_second", w_predicted},
                            {"measured_ops_per_second", w_measured},
                            {"measured_over_predicted", w_ratio},
                            {"within", std::abs(w_ratio - 1.0) <= kLegsPredictionTolerance}};
    };
    std::optional<nlohmann::json> wide = control("wide_window");
    std::optional<nlohmann::json> per_connection = control("context_per_connection");
    out.rows.push_back({{"mode", mode},
                        {"engine", engine},
                        {"enctype", enctype},
                        {"op", op},
                        {"size", size},
                        {"connections", row.value("connections", 0)},
                        {"slots", row.value("slots", 0)},
                        {"call_payload", call_size},
                        {"reply_payload", reply_size},
                        {"sys_cpu_ns_per_call", sys_runs->median_ns},
                        {"crypto_threads", row.value("crypto_threads", "")},
                        {"sys_runs", sys_runs->runs},
                        {"sys_cpu_ns_per_call_range", {sys_runs->min_ns, sys_runs->max_ns}},
                        {"legs_extra_ns", extra},
                        {"predicted_cpu_ns_per_call", predicted_cpu},
                        {"measured_cpu_ns_per_call", *measured_cpu},
                        {"runs", row_runs->runs},
                        {"measured_cpu_ns_per_call_range", {row_runs->min_ns, row_runs->max_ns}},
                        {"predicted_ops_per_second", predicted_ops},
                        {"measured_ops_per_second", measured_ops},
                        {"measured_over_predicted", ratio},
                        {"within", std::abs(ratio - 1.0) <= kLegsPredictionTolerance},
                        {"window", row.value("window", 0u)},
                        {"server_window_drops", row.value("server_window_drops", 0u)},
                        {"timeouts", row.value("timeouts", 0u)}});
    // The call path's verdict: on the run that dropped nothing when there is one.
    out.rows.back()["call_path_within"] =
        wide ? (*wide)["within"].get<bool>() : std::abs(ratio - 1.0) <= kLegsPredictionTolerance;
    if (wide) out.rows.back()["wide_window"] = std::move(*wide);
    if (per_connection) out.rows.back()["context_per_connection"] = std::move(*per_connection);
  }
  return out;
}

}  // namespace secmode::suite
