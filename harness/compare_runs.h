// Two runs side by side (`secmode compare A B`): every row both runs
// measured, B against A, with a verdict from the repetitions.
//
// Rows match by what they measured, not by position: micro rows by mode,
// engine, enctype, leg, size and threads; bounds by primitive and size; e2e
// rows by server, transport, mode, engine, enctype, op, size, connections,
// slots, shared context and crypto threads. A micro figure is the median of
// its repetitions, and the verdict is the two-sided Mann-Whitney U test over
// the two runs' repetitions (as Google Benchmark's compare.py does): "faster"
// or "slower" when p < alpha, "no significant difference" otherwise, and
// "too few repetitions" when either side has fewer than
// common::kMinUTestSamples. An e2e row that ran again (its figure is its
// median run, suite/section_e2e.cc) is tested the same way over its runs'
// ops/s (higher is faster; "too few repetitions" below that many runs, as
// for a --quick run's two rounds). Bounds, and e2e rows run once, are
// measured once per run: their ratio is shown with the verdict "measured once".
#ifndef SECMODE_HARNESS_COMPARE_RUNS_H_
#define SECMODE_HARNESS_COMPARE_RUNS_H_

#include <string>
#include <vector>

#include "common/stats.h"
#include "common/status.h"
#include "harness/results.h"

namespace secmode::harness {

enum class Verdict { kFaster, kSlower, kSame, kTooFewRepetitions, kMeasuredOnce };
const char* VerdictName(Verdict v);  // "faster", "slower", ...

struct RowComparison {
  std::string table;  // "micro", "bounds", "e2e"
  std::string
      key;  // what the row measured, e.g. "krb5p mit aes256-cts-hmac-sha1-96 client-seal 4 KiB"
  std::string unit;     // "ns/op" (lower is better), "MB/s", "ops/s" (higher is better)
  double a = 0, b = 0;  // A's and B's figure (micro: the medians)
  double ratio = 0;     // b / a; 0 when a is 0
  size_t a_repetitions = 0, b_repetitions = 0;
  common::UTest test;  // micro rows only
  Verdict verdict = Verdict::kMeasuredOnce;
};

struct RunComparison {
  double alpha = 0.05;
  std::string a_label, b_label;  // each run's command, commit and machine, in one line
  std::vector<RowComparison> rows;
  std::vector<std::string> only_a, only_b;  // "table: key" of rows in one run only
};

// alpha in (0, 1): the U test's significance level.
common::Result<RunComparison> CompareRuns(const RunResults& a, const RunResults& b,
                                          double alpha = 0.05);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_COMPARE_RUNS_H_
