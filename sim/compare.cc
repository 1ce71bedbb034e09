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

std::string ValidationMarkdown(const std::vector<ValidationRow>& rows, const Tolerance& tol) {
  char buf[512];
  snprintf(buf, sizeof buf,
           "Agreement rule: where the model predicts zero violations the measurement must show "
           "zero; otherwise the counts (measured scaled to the simulated number of operations) "
           "agree within %lld events or within a factor %.2f; goodput agrees within a factor "
           "%.2f.\n\n",
           static_cast<long long>(tol.violation_slack), tol.violation_factor, tol.goodput_factor);
  std::string out = buf;
  out +=
      "| nconnect | slots | window | reaction | I/O | skew ms | violations sim | violations "
      "measured | ops/s sim | ops/s measured | verdict |\n"
      "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n";
  int agree = 0;
  for (const auto& row : rows) {
    const Scenario& s = row.scenario;
    Comparison c = CompareResults(row.simulated, row.measured, tol);
    agree += c.agree() ? 1 : 0;
    snprintf(buf, sizeof buf,
             "| %d | %lld | %lld | %s | %lld %s | %.3f | %lld | %lld | %.0f | %.0f | %s |\n",
             s.nconnect, static_cast<long long>(s.slots), static_cast<long long>(s.window),
             ReactionName(s.reaction), static_cast<long long>(s.io_size), OpName(s.op),
             static_cast<double>(s.skew_ns) / 1e6, static_cast<long long>(row.simulated.violations),
             static_cast<long long>(row.measured.violations), row.simulated.ops_per_s,
             row.measured.ops_per_s,
             c.agree() ? "agree"
                       : (!c.violations_agree ? "DISAGREE (violations)" : "DISAGREE (goodput)"));
    out += buf;
  }
  snprintf(buf, sizeof buf, "\n%d of %zu scenarios agree.\n", agree, rows.size());
  out += buf;
  return out;
}

}  // namespace secmode::sim
