#include "suite/nconnect_sweep.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <thread>

#include "common/clock.h"
#include "common/format.h"
#include "harness/sim_speed.h"

namespace secmode::suite {

using common::Result;
using common::Status;
using sim::Scenario;
using sim::SweepRow;

namespace {

// Mean of the four legs per payload size for each krb5p association.
using AssocKey = std::pair<std::string, std::string>;  // enctype, engine

}  // namespace

bool FitCostsFromMicro(const harness::RunResults& results, Scenario& scenario,
                       std::string* source) {
  std::map<AssocKey, std::map<size_t, std::pair<double, int>>> by;
  for (const auto& row : results.micro) {
    if (row.mode != "krb5p" || row.threads != 1 || row.m.ns_per_op <= 0) continue;
    auto& cell = by[{row.enctype, row.engine}][row.size];
    cell.first += row.m.ns_per_op;
    cell.second += 1;
  }
  for (const auto& [key, sizes] : by) {
    std::vector<std::pair<double, double>> pts;
    for (const auto& [size, cell] : sizes) {
      if (cell.second == 4) pts.emplace_back(static_cast<double>(size), cell.first / 4);
    }
    if (pts.size() < 2) continue;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double n = static_cast<double>(pts.size());
    for (const auto& [x, y] : pts) {
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    const double den = n * sxx - sx * sx;
    if (den <= 0) continue;
    const double b = std::max(0.0, (n * sxy - sx * sy) / den);
    const double a = std::max(0.0, (sy - b * sx) / n);
    scenario.cost_fixed_ns = a;
    scenario.cost_ns_per_byte = b;
    if (source) {
      *source = "fitted to this run's micro results for krb5p:" + key.first + ":" + key.second +
                " (mean of the four legs at " + std::to_string(pts.size()) +
                " sizes): " + common::Fmt("%.0f", a) + " ns + " + common::Fmt("%.3f", b) +
                " ns/byte per message";
    }
    return true;
  }
  return false;
}

nlohmann::json SweepGridJson(const sim::SweepGrid& g) {
  nlohmann::json reactions = nlohmann::json::array();
  for (sim::Reaction r : g.reactions) reactions.push_back(sim::ReactionName(r));
  return {{"base", g.base.ToJson()}, {"nconnect", g.nconnect}, {"window", g.window},
          {"slots", g.slots},        {"io_size", g.io_size},   {"skew_ns", g.skew_ns},
          {"reactions", reactions}};
}

common::Result<SweepShard> ParseSweepShard(const std::string& text) {
  SweepShard s;
  const size_t slash = text.find('/');
  size_t used_i = 0, used_n = 0;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    s.index = std::stoi(text.substr(0, slash), &used_i);
    s.count = std::stoi(text.substr(slash + 1), &used_n);
  } catch (const std::exception&) {
    return Status::InvalidArgument("--shard " + text + ": expected I/N, e.g. 0/4");
  }
  if (used_i != slash || used_n != text.size() - slash - 1) {
    return Status::InvalidArgument("--shard " + text + ": expected I/N, e.g. 0/4");
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) {
    return Status::InvalidArgument("--shard " + text + ": needs 0 <= I < N");
  }
  return s;
}

Status RunNconnectSweep(const sim::SweepGrid& grid, const std::string& cost_source, int threads,
                        harness::RunResults& results, std::ostream& log, SweepShard shard) {
  if (grid.size() == 0) return Status::InvalidArgument("nconnect sweep: empty grid");
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
    return Status::InvalidArgument("nconnect sweep: bad shard " + std::to_string(shard.index) +
                                   "/" + std::to_string(shard.count));
  }
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  if (threads <= 0) threads = 1;
  // The simulator's own speed on one thread: the default scenario, and the
  // same with every mechanism of the thread model on.
  Scenario speed_scenario;
  speed_scenario.ops = 200000;
  SECMODE_ASSIGN_OR_RETURN(harness::SimSpeed speed, harness::MeasureSimSpeed(speed_scenario));
  Scenario threads_scenario = sim::EveryMechanismScenario();
  threads_scenario.ops = 200000;
  SECMODE_ASSIGN_OR_RETURN(harness::SimSpeed speed_threads,
                           harness::MeasureSimSpeed(threads_scenario));
  nlohmann::json speed_threads_json = speed_threads.ToJson();
  speed_threads_json["cores"] = threads_scenario.cores;
  log << " [simulator: " << common::Fmt("%.2f", speed.rpcs_per_second / 1e6) << " M, "
      << common::Fmt("%.2f", speed_threads.rpcs_per_second / 1e6)
      << " M with every mechanism, simulated RPCs per CPU-second]" << std::flush;

