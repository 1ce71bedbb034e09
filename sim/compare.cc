#include "sim/compare.h"

#include <algorithm>
#include <cstdio>

#include "common/format.h"
#include "common/stats.h"

namespace secmode::sim {

using common::Median;

Comparison CompareToRuns(const std::vector<ScenarioResult>& seeds,
                         const std::vector<ScenarioResult>& runs, const Tolerance& tol) {
  Comparison c;
  const bool none =
      seeds.empty() || std::any_of(seeds.begin(), seeds.end(),
                                   [](const ScenarioResult& r) { return r.completed <= 0; });
  if (none || runs.empty()) {
    c.detail = none ? "no completed operations in the simulated run" : "no measured run";
    return c;
  }
  // Every count per the first seed's completed operations.
  const double per = static_cast<double>(seeds.front().completed);
  auto scale = [per](const ScenarioResult& r) {
    return static_cast<double>(r.violations) * per / static_cast<double>(r.completed);
  };
  std::vector<double> scaled, ops;
  for (const ScenarioResult& m : runs) {
    if (m.completed <= 0) {
      c.detail = "no completed operations in a measured run";
      return c;
    }
    scaled.push_back(scale(m));
    ops.push_back(m.ops_per_s);
  }
  std::vector<double> sim_scaled, sim_ops;
  for (const ScenarioResult& r : seeds) {
    sim_scaled.push_back(scale(r));
    sim_ops.push_back(r.ops_per_s);
  }
  const common::Spread sim_violations = common::Summarize(sim_scaled);
  c.seeds = static_cast<int>(seeds.size());
  c.simulated_violations = sim_violations.mean;
  c.simulated_violations_min = sim_violations.min;
  c.simulated_violations_max = sim_violations.max;
  c.simulated_ops_per_s = common::Summarize(sim_ops).mean;
  const double sv = c.simulated_violations;
  const double lo = *std::min_element(scaled.begin(), scaled.end());
  const double hi = *std::max_element(scaled.begin(), scaled.end());
  c.measured_violations_scaled = Median(scaled);
  c.measured_violations_runs = scaled;
  c.measured_violations_min = lo;
  c.measured_violations_max = hi;
  std::string vrule;
  if (sv == 0) {
    c.violations_agree =
        c.measured_violations_scaled == 0 && hi <= static_cast<double>(tol.violation_slack);
    vrule = common::Sprintf("model says zero: so must the median run, and no run more than %lld",
                            static_cast<long long>(tol.violation_slack));
  } else {
    const double from = lo / tol.violation_factor, to = hi * tol.violation_factor;
    const double slack = static_cast<double>(tol.violation_slack);
    c.violations_agree = (sv >= from && sv <= to) || (sv >= lo - slack && sv <= hi + slack);
    vrule = common::Sprintf("range %.1f..%.1f widened x%.2f or %lld events", lo, hi,
                            tol.violation_factor, static_cast<long long>(tol.violation_slack));
  }
  const double median_ops = Median(ops);
  if (c.simulated_ops_per_s > 0 && median_ops > 0) {
    c.goodput_ratio = median_ops / c.simulated_ops_per_s;
    const double f = std::max(c.goodput_ratio, 1.0 / c.goodput_ratio);
    c.goodput_agree = f <= tol.goodput_factor;
  }
  std::string simulated = common::Fmt("%.1f", sv);
  if (seeds.size() > 1) {
    simulated += common::Sprintf(" (mean of %zu seeds, %.0f..%.0f)", seeds.size(),
                                 c.simulated_violations_min, c.simulated_violations_max);
  }
  c.detail = common::Sprintf(
      "violations sim %s vs measured %.1f..%.1f in %zu run(s) (%s): %s; goodput measured "
      "median/sim %.3f (limit %.2fx): %s",
      simulated.c_str(), lo, hi, runs.size(), vrule.c_str(),
      c.violations_agree ? "agree" : "DISAGREE", c.goodput_ratio, tol.goodput_factor,
      c.goodput_agree ? "agree" : "DISAGREE");
  return c;
}

Comparison CompareToRuns(const ScenarioResult& simulated, const std::vector<ScenarioResult>& runs,
                         const Tolerance& tol) {
  return CompareToRuns(std::vector<ScenarioResult>{simulated}, runs, tol);
}

}  // namespace secmode::sim
