// The nconnect validation's grids (suite/nconnect_validation.h).
#include <regex>
#include <string>
#include <vector>

#include "sim/sweep.h"
#include "suite/nconnect_validation.h"

namespace secmode::suite {

ValidationOptions ValidationOptions::ForGrid(bool wide) {
  ValidationOptions options;
  if (wide) {
    options.runs = kWideGridRuns;
    options.calibration_passes = 1;
  }
  return options;
}

std::vector<ValidationPoint> DefaultValidationGrid(int64_t ops) {
  sim::Scenario base;
  base.nconnect = 4;
  base.window = 32;
  base.reaction = rpc::WindowPolicy::kDropDisconnect;
  base.op = sim::Op::kRead;
  base.io_size = 4096;
  base.ops = ops;
  base.skew_conn = 0;
  base.skew_where = sim::SkewWhere::kClient;
  // 10 ms: held that long, a call sees far more than 32 newer numbers on
  // the other connections at any krb5p rate a loopback run reaches (a few
  // ms would be borderline, about as many numbers as the window).
  constexpr int64_t kSkewNs = 10000000;
  std::vector<ValidationPoint> grid;
  auto add = [&](const char* name, int64_t slots, int64_t skew_ns, bool per_conn, bool asserted,
                 bool assert_goodput, const char* note) {
    ValidationPoint p;
    p.name = name;
    p.scenario = base;
    p.scenario.slots = slots;
    p.scenario.skew_ns = skew_ns;
    p.scenario.per_connection_context = per_conn;
    p.asserted = asserted;
    p.assert_goodput = asserted && assert_goodput;
    p.note = note;
    grid.push_back(p);
  };
  // Notes say why a point is or is not asserted, from its construction;
  // what a run found is in its diagnosis, never here.
  add("shared-s8-skew0", 8, 0, false, true, false,
      "violations asserted (8 numbers in flight, a quarter of the window: model zero, and so the "
      "median run; a run whose thread was held while the other 7 slots cycled can lose one call); "
      "goodput "
      "not asserted: at few slots the cores are often idle and how the scheduler places the "
      "threads moves the real goodput from run to run on a shared machine");
  add("shared-s16-skew0", 16, 0, false, false, false,
      "model zero (16 in flight < window 32) is not structural: while one thread is held, the "
      "slots cycling through the others can issue more than 32 newer numbers");
  add("shared-s128-skew0", 128, 0, false, false, false,
      "four times the window in flight (128 numbers against 32): every violation's disconnect "
      "resends the connection's outstanding calls; how many calls and how much goodput that "
      "costs is reported, not asserted");
  add("shared-s256-skew0", 256, 0, false, false, false,
      "eight times the window in flight (256 numbers against 32) on 4 connections: the real "
      "runs collapse; how far the model falls with them is reported, not asserted");
  add("shared-n8-s256-skew0", 256, 0, false, false, false,
      "the collapse: eight times the window in flight (256 numbers against 32) on 8 "
      "connections, each disconnect costing a smaller share of the calls but disconnects "
      "far more frequent. The test asserts that both the model and the real run collapse "
      "(many violations, goodput below half of the same load's without violations); the "
      "counts are reported, not asserted");
  grid.back().scenario.nconnect = 8;
  add("shared-s16-skew10ms", 16, kSkewNs, false, true, true,
      "10 ms hold on one connection: clearly many violations");
  add("shared-s32-skew10ms", 32, kSkewNs, false, false, false,
      "as many slots as the window: whether a held call falls out depends on how many newer "
      "numbers the thread pauses let through; reported, not asserted");
  add("shared-s128-skew10ms", 128, kSkewNs, false, false, false,
      "128 numbers in flight and a 10 ms hold: the count depends on how deep the cascade of "
      "disconnects goes; reported, not asserted");
  add("perconn-s16-skew10ms", 16, kSkewNs, true, true, true,
      "one context per connection and 16 slots: a call would need 32 newer numbers of its own "
      "context to fall out, about a quarter of all numbers go to each (model zero)");
  add("perconn-s128-skew10ms", 128, kSkewNs, true, false, false,
      "model zero is not structural: a slot's next call is numbered by the receiver thread of "
      "whichever connection answered, so a context's calls come from several threads and can "
      "overtake a held one; reported, not asserted");
  for (size_t i = 0; i < grid.size(); ++i) grid[i].grid_index = i;
  return grid;
}

std::string ValidationGridChoice() {
  return "wide grid (" + std::to_string(WideValidationGrid(1).size()) + " points, " +
         std::to_string(ValidationOptions::kWideGridRuns) +
         " real runs each) instead of the default " +
         std::to_string(DefaultValidationGrid(1).size()) + " points";
}

std::vector<ValidationPoint> WideValidationGrid(int64_t ops) {
  sim::SweepGrid g;
  g.base.op = sim::Op::kRead;
  g.base.ops = ops;
  g.base.skew_conn = 0;
  g.base.skew_where = sim::SkewWhere::kClient;
  g.nconnect = {2, 4, 8};
  g.slots = {8, 16, 32, 64, 128, 256};
  g.window = {32, 128};
  g.io_size = {4096};
  g.skew_ns = {0, 1000000, 10000000};
  g.reactions = {rpc::WindowPolicy::kDropDisconnect, rpc::WindowPolicy::kDrop,
                 rpc::WindowPolicy::kDiscardContext};
  std::vector<ValidationPoint> grid;
  for (bool per_conn : {false, true}) {
    g.base.per_connection_context = per_conn;
    for (const sim::Scenario& sc : g.Expand()) {
      ValidationPoint p;
      p.scenario = sc;
      p.name = std::string(per_conn ? "perconn" : "shared") + "-n" + std::to_string(sc.nconnect) +
               "-s" + std::to_string(sc.slots) + "-w" + std::to_string(sc.window) + "-skew" +
               (sc.skew_ns == 0 ? std::string("0") : std::to_string(sc.skew_ns / 1000000) + "ms") +
               "-" + rpc::WindowPolicyName(sc.reaction);
      p.asserted = false;
      p.assert_goodput = false;
      p.note = "wide grid: reported, not asserted";
      grid.push_back(std::move(p));
    }
  }
  for (size_t i = 0; i < grid.size(); ++i) grid[i].grid_index = i;
  return grid;
}

common::Result<ValidationSelection> SelectValidationPoints(bool wide, const std::string& filter,
                                                           const std::string& shard,
                                                           const ValidationOptions& options) {
  ValidationSelection selection;
  selection.wide = wide;
  selection.filter = filter;
  std::vector<ValidationPoint> grid =
      wide ? WideValidationGrid(options.ops) : DefaultValidationGrid(options.ops);
  if (!filter.empty()) {
    std::regex re;
    try {
      re = std::regex(filter, std::regex::extended);
    } catch (const std::regex_error&) {
      return common::Status::InvalidArgument("--points: not a regular expression: " + filter);
    }
    std::erase_if(grid, [&](const ValidationPoint& p) { return !std::regex_search(p.name, re); });
    if (grid.empty()) {
      return common::Status::InvalidArgument("--points: no point of the grid matches " + filter);
    }
  }
  // The grid a shard is a slice of: the points chosen, numbered in order.
  selection.grid_points = grid.size();
  for (size_t i = 0; i < grid.size(); ++i) grid[i].grid_index = i;
  if (!shard.empty()) {
    SECMODE_ASSIGN_OR_RETURN(selection.shard, ParseShard(shard));
    std::erase_if(grid,
                  [&](const ValidationPoint& p) { return !selection.shard.Holds(p.grid_index); });
    if (grid.empty()) {
      return common::Status::InvalidArgument("--shard " + shard + ": holds no point of the " +
                                             std::to_string(selection.grid_points) + " chosen");
    }
  }
  selection.points = std::move(grid);
  return selection;
}

nlohmann::json ValidationSelection::GridJson(const ValidationOptions& options) const {
  return {{"name", wide ? "wide" : "default"},
          {"points", grid_points},
          {"filter", filter},
          {"ops", options.ops},
          {"runs", options.runs}};
}

}  // namespace secmode::suite