  const std::vector<Scenario> all = grid.Expand();
  std::vector<Scenario> scenarios;
  std::vector<size_t> index;  // each scenario's place in the whole grid
  for (size_t i = 0; i < all.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(shard.count)) != shard.index) continue;
    scenarios.push_back(all[i]);
    index.push_back(i);
  }
  const uint64_t t0 = common::NowNs();
  const std::vector<SweepRow> rows = sim::RunSweep(scenarios, threads);
  const double wall = static_cast<double>(common::NowNs() - t0) / 1e9;
  int64_t total_ops = 0, errors = 0, truncated = 0;
  for (size_t k = 0; k < rows.size(); ++k) {
    const SweepRow& row = rows[k];
    nlohmann::json j = row.ToJson();
    j["grid_index"] = index[k];
    results.nconnect.push_back(std::move(j));
    total_ops += row.result.completed;
    errors += row.error.empty() ? 0 : 1;
    truncated += row.result.truncated ? 1 : 0;
  }
  log << " [" << rows.size() << " scenarios in " << common::Fmt("%.1f", wall) << " s]"
      << std::flush;
  results.sections["nconnect"] = {{"grid", SweepGridJson(grid)},
                                  {"cost_source", cost_source},
                                  {"simulator_speed", speed.ToJson()},
                                  {"simulator_speed_every_mechanism", speed_threads_json},
                                  {"scenarios", rows.size()},
                                  {"total_ops", total_ops},
                                  {"failed", errors},
                                  {"truncated", truncated},
                                  {"wall_seconds", wall},
                                  {"threads", threads}};
  if (shard.count > 1) {
    results.sections["nconnect"]["shard"] = {
        {"index", shard.index}, {"count", shard.count}, {"grid_scenarios", all.size()}};
  }
  return Status::Ok();
}

