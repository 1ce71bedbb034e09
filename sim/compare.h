// CompareToRuns: does a simulated ScenarioResult agree with the real runs of
// the same Scenario? The agreement rule of the validation, written down once
// so the validation, its report and its test use the same rule:
//  - Violations are compared as counts per the simulated run's number of
//    completed operations (each measured count is scaled to it), so runs of
//    slightly different length compare fairly.
//  - Where the model says zero, the median real run must say zero, and no
//    run more than `violation_slack` events. Not every run zero: the
//    model's zero is a sample too (its threads are preempted, and a call
//    held while the other slots cycle can fall behind the window however
//    few slots there are), so one real run that lost one call does not
//    refute it; most runs losing calls do, and so does any run losing many.
//  - Otherwise the simulated count lies within the range of the measured
//    counts widened by `violation_factor` (min / f .. max x f), or within
//    `violation_slack` events of it: the runs' own spread is the noise, and
//    the factor still separates "a few" from "most calls".
//  - Goodput (ops/s) agrees within `goodput_factor` of the runs' median,
//    either way.
//  - The simulated side is the model run with several seeds, as the real
//    side is several runs: its violations (each seed's scaled to the first
//    seed's completed operations) and its goodput are the seeds' means, and
//    it says zero only when every seed does. One seed is one sample: where
//    violations are rare, which seed ran would decide the verdict.
//
// Pure functions; thread-safe.
#ifndef SECMODE_SIM_COMPARE_H_
#define SECMODE_SIM_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace secmode::sim {

struct Tolerance {
  double violation_factor = 1.5;
  int64_t violation_slack = 5;
  double goodput_factor = 1.3;
};

struct Comparison {
  bool violations_agree = false;
  bool goodput_agree = false;
  bool agree() const { return violations_agree && goodput_agree; }
  double measured_violations_scaled = 0;  // the runs' median, per the simulated run's ops
  double measured_violations_min = 0, measured_violations_max = 0;  // likewise
  std::vector<double> measured_violations_runs;  // likewise, each run's, in the runs' order
  double goodput_ratio = 0;                      // measured median / simulated ops/s
  // The simulated side: how many seeds, their mean violations (scaled as
  // the measured ones are), their range, and their mean goodput.
  int seeds = 0;
  double simulated_violations = 0;
  double simulated_violations_min = 0, simulated_violations_max = 0;
  double simulated_ops_per_s = 0;
  std::string detail;  // one line, says which rule decided
};

// `simulated_seeds`: the model's runs of the scenario, one per seed (at
// least one).
Comparison CompareToRuns(const std::vector<ScenarioResult>& simulated_seeds,
                         const std::vector<ScenarioResult>& measured_runs,
                         const Tolerance& tolerance = Tolerance());
// One seed.
Comparison CompareToRuns(const ScenarioResult& simulated,
                         const std::vector<ScenarioResult>& measured_runs,
                         const Tolerance& tolerance = Tolerance());

// One scenario of the validation grid: what the simulator said and what the
// real client and server did (the measured side comes from the real-socket
// load generator, which runs the same Scenario).
struct ValidationRow {
  Scenario scenario;
  ScenarioResult simulated, measured;
};

}  // namespace secmode::sim

#endif  // SECMODE_SIM_COMPARE_H_
