#include "harness/aa_test.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
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

constexpr const char* kNoiseSchema = "secmode-noise/1";
// A noise.json larger than this is not one `secmode noise` wrote (its rows
// are those of one run); it is refused before it is read into memory.
constexpr uintmax_t kMaxNoiseFileBytes = 64u << 20;

std::string RunDir(const std::string& out, char side, size_t i) {
  return out + "/" + side + "/" + common::Sprintf("%02zu", i + 1);
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
  n.single_run_ratio = ChangeToStandOut(n.log_sd, n.runs, alpha, 1, 1);
  return n;
}

}  // namespace

double ChangeToStandOut(double log_sd, size_t runs, double alpha, size_t a_runs, size_t b_runs) {
  if (runs < 2 || a_runs == 0 || b_runs == 0) return 1;
  const double q = common::StudentTQuantile(static_cast<double>(runs - 1), alpha);
  return std::exp(q * log_sd *
                  std::sqrt(1.0 / static_cast<double>(a_runs) + 1.0 / static_cast<double>(b_runs)));
}

VerdictRepeats RepeatsOfVerdicts(const std::vector<RunResults>& a,
                                 const std::vector<RunResults>& b) {
  std::vector<const RunResults*> runs;  // A1 B1 A2 B2 ...
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i < a.size()) runs.push_back(&a[i]);
    if (i < b.size()) runs.push_back(&b[i]);
  }
  VerdictRepeats v;
  std::map<std::string, size_t> index;
  for (size_t k = 0; k < runs.size(); ++k) {
    if (!runs[k]->nconnect.is_array()) continue;
    for (const json& row : runs[k]->nconnect) {
      if (!row.is_object() || !row.contains("kind") || row["kind"] != "validation") continue;
      if (!row.contains("name") || !row["name"].is_string()) continue;
      if (!row.contains("verdict") || !row["verdict"].is_string()) continue;
      const std::string name = row["name"].get<std::string>();
      auto [it, added] = index.emplace(name, v.points.size());
      if (added) v.points.push_back({name, std::vector<std::string>(runs.size()), false});
      v.points[it->second].verdicts[k] = row["verdict"].get<std::string>();
    }
  }
  for (VerdictRepeat& p : v.points) {
    p.same = std::all_of(p.verdicts.begin(), p.verdicts.end(),
                         [&p](const std::string& x) { return x == p.verdicts.front(); }) &&
             !p.verdicts.front().empty();
    v.same += p.same;
  }
  for (size_t k = 0; !v.points.empty() && k + 1 < runs.size(); ++k) {
    size_t both = 0, same = 0, contradicted = 0;
    for (const VerdictRepeat& p : v.points) {
      const std::string &x = p.verdicts[k], &y = p.verdicts[k + 1];
      if (x.empty() || y.empty()) continue;
      ++both;
      same += x == y;
      contradicted += (x == "agrees" && y == "disagrees") || (x == "disagrees" && y == "agrees");
    }
    v.pair_points.push_back(both);
    v.pair_same.push_back(same);
    v.pair_contradicted.push_back(contradicted);
  }
  return v;
}

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
  r.validation = RepeatsOfVerdicts(a, b);
  r.machine = a.front().machine;
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
  json points = json::array();
  for (const VerdictRepeat& p : r.validation.points) {
    points.push_back({{"name", p.name}, {"verdicts", p.verdicts}, {"same", p.same}});
  }
  json pairs = json::array();
  for (size_t k = 0; k < r.validation.pair_points.size(); ++k) {
    pairs.push_back({{"points", r.validation.pair_points[k]},
                     {"same", r.validation.pair_same[k]},
                     {"contradicted", r.validation.pair_contradicted[k]}});
  }
  const common::MachineInfo& m = r.machine;
  return {{"schema", kNoiseSchema},
          {"run_args", o.run_args},
          {"machine",
           {{"hostname", m.hostname},
            {"cpu_model", m.cpu_model},
            {"logical_cpus", m.logical_cpus},
            {"kernel", m.kernel},
            {"build_type", m.build_type},
            {"secmode_commit", m.secmode_commit}}},
          {"runs_per_side", o.runs_per_side},
          {"alpha", o.alpha},
          {"runs", {{"a", r.comparison.a_labels}, {"b", r.comparison.b_labels}}},
          {"tested", r.tested},
          {"false_positives", r.false_positives},
          {"false_positive_rate", r.false_positive_rate},
          {"rows", rows},
          {"validation",
           {{"points", r.validation.points.size()},
            {"same", r.validation.same},
            {"pairs", pairs},
            {"rows", points}}}};
}

