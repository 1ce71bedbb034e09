// The nconnect simulator's own speed: one scenario simulated on the calling
// thread, timed in thread CPU time (the speed of one core, whatever else the
// machine runs) and in wall time.
//
// With runs > 1 the scenario is simulated once first (a cold start: its
// first touch of fresh memory, which a sweep of many scenarios pays once),
// timed apart, and then `runs` times, each timed; the figure is the median
// of those runs (the upper one of an even count), warm as sim_bench's runs
// are, and the cold run's speed is kept beside it. With runs == 1, the one
// run is timed, cold.
// Thread safety: reentrant.
#ifndef SECMODE_HARNESS_SIM_SPEED_H_
#define SECMODE_HARNESS_SIM_SPEED_H_

#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/status.h"
#include "sim/scenario.h"

namespace secmode::harness {

struct SimSpeed {
  int64_t rpcs = 0;        // simulated RPCs completed, per run
  double cpu_seconds = 0;  // this thread's CPU time, of the median run
  double wall_seconds = 0;     // of the median run
  double rpcs_per_second = 0;  // per second of CPU time: the median run's
  int runs = 0;                // timed runs
  double min_rpcs_per_second = 0, max_rpcs_per_second = 0;  // over the timed runs
  double cold_rpcs_per_second = 0;  // the first, cold run's (runs > 1), else the one run's
  nlohmann::json ToJson() const;
};

// runs: 1 or more, else InvalidArgument.
common::Result<SimSpeed> MeasureSimSpeed(const sim::Scenario& scenario, int runs = 1);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_SIM_SPEED_H_
