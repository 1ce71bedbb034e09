#include "suite/nconnect_sweep.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <thread>

#include "common/clock.h"
#include "common/format.h"
#include "common/stats.h"
#include "harness/sim_speed.h"

namespace secmode::suite {

using common::Result;
using common::Status;
using sim::Scenario;
using sim::SweepRow;

namespace {

// Mean of the four legs per payload size for each krb5p association, each
// leg at its typical cost (harness::TypicalNsPerOp).
using AssocKey = std::pair<std::string, std::string>;  // enctype, engine

}  // namespace

bool FitCostsFromMicro(const harness::RunResults& results, Scenario& scenario,
                       std::string* source) {
  std::map<AssocKey, std::map<size_t, std::pair<double, int>>> by;
  for (const auto& row : results.micro) {
    if (row.mode != "krb5p" || row.threads != 1 || row.m.ns_per_op <= 0) continue;
    auto& cell = by[{row.enctype, row.engine}][row.size];
    cell.first += harness::TypicalNsPerOp(row.m);
    cell.second += 1;
  }
  for (const auto& [key, sizes] : by) {
    std::vector<double> x, y;
    for (const auto& [size, cell] : sizes) {
      if (cell.second != 4) continue;
      x.push_back(static_cast<double>(size));
      y.push_back(cell.first / 4);
    }
    const common::LineFit fit = common::FitLine(x, y);
    if (!fit.ok) continue;
    // A cost does not fall with size: a negative slope is taken as 0, and the
    // fixed cost is then the points' mean.
    const double b = std::max(0.0, fit.slope);
    const double a = std::max(0.0, fit.slope >= 0 ? fit.intercept : common::Summarize(y).mean);
    scenario.cost_fixed_ns = a;
    scenario.cost_ns_per_byte = b;
    if (source) {
      *source = "fitted to this run's micro results for krb5p:" + key.first + ":" + key.second +
                " (mean of the four legs at " + std::to_string(x.size()) +
                " sizes): " + common::Fmt("%.0f", a) + " ns + " + common::Fmt("%.3f", b) +
                " ns/byte per message";
    }
    return true;
  }
  return false;
}

nlohmann::json SweepGridJson(const sim::SweepGrid& g) {
  nlohmann::json reactions = nlohmann::json::array();
  for (rpc::WindowPolicy r : g.reactions) reactions.push_back(rpc::WindowPolicyName(r));
  return {{"base", g.base.ToJson()}, {"nconnect", g.nconnect}, {"window", g.window},
          {"slots", g.slots},        {"io_size", g.io_size},   {"skew_ns", g.skew_ns},
          {"reactions", reactions}};
}

Status RunNconnectSweep(const sim::SweepGrid& grid, const std::string& cost_source, int threads,
                        harness::RunResults& results, std::ostream& log, Shard shard) {
  if (grid.size() == 0) return Status::InvalidArgument("nconnect sweep: empty grid");
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
    return Status::InvalidArgument("nconnect sweep: bad shard " + std::to_string(shard.index) +
                                   "/" + std::to_string(shard.count));
  }
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  if (threads <= 0) threads = 1;
  const std::vector<Scenario> all = grid.Expand();
  std::vector<Scenario> scenarios;
  std::vector<size_t> index;  // each scenario's place in the whole grid
  for (size_t i = 0; i < all.size(); ++i) {
    if (!shard.Holds(i)) continue;
    scenarios.push_back(all[i]);
    index.push_back(i);
  }
  // The simulator's own speed on one thread: the default scenario, and the
  // same with every mechanism of the thread model on; each kSpeedSamples
  // short timed runs spread over the sweep (one before it and one after
  // each of its parts, on a machine the sweep's threads have left), the
  // median with the runs' range (harness::SimSpeedSampler).
  constexpr size_t kSpeedSamples = 5;
  Scenario speed_scenario;
  speed_scenario.ops = 100000;
  Scenario threads_scenario = sim::EveryMechanismScenario();
  threads_scenario.ops = 100000;
  harness::SimSpeedSampler speed_sampler(speed_scenario), threads_sampler(threads_scenario);
  auto sample = [&]() -> Status {
    SECMODE_RETURN_IF_ERROR(speed_sampler.Sample());
    return threads_sampler.Sample();
  };
  SECMODE_RETURN_IF_ERROR(sample());
  std::vector<SweepRow> rows;
  double wall = 0;
  for (size_t part = 0; part + 1 < kSpeedSamples; ++part) {
    const size_t from = scenarios.size() * part / (kSpeedSamples - 1);
    const size_t to = scenarios.size() * (part + 1) / (kSpeedSamples - 1);
    const uint64_t t0 = common::NowNs();
    std::vector<SweepRow> done =
        sim::RunSweep(std::vector<Scenario>(scenarios.begin() + static_cast<std::ptrdiff_t>(from),
                                            scenarios.begin() + static_cast<std::ptrdiff_t>(to)),
                      threads);
    wall += static_cast<double>(common::NowNs() - t0) / 1e9;
    rows.insert(rows.end(), std::make_move_iterator(done.begin()),
                std::make_move_iterator(done.end()));
    SECMODE_RETURN_IF_ERROR(sample());
  }
  SECMODE_ASSIGN_OR_RETURN(harness::SimSpeed speed, speed_sampler.Speed(true));
  SECMODE_ASSIGN_OR_RETURN(harness::SimSpeed speed_threads, threads_sampler.Speed(true));
  nlohmann::json speed_threads_json = speed_threads.ToJson();
  speed_threads_json["cores"] = threads_scenario.cores;
  log << " [simulator: " << common::Fmt("%.2f", speed.rpcs_per_second / 1e6) << " M ("
      << common::Fmt("%.2f", speed.min_rpcs_per_second / 1e6) << ".."
      << common::Fmt("%.2f", speed.max_rpcs_per_second / 1e6) << "), "
      << common::Fmt("%.2f", speed_threads.rpcs_per_second / 1e6) << " M ("
      << common::Fmt("%.2f", speed_threads.min_rpcs_per_second / 1e6) << ".."
      << common::Fmt("%.2f", speed_threads.max_rpcs_per_second / 1e6)
      << ") with every mechanism, simulated RPCs per CPU-second, median (range) of " << speed.runs
      << " runs spread over the sweep]" << std::flush;
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
  if (!shard.Whole()) results.sections["nconnect"]["shard"] = shard.ToJson(all.size());
  return Status::Ok();
}

}  // namespace secmode::suite