namespace {

// A field of a noise.json object: present, of the type asked, in range.
// Errors name the field's place ("rows[3].log_sd").
Status Field(const json& o, const std::string& where, const char* k, std::string* out) {
  if (!o.contains(k) || !o[k].is_string()) {
    return Status::Corrupt(where + k + ": expected a string");
  }
  *out = o[k].get<std::string>();
  return Status::Ok();
}

Status Field(const json& o, const std::string& where, const char* k, size_t* out, size_t min,
             size_t max) {
  if (!o.contains(k) || !o[k].is_number_unsigned() || o[k].get<uint64_t>() < min ||
      o[k].get<uint64_t>() > max) {
    return Status::Corrupt(where + k + ": expected a whole number from " + std::to_string(min) +
                           " to " + std::to_string(max));
  }
  *out = static_cast<size_t>(o[k].get<uint64_t>());
  return Status::Ok();
}

Status Field(const json& o, const std::string& where, const char* k, double* out, double min,
             double max) {
  if (!o.contains(k) || !o[k].is_number() || !std::isfinite(o[k].get<double>()) ||
      o[k].get<double>() < min || o[k].get<double>() > max) {
    return Status::Corrupt(where + k + ": expected a number from " + common::Fmt("%g", min) +
                           " to " + common::Fmt("%g", max));
  }
  *out = o[k].get<double>();
  return Status::Ok();
}

// A row's spread: its log sd and runs are what compare uses.
Result<RowNoise> NoiseRow(const json& row, const std::string& where) {
  if (!row.is_object()) return Status::Corrupt(where + ": expected an object");
  RowNoise n;
  SECMODE_RETURN_IF_ERROR(Field(row, where + ".", "table", &n.table));
  SECMODE_RETURN_IF_ERROR(Field(row, where + ".", "key", &n.key));
  SECMODE_RETURN_IF_ERROR(Field(row, where + ".", "unit", &n.unit));
  SECMODE_RETURN_IF_ERROR(Field(row, where + ".", "runs", &n.runs, 1, 2 * 1000));
  SECMODE_RETURN_IF_ERROR(Field(row, where + ".", "log_sd", &n.log_sd, 0, 100));
  SECMODE_RETURN_IF_ERROR(
      Field(row, where + ".", "single_run_ratio", &n.single_run_ratio, 1, 1e300));
  for (auto [k, v] : {std::pair{"median", &n.median}, {"min", &n.min}, {"max", &n.max}}) {
    SECMODE_RETURN_IF_ERROR(Field(row, where + ".", k, v, -1e300, 1e300));
  }
  return n;
}

// The machine block, which a noise.json written before it was recorded
// lacks (has_machine stays false).
Status NoiseMachine(const json& doc, NoiseFile* f) {
  if (!doc.contains("machine")) return Status::Ok();
  const json& m = doc["machine"];
  if (!m.is_object()) return Status::Corrupt("machine: expected an object");
  for (auto [k, v] : {std::pair{"hostname", &f->hostname},
                      {"cpu_model", &f->cpu_model},
                      {"kernel", &f->kernel},
                      {"build_type", &f->build_type},
                      {"secmode_commit", &f->secmode_commit}}) {
    SECMODE_RETURN_IF_ERROR(Field(m, "machine.", k, v));
  }
  size_t cpus = 0;
  SECMODE_RETURN_IF_ERROR(Field(m, "machine.", "logical_cpus", &cpus, 0, 1u << 20));
  f->logical_cpus = static_cast<int>(cpus);
  f->has_machine = true;
  return Status::Ok();
}

// The run arguments, the counts and the validation's repeats, each
// optional (a noise.json of an older `secmode noise` lacks some).
Status NoiseCounts(const json& doc, NoiseFile* f) {
  constexpr size_t kMany = size_t{1} << 40;
  if (doc.contains("run_args")) {
    const json& a = doc["run_args"];
    if (!a.is_array()) return Status::Corrupt("run_args: expected an array of strings");
    for (const json& x : a) {
      if (!x.is_string()) return Status::Corrupt("run_args: expected an array of strings");
      f->run_args.push_back(x.get<std::string>());
    }
  }
  if (doc.contains("tested")) {
    SECMODE_RETURN_IF_ERROR(Field(doc, "", "tested", &f->tested, 0, kMany));
    SECMODE_RETURN_IF_ERROR(Field(doc, "", "false_positives", &f->false_positives, 0, f->tested));
  }
  if (!doc.contains("validation")) return Status::Ok();
  const json& v = doc["validation"];
  if (!v.is_object()) return Status::Corrupt("validation: expected an object");
  SECMODE_RETURN_IF_ERROR(Field(v, "validation.", "points", &f->validation_points, 0, kMany));
  SECMODE_RETURN_IF_ERROR(
      Field(v, "validation.", "same", &f->validation_same, 0, f->validation_points));
  if (!v.contains("pairs") || !v["pairs"].is_array()) {
    return Status::Corrupt("validation.pairs: expected an array");
  }
  for (size_t k = 0; k < v["pairs"].size(); ++k) {
    const json& p = v["pairs"][k];
    const std::string where = "validation.pairs[" + std::to_string(k) + "]";
    if (!p.is_object()) return Status::Corrupt(where + ": expected an object");
    size_t points = 0, same = 0, contradicted = 0;
    SECMODE_RETURN_IF_ERROR(Field(p, where + ".", "points", &points, 0, f->validation_points));
    SECMODE_RETURN_IF_ERROR(Field(p, where + ".", "same", &same, 0, points));
    if (p.contains("contradicted")) {
      SECMODE_RETURN_IF_ERROR(
          Field(p, where + ".", "contradicted", &contradicted, 0, points - same));
    }
    f->pair_points.push_back(points);
    f->pair_same.push_back(same);
    f->pair_contradicted.push_back(contradicted);
  }
  return Status::Ok();
}

Result<NoiseFile> NoiseFromJson(const json& doc) {
  NoiseFile f;
  SECMODE_RETURN_IF_ERROR(Field(doc, "", "runs_per_side", &f.runs_per_side, 1, 1000));
  SECMODE_RETURN_IF_ERROR(Field(doc, "", "alpha", &f.alpha, 1e-9, 1 - 1e-9));
  SECMODE_RETURN_IF_ERROR(NoiseMachine(doc, &f));
  SECMODE_RETURN_IF_ERROR(NoiseCounts(doc, &f));
  if (!doc.contains("rows") || !doc["rows"].is_array()) {
    return Status::Corrupt("rows: expected an array");
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < doc["rows"].size(); ++i) {
    const std::string where = "rows[" + std::to_string(i) + "]";
    SECMODE_ASSIGN_OR_RETURN(RowNoise n, NoiseRow(doc["rows"][i], where));
    if (!seen.emplace(n.table, n.key).second) {
      return Status::Corrupt(where + ": a second row of the same table and key");
    }
    f.rows.push_back(std::move(n));
  }
  return f;
}

// The runs' names as compare gives them: "A", or "A1", "A2", ...
std::string RunName(char side, size_t i, size_t n) {
  return n == 1 ? std::string(1, side) : std::string(1, side) + std::to_string(i + 1);
}

// A field of the machine and build where a noise.json's runs and `m` differ.
struct Difference {
  const char* what;
  std::string noise, here;
};
std::vector<Difference> Differences(const NoiseFile& f, const common::MachineInfo& m) {
  std::vector<Difference> out;
  auto differ = [&](const char* what, const std::string& noise, const std::string& here) {
    if (noise != here) out.push_back({what, noise, here});
  };
  differ("host", f.hostname, m.hostname);
  differ("CPU", f.cpu_model, m.cpu_model);
  differ("logical CPUs", std::to_string(f.logical_cpus), std::to_string(m.logical_cpus));
  differ("kernel", f.kernel, m.kernel);
  differ("build type", f.build_type, m.build_type);
  differ("secmode commit", f.secmode_commit, m.secmode_commit);
  return out;
}

// What is said of a noise.json that does not say where it was made.
std::string NoMachineSaid(const NoiseFile& f) {
  return f.path +
         " does not say which machine and build its runs were made on (made by an older "
         "`secmode noise`)";
}

// Where the noise was measured against where the runs were: one warning
// per field and run that differ.
std::vector<std::string> MachineWarnings(const NoiseFile& f, const std::vector<RunResults>& a,
                                         const std::vector<RunResults>& b) {
  if (!f.has_machine) return {NoMachineSaid(f) + ": its noise may not be this machine's"};
  std::vector<std::string> out;
  for (const auto& [side, runs] : {std::pair{'A', &a}, std::pair{'B', &b}}) {
    for (size_t i = 0; i < runs->size(); ++i) {
      const std::string run = "run " + RunName(side, i, runs->size());
      for (const Difference& d : Differences(f, (*runs)[i].machine)) {
        out.push_back(f.path + " was measured with " + d.what + " " + d.noise + ", " + run +
                      " with " + d.here);
      }
    }
  }
  return out;
}

}  // namespace

