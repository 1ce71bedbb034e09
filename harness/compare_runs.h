// Two sides of runs compared row by row (`secmode compare A B`): every row
// both sides measured, B against A, with a verdict from the variation
// between runs.
//
// Rows match by what they measured, not by position: micro rows by mode,
// engine, enctype, leg, size and threads; bounds by primitive and size; e2e
// rows by server, transport, mode, engine, enctype, op, size, connections,
// slots, shared context and crypto threads. A run's figure of a row is what
// the run reports (a micro row: the fastest of its repetitions; an e2e row:
// its median round); a side's figure is the median over its runs.
//
// Why over runs: the repetitions inside one run share the machine's state of
// that minute (its clock, caches, neighbours), so they vary less than two
// runs do; a test over them calls most rows of two identical runs "faster"
// or "slower" (Kalibera and Jones, "Rigorous Benchmarking in Reasonable
// Time", ISMM 2013: variation lives at several levels, and a test must use
// the highest one that is repeated). The verdict is Welch's t test on the
// logarithms of the runs' figures, so it is a test of the ratio B/A and
// comes with its confidence interval; a side with one run gets no verdict,
// however many repetitions that run made.
#ifndef SECMODE_HARNESS_COMPARE_RUNS_H_
#define SECMODE_HARNESS_COMPARE_RUNS_H_

#include <string>
#include <vector>

#include "common/stats.h"
#include "common/status.h"
#include "harness/results.h"

namespace secmode::harness {

// kTooFewRuns: a side has fewer than 2 runs of the row; kNoSpread: every run
// of each side gave the same figure (copies of one run), nothing to test.
enum class Verdict { kFaster, kSlower, kSame, kTooFewRuns, kNoSpread };
const char* VerdictName(Verdict v);  // "faster", "slower", ...

struct RowComparison {
  std::string table;  // "micro", "bounds", "e2e"
  std::string
      key;  // what the row measured, e.g. "krb5p mit aes256-cts-hmac-sha1-96 client-seal 4 KiB"
  std::string unit;     // "ns/op" (lower is better), "MB/s", "ops/s" (higher is better)
  double a = 0, b = 0;  // each side's figure: the median over its runs
  double ratio = 0;     // b / a; 0 when a is 0
  // The ratio's confidence interval at 1 - alpha (exp of the t interval of
  // the logarithms' difference); both equal ratio when not tested.
  double ratio_low = 0, ratio_high = 0;
  size_t a_runs = 0, b_runs = 0;  // how many runs of each side have the row
  common::TTest test;             // over the logarithms of the runs' figures
  Verdict verdict = Verdict::kTooFewRuns;
  // With too few runs, from a noise.json (harness::AddNoise): the ratio B/A
  // must pass, either way, to stand out of the run-to-run spread of this
  // row (noise_from "row") or of its table's noisiest row (noise_from
  // "table") in that A/A test, at alpha, for sides of a_runs and b_runs
  // runs. No test of these runs. 0: not known.
  double noise_ratio = 0;
  std::string noise_from;
  // ratio lies beyond noise_ratio (above it or below its inverse).
  bool BeyondNoise() const {
    return noise_ratio > 0 && ratio > 0 && (ratio > noise_ratio || ratio < 1 / noise_ratio);
  }
};

// The noise.json a comparison was given (`compare --noise`), if any.
struct NoiseSource {
  std::string path;  // "" when none was given
  size_t runs_per_side = 0;
  std::vector<std::string> warnings;  // where it may not fit the compared runs
};

struct RunComparison {
  double alpha = 0.05;
  // Each run's command, commit and machine, in one line; one per run.
  std::vector<std::string> a_labels, b_labels;
  std::vector<RowComparison> rows;
  std::vector<std::string> only_a, only_b;  // "table: key" of rows on one side only
  NoiseSource noise;
  // Where the runs themselves may not compare (their micro figures taken by
  // different estimators, MicroEstimatorOf).
  std::vector<std::string> warnings;
};

// Each side one run or more. alpha in (0, 1): the test's significance level.
// InvalidArgument for an empty side, or a run with two rows of one key.
common::Result<RunComparison> CompareRuns(const std::vector<RunResults>& a,
                                          const std::vector<RunResults>& b, double alpha = 0.05);

// Every row of a set of runs, with each run's figure of it (the rows and
// figures CompareRuns matches), sorted by table and key. `side` names the
// runs in errors ("A" gives A1, A2, ...).
struct RowFigures {
  std::string table, key, unit;
  std::vector<double> values;  // one per run that has the row
};
common::Result<std::vector<RowFigures>> FiguresOfRuns(const std::vector<RunResults>& runs,
                                                      const char* side);

// The runs at `path`: a run directory or its results.json (one run), or a
// folder whose subfolders are run directories (a set of runs, read in the
// order of their names). Errors name the path.
common::Result<std::vector<RunResults>> ReadRunSet(const std::string& path);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_COMPARE_RUNS_H_
