#include "suite/e2e_from_legs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

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
    const std::optional<double> sys_cpu = harness::BusyCpuNsPerCall(*sys->second, logical_cpus);
    const std::optional<double> measured_cpu = harness::BusyCpuNsPerCall(row, logical_cpus);
    if (!sys_cpu || !measured_cpu) {
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
    const double predicted_cpu = *sys_cpu + extra;
    const double busy_cpu_ns = *measured_cpu * row.value("ops", 0.0);
    const double seconds = row.value("seconds", 0.0);
    const double predicted_ops = predicted_cpu > 0 ? busy_cpu_ns / predicted_cpu / seconds : 0;
    const double measured_ops = row.value("ops_per_second", 0.0);
    const double ratio = predicted_ops > 0 ? measured_ops / predicted_ops : 0;
    // The same load against a server whose window dropped nothing: the
    // call path's own rate, predicted from its own busy CPU time.
    std::optional<nlohmann::json> wide;
    if (row.contains("wide_window") && row["wide_window"].is_object()) {
      const nlohmann::json& w = row["wide_window"];
      const std::optional<double> wide_cpu = harness::BusyCpuNsPerCall(w, logical_cpus);
      const double wide_seconds = w.value("seconds", 0.0);
      if (wide_cpu && wide_seconds > 0 && predicted_cpu > 0) {
        const double wide_predicted =
            *wide_cpu * w.value("ops", 0.0) / predicted_cpu / wide_seconds;
        const double wide_measured = w.value("ops_per_second", 0.0);
        const double wide_ratio = wide_predicted > 0 ? wide_measured / wide_predicted : 0;
        wide = nlohmann::json{{"window", w.value("window", 0u)},
                              {"server_window_drops", w.value("server_window_drops", 0u)},
                              {"measured_cpu_ns_per_call", *wide_cpu},
                              {"predicted_ops_per_second", wide_predicted},
                              {"measured_ops_per_second", wide_measured},
                              {"measured_over_predicted", wide_ratio},
                              {"within", std::abs(wide_ratio - 1.0) <= kLegsPredictionTolerance}};
      }
    }
    out.rows.push_back({{"mode", mode},
                        {"engine", engine},
                        {"enctype", enctype},
                        {"op", op},
                        {"size", size},
                        {"connections", row.value("connections", 0)},
                        {"slots", row.value("slots", 0)},
                        {"call_payload", call_size},
                        {"reply_payload", reply_size},
                        {"sys_cpu_ns_per_call", *sys_cpu},
                        {"legs_extra_ns", extra},
                        {"predicted_cpu_ns_per_call", predicted_cpu},
                        {"measured_cpu_ns_per_call", *measured_cpu},
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
  }
  return out;
}

}  // namespace secmode::suite