Result<NoiseFile> ReadNoiseFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return Status::InvalidArgument(path +
                                   ": no such file (give the noise.json `secmode noise` wrote)");
  }
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > kMaxNoiseFileBytes) {
    return Status::InvalidArgument(path + ": larger than " +
                                   std::to_string(kMaxNoiseFileBytes >> 20) +
                                   " MiB, not a noise.json of `secmode noise`");
  }
  SECMODE_ASSIGN_OR_RETURN(std::string text, common::ReadFile(path));
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Corrupt(path + " is not valid JSON");
  const std::string schema = doc.is_object() && doc.contains("schema") && doc["schema"].is_string()
                                 ? doc["schema"].get<std::string>()
                                 : "";
  if (schema != kNoiseSchema) {
    return Status::InvalidArgument(path + ": not a noise.json of `secmode noise` (" +
                                   (schema.empty()
                                        ? std::string("no schema")
                                        : "schema \"" + common::TerminalText(schema) + "\"") +
                                   ", expected \"" + kNoiseSchema + "\")");
  }
  auto f = NoiseFromJson(doc);
  if (!f.ok()) return f.status().Annotate(path);
  f->path = path;
  return f;
}

void AddNoise(const NoiseFile& noise, const std::vector<RunResults>& a,
              const std::vector<RunResults>& b, RunComparison* c) {
  c->noise.path = noise.path;
  c->noise.runs_per_side = noise.runs_per_side;
  c->noise.warnings = MachineWarnings(noise, a, b);
  std::map<std::pair<std::string, std::string>, const RowNoise*> by_key;
  std::map<std::string, std::vector<const RowNoise*>> by_table;
  for (const RowNoise& n : noise.rows) {
    if (n.runs < 2) continue;  // no spread measured
    by_key[{n.table, n.key}] = &n;
    by_table[n.table].push_back(&n);
  }
  for (RowComparison& r : c->rows) {
    if (r.verdict != Verdict::kTooFewRuns || r.a_runs == 0 || r.b_runs == 0) continue;
    auto change = [&](const RowNoise& n) {
      return ChangeToStandOut(n.log_sd, n.runs, c->alpha, r.a_runs, r.b_runs);
    };
    if (auto it = by_key.find({r.table, r.key}); it != by_key.end()) {
      r.noise_ratio = change(*it->second);
      r.noise_from = "row";
    } else if (auto t = by_table.find(r.table); t != by_table.end()) {
      for (const RowNoise* n : t->second) r.noise_ratio = std::max(r.noise_ratio, change(*n));
      r.noise_from = "table";
    }
  }
}

