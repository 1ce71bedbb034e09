#include "sim/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/stats.h"

namespace secmode::sim {

using common::Median;

Comparison CompareToRuns(const ScenarioResult& sim, const std::vector<ScenarioResult>& runs,
                         const Tolerance& tol) {
  Comparison c;
  char buf[320];
  if (sim.completed <= 0 || runs.empty()) {
    c.detail =
        sim.completed <= 0 ? "no completed operations in the simulated run" : "no measured run";
    return c;
  }
  std::vector<double> scaled, ops;
  for (const ScenarioResult& m : runs) {
    if (m.completed <= 0) {
      c.detail = "no completed operations in a measured run";
      return c;
    }
    scaled.push_back(static_cast<double>(m.violations) * static_cast<double>(sim.completed) /
                     static_cast<double>(m.completed));
    ops.push_back(m.ops_per_s);
  }
  const double sv = static_cast<double>(sim.violations);
  const double lo = *std::min_element(scaled.begin(), scaled.end());
  const double hi = *std::max_element(scaled.begin(), scaled.end());
  c.measured_violations_scaled = Median(scaled);
  c.measured_violations_min = lo;
  c.measured_violations_max = hi;
  std::string vrule;
  if (sim.violations == 0) {
    c.violations_agree = hi == 0;
    vrule = "model says zero";
  } else {
    const double from = lo / tol.violation_factor, to = hi * tol.violation_factor;
    const double slack = static_cast<double>(tol.violation_slack);
    c.violations_agree = (sv >= from && sv <= to) || (sv >= lo - slack && sv <= hi + slack);
    snprintf(buf, sizeof buf, "range %.1f..%.1f widened x%.2f or %lld events", lo, hi,
             tol.violation_factor, static_cast<long long>(tol.violation_slack));
    vrule = buf;
  }
  const double median_ops = Median(ops);
  if (sim.ops_per_s > 0 && median_ops > 0) {
    c.goodput_ratio = median_ops / sim.ops_per_s;
    const double f = std::max(c.goodput_ratio, 1.0 / c.goodput_ratio);
    c.goodput_agree = f <= tol.goodput_factor;
  }
  snprintf(buf, sizeof buf,
           "violations sim %lld vs measured %.1f..%.1f in %zu run(s) (%s): %s; goodput measured "
           "median/sim %.3f (limit %.2fx): %s",
           static_cast<long long>(sim.violations), lo, hi, runs.size(), vrule.c_str(),
           c.violations_agree ? "agree" : "DISAGREE", c.goodput_ratio, tol.goodput_factor,
           c.goodput_agree ? "agree" : "DISAGREE");
  c.detail = buf;
  return c;
}

}  // namespace secmode::sim
