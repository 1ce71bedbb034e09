// A slowdown planted in one row of one side, found by compare's test over
// runs (tests/harness/planted_slowdown_*test.cc): 3 + 3 runs of every leg of
// one mode at the suite's default sizes, made in turn (A1 B1 A2 B2 A3 B3),
// each written as a run directory with a results.json, then both folders
// read back and compared as `secmode compare A B` does
// (harness::ReadRunSet, harness::CompareRuns). The planted row is client-seal
// at 4 KiB in side B.
#ifndef SECMODE_TESTS_HARNESS_PLANTED_RUNS_H_
#define SECMODE_TESTS_HARNESS_PLANTED_RUNS_H_

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "common/seal.h"
#include "common/status.h"
#include "harness/compare_runs.h"
#include "harness/results.h"

namespace secmode::harness::planted {

inline constexpr common::Leg kLeg = common::Leg::kClientSeal;
inline constexpr size_t kSize = 4096;
inline constexpr size_t kRunsPerSide = 3;
inline constexpr double kAlpha = 0.05;
// Of the 15 rows left alone (4 legs x 4 sizes, less the planted one) at
// most this many may be called faster or slower. Were each flagged
// independently with probability alpha = 0.05, more than 3 would be flagged
// with probability P(Binomial(15, 0.05) >= 4) = 0.0055 (>= 5: 0.0006). The
// rows of one run share its machine state, so they are not quite
// independent: a run in a slow stretch moves many rows at once, which is
// why the measured test is labelled "timing".
inline constexpr size_t kMaxUntouchedFlagged = 3;

// One run's micro rows, measured or made up; `planted`: side B, whose
// planted row is the slowed one.
using MakeRows = std::function<common::Result<std::vector<MicroRow>>(bool planted)>;

// The planted row (client-seal at 4 KiB) among a comparison's rows.
bool IsPlanted(const RowComparison& r);

// Makes the 3 + 3 runs into root/a/NN and root/b/NN and compares them.
common::Result<RunComparison> PlantAndCompare(const std::string& root, const MakeRows& rows);

// How far the planted row's confidence interval reaches from its ratio, as a
// factor, on the side that reaches further (ratio_high / ratio above,
// ratio / ratio_low below); 0 where the row has no interval. A change of
// share s cannot stand out of runs whose reach exceeds 1 + s.
double IntervalReach(const RowComparison& r);

// Checks the comparison: every row tested over 3 + 3 runs, the planted row
// called slower, at most kMaxUntouchedFlagged of the others faster or
// slower. Prints one line of what was found (and each untouched row that
// was flagged).
void ExpectPlantedRowFound(const RunComparison& c);

// A fixture whose root() is a fresh temporary directory, removed after the
// test whatever its outcome.
class PlantedRunsTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

}  // namespace secmode::harness::planted

#endif  // SECMODE_TESTS_HARNESS_PLANTED_RUNS_H_
