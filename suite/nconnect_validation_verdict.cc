// A validation point's three-valued verdict (suite/nconnect_validation_verdict.h).
#include "suite/nconnect_validation_verdict.h"

#include <algorithm>

#include "common/stats.h"

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
  return {{"runs", order.runs},
          {"order", order.k},
          {"coverage", order.coverage},
          {"violations",
           {{"verdict", VerdictName(violations_verdict)},
            {"measured", violations.ToJson()},
            {"limit", violations_limit.ToJson()}}},
          {"goodput_ratio",
           {{"verdict", VerdictName(goodput_verdict)},
            {"measured", goodput_ratio.ToJson()},
            {"limit", goodput_limit.ToJson()}}},
          {"others_fraction", others_fraction >= 0 ? nlohmann::json(others_fraction) : nullptr},
          {"machine_shared", shared}};
}

void HoldShared(PointVerdict& v, double others_fraction, double limit) {
  v.others_fraction = others_fraction;
  v.shared = others_fraction >= limit;
  if (v.shared) v.verdict = Verdict::kUndecided;
}

namespace {

// The order-statistics interval of the median of `values` (common/stats.h);
// the whole range where it cannot be had.
Interval OfMedian(const std::vector<double>& values, MedianOrder* order) {
  auto m = common::MedianConfidenceInterval(values, kVerdictConfidence);
  if (!m.ok() || m->n == 0) {
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    return values.empty() ? Interval{} : Interval{*lo, *hi};
  }
  order->runs = m->n;
  order->k = m->k;
  order->coverage = m->coverage;
  return {m->lo, m->hi};
}

}  // namespace

PointVerdict JudgePoint(const sim::Comparison& c, const std::vector<sim::ScenarioResult>& runs,
                        const sim::Tolerance& tol) {
  PointVerdict v;
  const bool judged = c.seeds > 0 && c.simulated_ops_per_s > 0 && !runs.empty() &&
                      c.measured_violations_runs.size() == runs.size() &&
                      std::all_of(runs.begin(), runs.end(),
                                  [](const sim::ScenarioResult& r) { return r.completed > 0; });
  if (!judged) return v;  // disagrees
  // Violations: the runs' counts as the comparison scaled them, against the
  // band around the model's mean (exactly zero for a model's zero).
  v.violations = OfMedian(c.measured_violations_runs, &v.order);
  const double sv = c.simulated_violations, f = tol.violation_factor;
  const double slack = static_cast<double>(tol.violation_slack);
  if (sv > 0) {
    v.violations_limit = {std::max(0.0, std::min(sv / f, sv - slack)),
                          std::max(sv * f, sv + slack)};
  }
  v.violations_verdict = Judge(v.violations, v.violations_limit);
  // Goodput: each run's over the model's mean.
  std::vector<double> ratios;
  for (const sim::ScenarioResult& r : runs) ratios.push_back(r.ops_per_s / c.simulated_ops_per_s);
  v.goodput_ratio = OfMedian(ratios, &v.order);
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
