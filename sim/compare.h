// CompareResults: does a simulated ScenarioResult agree with one measured on
// real sockets for the same Scenario? The tolerance rule of the validation,
// written down once so the validation, its report and its test use the same
// rule.
//
// The rule and why:
//  - Violations are compared as counts per the simulated run's number of
//    completed operations (the measured count is scaled to it), so runs of
//    slightly different length compare fairly.
//  - Where the model says zero, the measurement must say zero: the model's
//    zero is a structural claim (e.g. window >= spread of numbers in flight),
//    not a statistical one, so a single measured violation refutes it.
//  - Otherwise they agree within `violation_slack` events (few events are
//    dominated by scheduling noise on a shared machine: one late thread
//    wakeup moves a count by a few; with the defaults the slack only decides
//    when the smaller count is below 5) or within a factor `violation_factor`
//    (violations grow steeply, roughly geometrically, with skew and slots; a
//    factor of 2 still separates "a few per thousand" from "most calls").
//  - Goodput (ops/s) agrees within `goodput_factor` either way: the model
//    leaves out kernel TCP costs and thread wakeups that loopback adds, so
//    it can be off by a constant, but not by more than 2x on a good model.
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
  double violation_factor = 2.0;
  int64_t violation_slack = 5;
  double goodput_factor = 2.0;
};

struct Comparison {
  bool violations_agree = false;
  bool goodput_agree = false;
  bool agree() const { return violations_agree && goodput_agree; }
  double measured_violations_scaled = 0;  // per the simulated run's ops
  double goodput_ratio = 0;               // measured / simulated ops/s
  std::string detail;                     // one line, says which rule decided
};

Comparison CompareResults(const ScenarioResult& simulated, const ScenarioResult& measured,
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
