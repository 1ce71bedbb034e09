#include "sim/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace secmode::sim {

Comparison CompareResults(const ScenarioResult& sim, const ScenarioResult& meas,
                          const Tolerance& tol) {
  Comparison c;
  char buf[256];
  if (sim.completed <= 0 || meas.completed <= 0) {
    c.detail = "no completed operations in the " +
               std::string(sim.completed <= 0 ? "simulated" : "measured") + " run";
    return c;
  }
  const double sv = static_cast<double>(sim.violations);
  const double mv = static_cast<double>(meas.violations) * static_cast<double>(sim.completed) /
                    static_cast<double>(meas.completed);
  c.measured_violations_scaled = mv;
  std::string vrule;
  if (sim.violations == 0) {
    c.violations_agree = meas.violations == 0;
    vrule = "model says zero";
  } else if (std::fabs(sv - mv) <= static_cast<double>(tol.violation_slack)) {
    c.violations_agree = true;
    vrule = "within " + std::to_string(tol.violation_slack) + " events";
  } else {
    const double lo = std::min(sv, mv), hi = std::max(sv, mv);
    c.violations_agree = lo > 0 && hi <= tol.violation_factor * lo;
    snprintf(buf, sizeof buf, "factor %.2f (limit %.2f)", lo > 0 ? hi / lo : INFINITY,
             tol.violation_factor);
    vrule = buf;
  }
  if (sim.ops_per_s > 0 && meas.ops_per_s > 0) {
    c.goodput_ratio = meas.ops_per_s / sim.ops_per_s;
    const double f = std::max(c.goodput_ratio, 1.0 / c.goodput_ratio);
    c.goodput_agree = f <= tol.goodput_factor;
  }
  snprintf(buf, sizeof buf,
           "violations sim %lld vs measured %.1f (%s): %s; goodput measured/sim %.3f (limit "
           "%.2fx): %s",
           static_cast<long long>(sim.violations), mv, vrule.c_str(),
           c.violations_agree ? "agree" : "DISAGREE", c.goodput_ratio, tol.goodput_factor,
           c.goodput_agree ? "agree" : "DISAGREE");
  c.detail = buf;
  return c;
}

}  // namespace secmode::sim