std::vector<std::string> NoiseMachineDifferences(const NoiseFile& f, const common::MachineInfo& m) {
  if (!f.has_machine) return {common::TerminalText(NoMachineSaid(f))};
  std::vector<std::string> out;
  for (const Difference& d : Differences(f, m)) {
    out.push_back(std::string(d.what) + " " + common::TerminalText(d.noise) + ", here " +
                  common::TerminalText(d.here));
  }
  return out;
}

std::vector<TableNoise> NoiseByTable(const std::vector<RowNoise>& rows) {
  std::map<std::string, std::vector<const RowNoise*>> by_table;
  for (const RowNoise& n : rows) {
    if (n.runs >= 2) by_table[n.table].push_back(&n);  // a spread at all
  }
  std::vector<TableNoise> out;
  for (const auto& [table, members] : by_table) {
    std::vector<double> sd, single;
    TableNoise t;
    t.table = table;
    t.rows = members.size();
    const RowNoise* noisiest = members.front();
    for (const RowNoise* n : members) {
      sd.push_back(n->log_sd);
      single.push_back(n->single_run_ratio);
      if (n->log_sd > noisiest->log_sd) noisiest = n;
    }
    t.median_log_sd = common::Median(sd);
    t.max_log_sd = noisiest->log_sd;
    t.noisiest = noisiest->key;
    t.median_single_run_ratio = common::Median(single);
    t.max_single_run_ratio = *std::max_element(single.begin(), single.end());
    out.push_back(std::move(t));
  }
  return out;
}

json NoiseFloorJson(const NoiseFile& f) {
  json tables = json::array();
  for (const TableNoise& t : NoiseByTable(f.rows)) {
    tables.push_back({{"table", t.table},
                      {"rows", t.rows},
                      {"median_log_sd", t.median_log_sd},
                      {"max_log_sd", t.max_log_sd},
                      {"noisiest", t.noisiest},
                      {"median_single_run_ratio", t.median_single_run_ratio}});
  }
  json pairs = json::array();
  for (size_t k = 0; k < f.pair_points.size(); ++k) {
    pairs.push_back({{"points", f.pair_points[k]},
                     {"same", f.pair_same[k]},
                     {"contradicted", f.pair_contradicted[k]}});
  }
  return {{"file", f.path},
          {"run_args", f.run_args},
          {"runs_per_side", f.runs_per_side},
          {"alpha", f.alpha},
          {"tested", f.tested},
          {"false_positives", f.false_positives},
          {"false_positive_rate",
           f.tested ? static_cast<double>(f.false_positives) / static_cast<double>(f.tested) : 0.0},
          {"tables", tables},
          {"validation",
           {{"points", f.validation_points}, {"same", f.validation_same}, {"pairs", pairs}}}};
}

}  // namespace secmode::harness
