// Sweeps: a grid of Scenarios (nconnect x window x slots x I/O size x skew x
// reaction around a base scenario), run in parallel, one scenario per task.
//
// Every scenario of a grid uses the base scenario's seed, so a row's result
// depends only on its own parameters, never on thread scheduling: the same
// grid gives the same rows bit for bit with any number of threads.
#ifndef SECMODE_SIM_SWEEP_H_
#define SECMODE_SIM_SWEEP_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace secmode::sim {

struct SweepGrid {
  Scenario base;
  std::vector<int> nconnect;
  std::vector<int64_t> window, slots, io_size, skew_ns;
  std::vector<rpc::WindowPolicy> reactions;

  // What `secmode run` sweeps (sized to finish well within a minute on 2
  // cores), and the smaller grid of --quick.
  static SweepGrid Default();
  static SweepGrid Quick();
  size_t size() const;
  std::vector<Scenario> Expand() const;
};

struct SweepRow {
  Scenario scenario;
  ScenarioResult result;
  std::string error;              // non-empty: the scenario failed, result is empty
  nlohmann::json ToJson() const;  // parameters, outputs (incl. seed), error
};

// Runs every scenario; threads <= 0 means the machine's hardware threads.
// Rows come back in the order of `scenarios`.
std::vector<SweepRow> RunSweep(const std::vector<Scenario>& scenarios, int threads);

}  // namespace secmode::sim

#endif  // SECMODE_SIM_SWEEP_H_
