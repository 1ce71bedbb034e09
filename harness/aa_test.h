// The A/A test of secmode itself (`secmode noise`): one `secmode run`
// command made 2N times as separate processes, alternately into side A and
// side B (A1 B1 A2 B2 ...: both sides see the machine's slow and quick
// stretches alike), then compared as `secmode compare A B` compares
// (harness/compare_runs.h). Nothing differs between the sides, so every
// "faster" or "slower" is a false positive: their share of the tested rows
// is the false-positive rate of compare's verdicts on this machine at that
// alpha. Each row's spread over all 2N runs is its run-to-run noise, and
// from it how far two single runs must differ before the difference stands
// out of that noise.
//
// Thread safety: RunAaTest blocks while the runs go; call it from one
// thread. The runs' directories stay (they are results); noise.json is
// written atomically, after the last run.
#ifndef SECMODE_HARNESS_AA_TEST_H_
#define SECMODE_HARNESS_AA_TEST_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "harness/compare_runs.h"
#include "harness/results.h"

namespace secmode::harness {

struct AaOptions {
  std::string secmode;                // the executable whose `run` is measured; "" = this one
  std::vector<std::string> run_args;  // after `secmode run` (never --out, which is set here)
  size_t runs_per_side = 3;           // at least 2
  double alpha = 0.05;
  std::string out;  // the directory: out/a/NN, out/b/NN (the runs), out/noise.json
  int run_timeout_ms = 4 * 3600 * 1000;  // one run's limit, then it is killed
};

// One row's figure over every run of both sides.
struct RowNoise {
  std::string table, key, unit;
  size_t runs = 0;
  double median = 0, min = 0, max = 0;
  // The standard deviation of the natural logarithm of the runs' figures
  // (about the coefficient of variation for small spreads).
  double log_sd = 0;
  // The ratio two single runs of one build must differ by before it stands
  // out of this spread at the test's alpha: exp(t(1 - alpha / 2, runs - 1)
  // * log_sd * sqrt 2); "a change of more than (single_run_ratio - 1)".
  double single_run_ratio = 1;
};

struct AaResult {
  RunComparison comparison;  // A against B, as `secmode compare out/a out/b`
  size_t tested = 0;         // rows with a verdict of faster, slower or no difference
  size_t false_positives = 0;
  double false_positive_rate = 0;  // false_positives / tested; 0 when none tested
  std::vector<RowNoise> rows;
};

// The A/A figures of two sets of runs of one build.
common::Result<AaResult> SummarizeAa(const std::vector<RunResults>& a,
                                     const std::vector<RunResults>& b, double alpha);

// Makes the runs, then SummarizeAa. InvalidArgument for fewer than 2 runs a
// side, an --out in run_args, or an out directory that exists and is not
// empty; Unavailable when a run fails (its log is out/a/NN.log, named in
// the error), with the runs already made left in place.
common::Result<AaResult> RunAaTest(const AaOptions& options);

// noise.json: the options, the counts and rate, every row's noise.
nlohmann::json AaJson(const AaOptions& options, const AaResult& result);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_AA_TEST_H_
