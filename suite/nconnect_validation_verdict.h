// A validation point's verdict, three-valued, from the spread of its
// repeats (suite/nconnect_validation.h). Each quantity the point is judged
// by is taken as the distribution-free confidence interval of its median
// over the point's real runs (order statistics, common/stats.h: with 9
// runs, the second smallest to the second largest, which holds the median
// run's value with probability 0.96), held against the limit the agreement
// rule draws around the model's prediction (the mean of its seeds,
// sim::CompareToRuns):
//  - "agrees" when the whole interval lies within the limit,
//  - "disagrees" when none of it does,
//  - "undecided" when it straddles the limit's edge: the repeats do not
//    settle the question, and another run of the validation could answer it
//    either way.
// The interval is the median's, not every run's: the question is whether
// the model predicts the typical run, and the range of all runs widens with
// their number (one unlucky run of nine would make a point undecided). With
// fewer than 6 runs it is the whole range, whose coverage is then lower
// (`MedianOrder::coverage` says it).
// The limits are sim::Tolerance's: violations (each run's count scaled to
// the first seed's completed operations) within a factor violation_factor
// or violation_slack events of the model's mean count, exactly zero where
// every seed says zero (the median's interval within zero: one run of nine
// may lose a call, sim/compare.h says why); goodput
// (each run's ops/s over the model's mean) within a factor goodput_factor.
// A point is judged by both: it disagrees when either does, agrees when
// both do, and is undecided otherwise. And a point whose real runs shared
// the machine (other processes ran a large share of its CPU time while
// they were measured: HoldShared) is undecided whatever the quantities say:
// what those runs did was the machine's, not the model's to predict.
//
// Pure functions; thread-safe.
#ifndef SECMODE_SUITE_NCONNECT_VALIDATION_VERDICT_H_
#define SECMODE_SUITE_NCONNECT_VALIDATION_VERDICT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/compare.h"
#include "sim/scenario.h"

namespace secmode::suite {

enum class Verdict { kAgrees, kDisagrees, kUndecided };

// "agrees", "disagrees", "undecided": the words of results.json.
const char* VerdictName(Verdict v);

// A closed interval, lo <= hi.
struct Interval {
  double lo = 0, hi = 0;
  nlohmann::json ToJson() const;  // [lo, hi]
};

// `value` (the interval over the repeats) against `limit`.
Verdict Judge(const Interval& value, const Interval& limit);

// A point's verdict of its two quantities.
Verdict Combine(Verdict violations, Verdict goodput);

// The confidence of the median's interval a verdict rests on.
inline constexpr double kVerdictConfidence = 0.95;

// Which order statistics an interval took: of `runs` sorted, the k-th
// smallest to the k-th largest, holding the median with `coverage`.
struct MedianOrder {
  size_t runs = 0, k = 0;
  double coverage = 0;
};

struct PointVerdict {
  MedianOrder order;  // the same for both quantities (one value per run each)
  Interval violations, violations_limit;
  Interval goodput_ratio, goodput_limit;  // measured / simulated ops/s
  Verdict violations_verdict = Verdict::kDisagrees;
  Verdict goodput_verdict = Verdict::kDisagrees;
  Verdict verdict = Verdict::kDisagrees;
  // The share of the machine's CPU time other processes ran while the
  // point's real runs were measured, over all of them (rpc::LoadReport::
  // others), -1 when unknown; `shared` when it reached HoldShared's limit.
  double others_fraction = -1;
  bool shared = false;
  // {"runs", "order", "coverage", "violations": {"verdict", "measured",
  // "limit"}, "goodput_ratio": {...}, "others_fraction" (when known),
  // "machine_shared"}
  // (the point's own verdict is its row's "verdict")
  nlohmann::json ToJson() const;
};

// The point's verdict from its comparison (sim::CompareToRuns of its seeds
// and `runs`) and its real runs. No completed run or seed: disagrees.
PointVerdict JudgePoint(const sim::Comparison& comparison,
                        const std::vector<sim::ScenarioResult>& runs,
                        const sim::Tolerance& tolerance = sim::Tolerance());

// Records the point's runs' share of others (`others_fraction`, -1
// unknown); at `limit` or more the verdict becomes undecided and `shared`.
void HoldShared(PointVerdict& v, double others_fraction, double limit);

// How many points of a run have each verdict.
struct VerdictCounts {
  int agrees = 0, disagrees = 0, undecided = 0;
  void Add(Verdict v);
  // "8 agree, 1 disagrees, 1 undecided"
  std::string ToString() const;
  nlohmann::json ToJson() const;  // {"agrees", "disagrees", "undecided"}
};

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_NCONNECT_VALIDATION_VERDICT_H_
