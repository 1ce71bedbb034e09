// The A/A test of secmode itself (`secmode noise`): one `secmode run`
// command made 2N times as separate processes, alternately into side A and
// side B (A1 B1 A2 B2 ...: both sides see the machine's slow and quick
// stretches alike), then compared as `secmode compare A B` compares
// (harness/compare_runs.h). Nothing differs between the sides, so every
// "faster" or "slower" is a false positive: their share of the tested rows
// is the false-positive rate of compare's verdicts on this machine at that
// alpha. Each row's spread over all 2N runs is its run-to-run noise, and
// from it how far two single runs must differ before the difference stands
// out of that noise. Where the runs hold the nconnect validation, each
// point's verdict in every run says how far those verdicts repeat on this
// machine (VerdictRepeats).
//
// `secmode compare --noise noise.json A B` reads that spread back
// (ReadNoiseFile) to say, for a row with too few runs for a verdict, whether
// its B/A lies beyond what the A/A runs differed by (AddNoise). That is no
// test of the compared runs, only a measure against this machine's noise.
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
  // out of this spread at the test's alpha: ChangeToStandOut(log_sd, runs,
  // alpha, 1, 1); "a change of more than (single_run_ratio - 1)".
  double single_run_ratio = 1;
};

// One table's rows with a spread (2 or more runs): their median and largest
// spread (log_sd) with the noisiest row's key, and the median and largest
// change two single runs must show (single_run_ratio).
struct TableNoise {
  std::string table;
  size_t rows = 0;
  double median_log_sd = 0, max_log_sd = 0;
  std::string noisiest;
  double median_single_run_ratio = 1, max_single_run_ratio = 1;
};
// Per table of `rows`, in the tables' name order; rows of fewer than 2
// runs are left out, and so is a table of no other rows.
std::vector<TableNoise> NoiseByTable(const std::vector<RowNoise>& rows);

// The ratio (at least 1) by which two sides of a_runs and b_runs runs must
// differ, either way, to stand out of a run-to-run spread `log_sd` measured
// over `runs` runs: exp(t(1 - alpha / 2, runs - 1) * log_sd * sqrt(1 /
// a_runs + 1 / b_runs)), t Student's quantile; 1 for fewer than 2 runs. It
// treats a side's figure (the median of its runs) as their mean, which it
// is for a side of 1 or 2 runs.
double ChangeToStandOut(double log_sd, size_t runs, double alpha, size_t a_runs, size_t b_runs);

// A validation point's verdict ("agrees", "disagrees", "undecided":
// results.json's nconnect rows of kind "validation") in every run, in the
// order the runs were made (A1 B1 A2 B2 ...).
struct VerdictRepeat {
  std::string name;
  std::vector<std::string> verdicts;  // "" where a run has no such point
  bool same = false;                  // one verdict in every run
};
struct VerdictRepeats {
  std::vector<VerdictRepeat> points;  // in the first run's order, then any new
  size_t same = 0;                    // points with one verdict in every run
  // Per back-to-back pair of runs (1 and 2, 2 and 3, ...): the points with
  // a verdict in both, of them the ones with the same verdict, and the ones
  // that went from "agrees" to "disagrees" or back: a contradiction, where a
  // point that moved to or from "undecided" only sat on the rule's edge.
  std::vector<size_t> pair_points, pair_same, pair_contradicted;
};
// The runs of `a` and `b` taken A1 B1 A2 B2 ..., as RunAaTest makes them.
// Rows that are not objects or lack a string name or verdict are left out
// (the runs' results.json are read as untrusted).
VerdictRepeats RepeatsOfVerdicts(const std::vector<RunResults>& a,
                                 const std::vector<RunResults>& b);

