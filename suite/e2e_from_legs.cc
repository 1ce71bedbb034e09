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

// A run's round (suite/section_e2e.cc), -1 when it has none that is a
// whole number.
int RoundOf(const nlohmann::json& run) {
  if (!run.contains("round") || !run["round"].is_number_integer()) return -1;
  return run["round"].get<int>();
}

// The busy CPU per call of the sys run just before each run of `row`
// (its `sys_just_before`, suite/section_e2e.cc), by round.
std::map<int, double> SysJustBefore(const nlohmann::json& row, int logical_cpus) {
  std::map<int, double> out;
  if (!row.contains("sys_just_before") || !row["sys_just_before"].is_array()) return out;
  for (const auto& run : row["sys_just_before"]) {
    if (!run.is_object()) continue;
    const int round = RoundOf(run);
    const std::optional<double> cpu = harness::BusyCpuNsPerCall(run, logical_cpus);
    if (cpu && round >= 0) out.emplace(round, *cpu);
  }
  return out;
}

// One run predicted from the sys run of its round: that sys run's CPU per
// call plus the legs' extra, against the run's own.
struct Pair {
  double ratio;  // predicted / measured CPU per call = measured / predicted ops/s
  double sys_ns, cpu_ns;
  const nlohmann::json* run;  // its figures' run (in the row or its repeats)
};

// The runs of `holder` (itself and its repeats) that have a figure and a
// sys run in `sys` of their round, lowest measured/predicted first (ties
// keep the runs' order).
std::vector<Pair> PairsOf(const nlohmann::json& holder, const std::map<int, double>& sys,
                          double extra, int logical_cpus) {
  std::vector<Pair> pairs;
  auto add = [&](const nlohmann::json& run) {
    if (!run.is_object()) return;
    const auto it = sys.find(RoundOf(run));
    const std::optional<double> cpu = harness::BusyCpuNsPerCall(run, logical_cpus);
    if (it == sys.end() || !cpu || *cpu <= 0) return;
    pairs.push_back({(it->second + extra) / *cpu, it->second, *cpu, &run});
  };
  add(holder);
  if (holder.contains("repeats") && holder["repeats"].is_array()) {
    for (const auto& run : holder["repeats"]) add(run);
  }
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const Pair& a, const Pair& b) { return a.ratio < b.ratio; });
  return pairs;
}

