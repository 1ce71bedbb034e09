// A validation point's three-valued verdict (suite/nconnect_validation_verdict.h).
#include "suite/nconnect_validation_verdict.h"

#include <algorithm>

namespace secmode::suite {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kAgrees: return "agrees";
    case Verdict::kDisagrees: return "disagrees";
    case Verdict::kUndecided: return "undecided";
  }
  return "disagrees";
}

nlohmann::json Interval::ToJson() const { return nlohmann::json::array({lo, hi}); }

Verdict Judge(const Interval& value, const Interval& limit) {
  if (value.lo >= limit.lo && value.hi <= limit.hi) return Verdict::kAgrees;
  if (value.hi < limit.lo || value.lo > limit.hi) return Verdict::kDisagrees;
  return Verdict::kUndecided;
}

Verdict Combine(Verdict violations, Verdict goodput) {
  if (violations == Verdict::kDisagrees || goodput == Verdict::kDisagrees) {
    return Verdict::kDisagrees;
  }
  if (violations == Verdict::kAgrees && goodput == Verdict::kAgrees) return Verdict::kAgrees;
  return Verdict::kUndecided;
}

nlohmann::json PointVerdict::ToJson() const {
  return {{"violations",
           {{"verdict", VerdictName(violations_verdict)},
            {"measured", violations.ToJson()},
            {"limit", violations_limit.ToJson()}}},
          {"goodput_ratio",
           {{"verdict", VerdictName(goodput_verdict)},
            {"measured", goodput_ratio.ToJson()},
            {"limit", goodput_limit.ToJson()}}}};
}

PointVerdict JudgePoint(const sim::Comparison& c, const std::vector<sim::ScenarioResult>& runs,
                        const sim::Tolerance& tol) {
  PointVerdict v;
  const bool judged = c.seeds > 0 && c.simulated_ops_per_s > 0 && !runs.empty() &&
                      std::all_of(runs.begin(), runs.end(),
                                  [](const sim::ScenarioResult& r) { return r.completed > 0; });
  if (!judged) return v;  // disagrees
  // Violations: the runs' counts as the comparison scaled them, against the
  // band around the model's mean (exactly zero for a model's zero).
  v.violations = {c.measured_violations_min, c.measured_violations_max};
  const double sv = c.simulated_violations, f = tol.violation_factor;
  const double slack = static_cast<double>(tol.violation_slack);
  if (sv > 0) {
    v.violations_limit = {std::max(0.0, std::min(sv / f, sv - slack)),
                          std::max(sv * f, sv + slack)};
  }
  v.violations_verdict = Judge(v.violations, v.violations_limit);
  // Goodput: each run's over the model's mean.
  const auto [lo, hi] = std::minmax_element(
      runs.begin(), runs.end(), [](const sim::ScenarioResult& a, const sim::ScenarioResult& b) {
        return a.ops_per_s < b.ops_per_s;
      });
  v.goodput_ratio = {lo->ops_per_s / c.simulated_ops_per_s, hi->ops_per_s / c.simulated_ops_per_s};
  v.goodput_limit = {1.0 / tol.goodput_factor, tol.goodput_factor};
  v.goodput_verdict = Judge(v.goodput_ratio, v.goodput_limit);
  v.verdict = Combine(v.violations_verdict, v.goodput_verdict);
  return v;
}

void VerdictCounts::Add(Verdict v) {
  switch (v) {
    case Verdict::kAgrees: ++agrees; break;
    case Verdict::kDisagrees: ++disagrees; break;
    case Verdict::kUndecided: ++undecided; break;
  }
}

std::string VerdictCounts::ToString() const {
  return std::to_string(agrees) + " agree, " + std::to_string(disagrees) +
         (disagrees == 1 ? " disagrees, " : " disagree, ") + std::to_string(undecided) +
         " undecided";
}

nlohmann::json VerdictCounts::ToJson() const {
  return {{"agrees", agrees}, {"disagrees", disagrees}, {"undecided", undecided}};
}

}  // namespace secmode::suite