struct AaResult {
  RunComparison comparison;  // A against B, as `secmode compare out/a out/b`
  size_t tested = 0;         // rows with a verdict of faster, slower or no difference
  size_t false_positives = 0;
  double false_positive_rate = 0;  // false_positives / tested; 0 when none tested
  std::vector<RowNoise> rows;
  VerdictRepeats validation;  // none when the runs hold no validation
  // The machine and build of the runs (side A's first run).
  common::MachineInfo machine;
};

// The A/A figures of two sets of runs of one build.
common::Result<AaResult> SummarizeAa(const std::vector<RunResults>& a,
                                     const std::vector<RunResults>& b, double alpha);

// Makes the runs, then SummarizeAa. InvalidArgument for fewer than 2 runs a
// side, an --out in run_args, or an out directory that exists and is not
// empty; Unavailable when a run fails (its log is out/a/NN.log, named in
// the error), with the runs already made left in place.
common::Result<AaResult> RunAaTest(const AaOptions& options);

// noise.json: the options, the machine and build of the runs (hostname,
// cpu_model, logical_cpus, kernel, build_type, secmode_commit), the counts
// and rate, every row's noise, and the validation's verdicts per run
// ("validation": points, same, pairs, and per point its verdicts).
nlohmann::json AaJson(const AaOptions& options, const AaResult& result);

// A noise.json read back, checked as untrusted input.
struct NoiseFile {
  std::string path;
  size_t runs_per_side = 0;
  double alpha = 0.05;
  // "" when the file does not say (a noise.json written before it did).
  std::string hostname, cpu_model, kernel, build_type, secmode_commit;
  int logical_cpus = 0;
  bool has_machine = false;
  std::vector<RowNoise> rows;  // single_run_ratio as the file has it (at its alpha)
  // The run arguments, the comparison's counts (AaResult's tested and
  // false_positives) and the validation's repeats (VerdictRepeats' counts;
  // its points' verdicts are not read back): what a `--publish` run
  // reports. Zero and empty where the file has none.
  std::vector<std::string> run_args;
  size_t tested = 0, false_positives = 0;
  size_t validation_points = 0, validation_same = 0;
  std::vector<size_t> pair_points, pair_same, pair_contradicted;
};

// InvalidArgument for a missing file or one that is not a noise.json of
// `secmode noise` (another schema), Corrupt for text that is not JSON or a
// field of the wrong type or range; every error names the path and, for a
// field, its place ("rows[3].log_sd: expected a number from 0 to 100").
common::Result<NoiseFile> ReadNoiseFile(const std::string& path);

// For every row of `c` with too few runs for a verdict (a side of one run),
// the measured change to stand out (RowComparison::noise_ratio): from the
// row's own spread in `noise`, else the largest of its table's rows; none
// when the table is absent too. Records the file in c->noise and warns
// (c->noise.warnings) where the noise was measured on another host, CPU,
// kernel, build type or secmode commit than a run of `a` or `b`, or does not
// say where.
void AddNoise(const NoiseFile& noise, const std::vector<RunResults>& a,
              const std::vector<RunResults>& b, RunComparison* c);

// Where the machine and build a noise.json's runs were made differ from `m`:
// one entry per field ("host a, here b"); one entry saying so for a file
// that does not say where. Empty: the same host, CPU, logical CPUs, kernel,
// build type and secmode commit.
std::vector<std::string> NoiseMachineDifferences(const NoiseFile& noise,
                                                 const common::MachineInfo& m);

// sections["noise-floor"] of a `secmode run --publish NOISE` run: the A/A
// test's figures from `noise` (checked beforehand to be this machine's and
// build's): the file, its runs and arguments, alpha, the rows tested and
// flagged and their share; per table the rows, the median and largest
// run-to-run spread (log sd) with the noisiest row's key, and the median
// change two single runs must show; the validation's points, those with one
// verdict in every run, and per back-to-back pair its points, same and
// contradicted. render/ draws it (the report's "Noise floor").
nlohmann::json NoiseFloorJson(const NoiseFile& noise);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_AA_TEST_H_