// The median pair and its figures in the fields the rows share with the
// unpaired prediction, its run's window drops and timeouts, and its round.
// Of an even count the lower middle by measured/predicted, the index rule
// of harness::MedianCpuNsPerCall: there the cheaper run, here the pair that
// did less well against its prediction (the verdict is not flattered).
nlohmann::json PairedFigures(const std::vector<Pair>& pairs, double extra) {
  const Pair& m = pairs[(pairs.size() - 1) / 2];
  const double ops_per_second = m.run->value("ops_per_second", 0.0);
  double sys_min = m.sys_ns, sys_max = m.sys_ns;
  for (const Pair& p : pairs) {
    sys_min = std::min(sys_min, p.sys_ns);
    sys_max = std::max(sys_max, p.sys_ns);
  }
  return {{"sys_baseline", "the sys run just before each run"},
          {"pairs", pairs.size()},
          {"sys_cpu_ns_per_call", m.sys_ns},
          {"sys_runs", pairs.size()},
          {"sys_cpu_ns_per_call_range", {sys_min, sys_max}},
          {"predicted_cpu_ns_per_call", m.sys_ns + extra},
          {"measured_cpu_ns_per_call", m.cpu_ns},
          {"predicted_ops_per_second", m.ratio > 0 ? ops_per_second / m.ratio : 0},
          {"measured_ops_per_second", ops_per_second},
          {"measured_over_predicted", m.ratio},
          {"measured_over_predicted_range", {pairs.front().ratio, pairs.back().ratio}},
          {"within", std::abs(m.ratio - 1.0) <= kLegsPredictionTolerance},
          {"round", RoundOf(*m.run)},
          {"window", m.run->value("window", 0u)},
          {"server_window_drops", m.run->value("server_window_drops", 0u)},
          {"timeouts", m.run->value("timeouts", 0u)}};
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
    // Each run against the sys run just before it, where the section made
    // them (a mode and its baseline measured in the same stretch); else
    // against the sys row's median run.
    const std::map<int, double> sys_by_round = SysJustBefore(row, logical_cpus);
    const std::vector<Pair> pairs = PairsOf(row, sys_by_round, extra, logical_cpus);
    const std::optional<harness::CpuOverRuns> row_runs =
        harness::MedianCpuNsPerCall(row, logical_cpus);
    nlohmann::json figures;
    double predicted_cpu = 0;  // the unpaired prediction, for unpaired controls
    if (!pairs.empty() && row_runs) {
      figures = PairedFigures(pairs, extra);
      predicted_cpu = figures["predicted_cpu_ns_per_call"].get<double>();
    } else {
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
      if (!sys_runs || !measured_cpu || !row_runs) {
        skip(row, "the machine's idle time was not measured");
        continue;
      }
      predicted_cpu = sys_runs->median_ns + extra;
      const double busy_cpu_ns = *measured_cpu * row.value("ops", 0.0);
      const double seconds = row.value("seconds", 0.0);
      const double predicted_ops = predicted_cpu > 0 ? busy_cpu_ns / predicted_cpu / seconds : 0;
      const double measured_ops = row.value("ops_per_second", 0.0);
      const double ratio = predicted_ops > 0 ? measured_ops / predicted_ops : 0;
      figures = {{"sys_baseline", "the sys row's median run"},
                 {"sys_cpu_ns_per_call", sys_runs->median_ns},
                 {"sys_runs", sys_runs->runs},
                 {"sys_cpu_ns_per_call_range", {sys_runs->min_ns, sys_runs->max_ns}},
                 {"predicted_cpu_ns_per_call", predicted_cpu},
                 {"measured_cpu_ns_per_call", *measured_cpu},
                 {"predicted_ops_per_second", predicted_ops},
                 {"measured_ops_per_second", measured_ops},
                 {"measured_over_predicted", ratio},
                 {"within", std::abs(ratio - 1.0) <= kLegsPredictionTolerance}};
    }
    // A control run of the same load (row.wide_window: a server whose window
    // dropped nothing; row.context_per_connection: also no context shared,
    // so no call waited for another connection's crypto): each of its runs
    // against the sys run of its round when the row has them, else against
    // the row's prediction.
    auto control = [&](const char* key) -> std::optional<nlohmann::json> {
      if (!row.contains(key) || !row[key].is_object()) return std::nullopt;
      const nlohmann::json& w = row[key];
      const std::optional<double> cpu = harness::BusyCpuNsPerCall(w, logical_cpus);
      const std::optional<harness::CpuOverRuns> runs = harness::MedianCpuNsPerCall(w, logical_cpus);
      if (!cpu || !runs) return std::nullopt;
      nlohmann::json out = {{"window", w.value("window", 0u)},
                            {"server_window_drops", w.value("server_window_drops", 0u)},
                            {"runs", runs->runs},
                            {"measured_cpu_ns_per_call_range", {runs->min_ns, runs->max_ns}}};
      const std::vector<Pair> w_pairs = PairsOf(w, sys_by_round, extra, logical_cpus);
      if (!w_pairs.empty()) {
        out.update(PairedFigures(w_pairs, extra));
        return out;
      }
      // Unpaired: against the row's prediction (with a paired row, its
      // median pair's, made from another round's sys run).
      out["sys_baseline"] = sys_by_round.empty() ? "the sys row's median run"
                                                 : "the row's median pair's prediction";
      const double w_seconds = w.value("seconds", 0.0);
      if (w_seconds <= 0 || predicted_cpu <= 0) return std::nullopt;
      const double w_predicted = *cpu * w.value("ops", 0.0) / predicted_cpu / w_seconds;
      const double w_measured = w.value("ops_per_second", 0.0);
      const double w_ratio = w_predicted > 0 ? w_measured / w_predicted : 0;
      out.update({{"measured_cpu_ns_per_call", *cpu},
                  {"predicted_ops_per_second", w_predicted},
                  {"measured_ops_per_second", w_measured},
                  {"measured_over_predicted", w_ratio},
                  {"within", std::abs(w_ratio - 1.0) <= kLegsPredictionTolerance}});
      return out;
    };
    std::optional<nlohmann::json> wide = control("wide_window");
    std::optional<nlohmann::json> per_connection = control("context_per_connection");
    nlohmann::json out_row = {{"mode", mode},
                              {"engine", engine},
                              {"enctype", enctype},
                              {"op", op},
                              {"size", size},
                              {"connections", row.value("connections", 0)},
                              {"slots", row.value("slots", 0)},
                              {"call_payload", call_size},
                              {"reply_payload", reply_size},
                              {"crypto_threads", row.value("crypto_threads", "")},
                              {"legs_extra_ns", extra},
                              {"runs", row_runs->runs},
                              {"measured_cpu_ns_per_call_range", {row_runs->min_ns, row_runs->max_ns}},
                              {"window", row.value("window", 0u)},
                              {"server_window_drops", row.value("server_window_drops", 0u)},
                              {"timeouts", row.value("timeouts", 0u)}};
    out_row.update(figures);
    // The call path's verdict: on the run that dropped nothing when there is one.
    out_row["call_path_within"] = wide ? (*wide)["within"] : out_row["within"];
    if (wide) out_row["wide_window"] = std::move(*wide);
    if (per_connection) out_row["context_per_connection"] = std::move(*per_connection);
    out.rows.push_back(std::move(out_row));
  }
  return out;
}

}  // namespace secmode::suite
