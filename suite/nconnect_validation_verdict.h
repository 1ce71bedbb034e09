// A validation point's verdict, three-valued, from the spread of its
// repeats (suite/nconnect_validation.h). Each quantity the point is judged
// by is taken as an interval over the point's real runs (which the
// validation spreads over its whole time, interleaved with the other
// points' runs), held against the limit the agreement rule draws around
// the model's prediction (the mean of its seeds, sim::CompareToRuns):
//  - "agrees" when the whole interval lies within the limit,
//  - "disagrees" when none of it does,
//  - "undecided" when it straddles the limit's edge: the repeats do not
//    settle the question, and another run of the validation could answer it
//    either way.
// The limits are sim::Tolerance's: violations (each run's count scaled to
// the first seed's completed operations) within a factor violation_factor
// or violation_slack events of the model's mean count, exactly zero where
// every seed says zero (the model's zero is a structural claim); goodput
// (each run's ops/s over the model's mean) within a factor goodput_factor.
// A point is judged by both: it disagrees when either does, agrees when
// both do, and is undecided otherwise.
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

struct PointVerdict {
  Interval violations, violations_limit;
  Interval goodput_ratio, goodput_limit;  // measured / simulated ops/s
  Verdict violations_verdict = Verdict::kDisagrees;
  Verdict goodput_verdict = Verdict::kDisagrees;
  Verdict verdict = Verdict::kDisagrees;
  // {"violations": {"verdict", "measured", "limit"}, "goodput_ratio": {...}}
  // (the point's own verdict is its row's "verdict")
  nlohmann::json ToJson() const;
};

// The point's verdict from its comparison (sim::CompareToRuns of its seeds
// and `runs`) and its real runs. No completed run or seed: disagrees.
PointVerdict JudgePoint(const sim::Comparison& comparison,
                        const std::vector<sim::ScenarioResult>& runs,
                        const sim::Tolerance& tolerance = sim::Tolerance());

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