common::Result<harness::RunResults> MergeSweepShards(
    const std::vector<harness::RunResults>& shards) {
  if (shards.empty()) return Status::InvalidArgument("merge: no shards");
  auto shard_of = [](const harness::RunResults& r, size_t k) -> common::Result<nlohmann::json> {
    const std::string which = "shard " + std::to_string(k + 1) + " given";
    if (!r.sections.contains("nconnect") || !r.sections["nconnect"].contains("grid")) {
      return Status::InvalidArgument("merge: the " + which +
                                     " is not an nconnect sweep (no sections.nconnect.grid)");
    }
    const nlohmann::json& s = r.sections["nconnect"];
    if (!s.contains("shard")) {
      return Status::InvalidArgument("merge: the " + which +
                                     " is a whole sweep, not a shard (--shard I/N)");
    }
    const nlohmann::json& sh = s["shard"];
    auto integer = [&](const char* k) {
      return sh.contains(k) && sh[k].is_number_integer() && sh[k].get<int64_t>() >= 0;
    };
    if (!sh.is_object() || !integer("index") || !integer("count") || !integer("grid_scenarios") ||
        sh["count"].get<int64_t>() < 1 || sh["count"].get<int64_t>() > 1000000) {
      return Status::Corrupt(
          "merge: the " + which +
          " has no valid sections.nconnect.shard (index, count, grid_scenarios)");
    }
    return s;
  };
  SECMODE_ASSIGN_OR_RETURN(nlohmann::json first, shard_of(shards[0], 0));
  const int count = static_cast<int>(first["shard"]["count"].get<int64_t>());
  const size_t grid_size = first["shard"]["grid_scenarios"].get<size_t>();
  // Sized by the rows the files hold, never by a count a file states.
  std::map<int64_t, const harness::RunResults*> by_index;
  std::map<size_t, nlohmann::json> rows;  // by grid index
  nlohmann::json list = nlohmann::json::array();
  for (size_t k = 0; k < shards.size(); ++k) {
    SECMODE_ASSIGN_OR_RETURN(nlohmann::json s, shard_of(shards[k], k));
    if (s["grid"] != first["grid"]) {
      return Status::InvalidArgument("merge: shard " + std::to_string(k + 1) +
                                     " given ran another grid than the first");
    }
    if (s["shard"]["count"].get<int64_t>() != count) {
      return Status::InvalidArgument("merge: shard " + std::to_string(k + 1) + " given is of " +
                                     s["shard"]["count"].dump() + " shards, the first of " +
                                     std::to_string(count));
    }
    const int64_t index = s["shard"]["index"].get<int64_t>();
    if (index < 0 || index >= count) {
      return Status::InvalidArgument("merge: shard index " + std::to_string(index) +
                                     " out of range");
    }
    if (by_index.count(index)) {
      return Status::InvalidArgument("merge: shard " + std::to_string(index) + "/" +
                                     std::to_string(count) + " given twice");
    }
    by_index[index] = &shards[k];
    for (const nlohmann::json& row : shards[k].nconnect) {
      if (!row.contains("grid_index") || !row["grid_index"].is_number_integer() ||
          row["grid_index"].get<int64_t>() < 0) {
        return Status::Corrupt("merge: a row of shard " + std::to_string(index) +
                               " has no grid_index");
      }
      const size_t i = row["grid_index"].get<size_t>();
      if (i >= grid_size || static_cast<int64_t>(i % static_cast<size_t>(count)) != index ||
          rows.count(i)) {
        return Status::Corrupt("merge: shard " + std::to_string(index) + " holds row " +
                               std::to_string(i) + ", which is not its own or is repeated");
      }
      rows[i] = row;
    }
    list.push_back({{"index", index},
                    {"host", shards[k].machine.hostname},
                    {"cpu_model", shards[k].machine.cpu_model},
                    {"started_at", shards[k].started_at},
                    {"simulator_speed", s.value("simulator_speed", nlohmann::json())},
                    {"wall_seconds", s.value("wall_seconds", nlohmann::json())}});
  }
  for (int64_t i = 0; i < count; ++i) {
    if (!by_index.count(i)) {
      return Status::InvalidArgument("merge: shard " + std::to_string(i) + "/" +
                                     std::to_string(count) + " is missing");
    }
  }
  // Distinct indexes below grid_size: as many as the grid means all of them.
  if (rows.size() != grid_size) {
    return Status::Corrupt("merge: the shards hold " + std::to_string(rows.size()) +
                           " of their grid's " + std::to_string(grid_size) + " rows");
  }
  const harness::RunResults& zero = *by_index.at(0);
  harness::RunResults merged;
  merged.machine = zero.machine;
  merged.command = zero.command;
  merged.method = zero.method;
  merged.started_at = zero.started_at;
  merged.finished_at = zero.finished_at;
  for (const auto& [index, r] : by_index) {
    merged.started_at = std::min(merged.started_at, r->started_at);
    merged.finished_at = std::max(merged.finished_at, r->finished_at);
    for (const auto& e : r->errors) merged.errors.push_back(e);
  }
  for (auto& [i, row] : rows) merged.nconnect.push_back(std::move(row));
  nlohmann::json section = zero.sections["nconnect"];
  section.erase("shard");
  int64_t total_ops = 0, failed = 0, truncated = 0;
  for (const auto& r : merged.nconnect) {
    if (r.contains("completed") && r["completed"].is_number_integer()) {
      total_ops += r["completed"].get<int64_t>();
    }
    failed += r.contains("error") ? 1 : 0;
    truncated += r.contains("truncated") && r["truncated"].is_boolean() && r["truncated"] ? 1 : 0;
  }
  // The sweep's wall time is the longest shard's (they run side by side),
  // its threads all the shards'; each shard's own figures are in "shards".
  double wall = 0;
  int64_t threads = 0;
  for (const auto& [index, r] : by_index) {
    const nlohmann::json& s = r->sections["nconnect"];
    if (s.contains("wall_seconds") && s["wall_seconds"].is_number()) {
      wall = std::max(wall, s["wall_seconds"].get<double>());
    }
    if (s.contains("threads") && s["threads"].is_number_integer()) {
      threads += s["threads"].get<int64_t>();
    }
  }
  section["wall_seconds"] = wall;
  section["threads"] = threads;
  section["scenarios"] = grid_size;
  section["total_ops"] = total_ops;
  section["failed"] = failed;
  section["truncated"] = truncated;
  section["shards"] = std::move(list);
  merged.sections["nconnect"] = std::move(section);
  return merged;
}

}  // namespace secmode::suite
