#include "harness/aa_test.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "common/files.h"
#include "common/format.h"
#include "common/stats.h"
#include "common/subprocess.h"

namespace secmode::harness {

using common::Result;
using common::Status;
using nlohmann::json;

namespace {

std::string RunDir(const std::string& out, char side, size_t i) {
  return out + "/" + side + "/" + common::Fmt("%02zu", i + 1);
}

Status CheckOptions(const AaOptions& o) {
  if (o.runs_per_side < 2) {
    return Status::InvalidArgument(
        "runs per side: " + std::to_string(o.runs_per_side) +
        ", must be at least 2 (the test is over runs; 3 or more find a few percent)");
  }
  if (!(o.alpha > 0 && o.alpha < 1)) return Status::InvalidArgument("alpha must lie in (0, 1)");
  if (o.out.empty()) return Status::InvalidArgument("no output directory");
  for (const std::string& arg : o.run_args) {
    if (arg == "--out" || arg.rfind("--out=", 0) == 0) {
      return Status::InvalidArgument("the run's arguments hold --out: the A/A test sets it");
    }
  }
  std::error_code ec;
  if (std::filesystem::exists(o.out, ec) && !std::filesystem::is_empty(o.out, ec)) {
    return Status::InvalidArgument(o.out + ": exists and is not empty (give a new directory)");
  }
  return Status::Ok();
}

// One `secmode run` into `dir`, its output to dir.log; its results.
Result<RunResults> MakeRun(const AaOptions& o, const std::string& dir) {
  common::Command c;
  c.argv = {o.secmode.empty() ? common::SelfPath() : o.secmode, "run"};
  c.argv.insert(c.argv.end(), o.run_args.begin(), o.run_args.end());
  c.argv.insert(c.argv.end(), {"--out", dir});
  c.log_path = dir + ".log";
  SECMODE_ASSIGN_OR_RETURN(int status, common::RunAndWait(c, o.run_timeout_ms));
  if (status != 0) {
    return Status::Unavailable(c.ToString() + " exited with status " + std::to_string(status) +
                               " (its output: " + c.log_path + ")");
  }
  return ReadResultsFile(dir);
}

RowNoise NoiseOf(const RowFigures& f, double alpha) {
  RowNoise n;
  n.table = f.table;
  n.key = f.key;
  n.unit = f.unit;
  n.runs = f.values.size();
  const common::Spread s = common::Summarize(f.values);
  n.median = s.median;
  n.min = s.min;
  n.max = s.max;
  if (n.runs < 2 || n.min <= 0) return n;
  std::vector<double> logs;
  for (double v : f.values) logs.push_back(std::log(v));
  double mean = 0;
  for (double l : logs) mean += l;
  mean /= static_cast<double>(logs.size());
  double ss = 0;
  for (double l : logs) ss += (l - mean) * (l - mean);
  n.log_sd = std::sqrt(ss / static_cast<double>(logs.size() - 1));
  const double q = common::StudentTQuantile(static_cast<double>(n.runs - 1), alpha);
  n.single_run_ratio = std::exp(q * n.log_sd * std::sqrt(2.0));
  return n;
}

}  // namespace

Result<AaResult> SummarizeAa(const std::vector<RunResults>& a, const std::vector<RunResults>& b,
                             double alpha) {
  AaResult r;
  SECMODE_ASSIGN_OR_RETURN(r.comparison, CompareRuns(a, b, alpha));
  for (const RowComparison& c : r.comparison.rows) {
    if (c.verdict == Verdict::kTooFewRuns || c.verdict == Verdict::kNoSpread) continue;
    ++r.tested;
    r.false_positives += c.verdict == Verdict::kFaster || c.verdict == Verdict::kSlower;
  }
  r.false_positive_rate =
      r.tested ? static_cast<double>(r.false_positives) / static_cast<double>(r.tested) : 0;
  std::vector<RunResults> all = a;
  all.insert(all.end(), b.begin(), b.end());
  SECMODE_ASSIGN_OR_RETURN(std::vector<RowFigures> figures, FiguresOfRuns(all, "#"));
  for (const RowFigures& f : figures) r.rows.push_back(NoiseOf(f, alpha));
  return r;
}

Result<AaResult> RunAaTest(const AaOptions& o) {
  SECMODE_RETURN_IF_ERROR(CheckOptions(o));
  for (const char* side : {"/a", "/b"}) {
    SECMODE_RETURN_IF_ERROR(common::MakeDirectories(o.out + side));
  }
  std::vector<RunResults> a, b;
  for (size_t i = 0; i < o.runs_per_side; ++i) {  // A1 B1 A2 B2 ...
    SECMODE_ASSIGN_OR_RETURN(RunResults ra, MakeRun(o, RunDir(o.out, 'a', i)));
    a.push_back(std::move(ra));
    SECMODE_ASSIGN_OR_RETURN(RunResults rb, MakeRun(o, RunDir(o.out, 'b', i)));
    b.push_back(std::move(rb));
  }
  SECMODE_ASSIGN_OR_RETURN(AaResult r, SummarizeAa(a, b, o.alpha));
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(o.out + "/noise.json", AaJson(o, r).dump(2)));
  return r;
}

json AaJson(const AaOptions& o, const AaResult& r) {
  json rows = json::array();
  for (const RowNoise& n : r.rows) {
    rows.push_back({{"table", n.table},
                    {"key", n.key},
                    {"unit", n.unit},
                    {"runs", n.runs},
                    {"median", n.median},
                    {"min", n.min},
                    {"max", n.max},
                    {"log_sd", n.log_sd},
                    {"single_run_ratio", n.single_run_ratio}});
  }
  return {{"schema", "secmode-noise/1"},
          {"run_args", o.run_args},
          {"runs_per_side", o.runs_per_side},
          {"alpha", o.alpha},
          {"runs", {{"a", r.comparison.a_labels}, {"b", r.comparison.b_labels}}},
          {"tested", r.tested},
          {"false_positives", r.false_positives},
          {"false_positive_rate", r.false_positive_rate},
          {"rows", rows}};
}

}  // namespace secmode::harness
