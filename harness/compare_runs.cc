#include "harness/compare_runs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "common/format.h"

namespace secmode::harness {

using common::Result;
using common::Status;
using nlohmann::json;

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kFaster: return "faster";
    case Verdict::kSlower: return "slower";
    case Verdict::kSame: return "no significant difference";
    case Verdict::kTooFewRuns: return "too few runs";
    case Verdict::kNoSpread: return "runs without spread";
  }
  return "?";
}

namespace {

// A folder of runs larger than this is more likely a mistake (a whole
// results/runs/) than a set, and each run is read whole into memory.
constexpr size_t kMaxRunsPerSide = 64;

// One run's figure of a row.
struct Figure {
  std::string unit;
  double value = 0;
};
using Rows = std::map<std::pair<std::string, std::string>, Figure>;  // (table, key)

std::string Text(const json& row, const char* k) {
  if (!row.contains(k)) return "-";
  const json& v = row[k];
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  return v.dump();
}

Result<Rows> RowsOf(const RunResults& r, const std::string& side) {
  Rows rows;
  auto add = [&](const std::string& table, const std::string& key, Figure f) -> Status {
    if (!rows.emplace(std::make_pair(table, key), std::move(f)).second) {
      return Status::InvalidArgument("run " + side + " has two " + table + " rows for " + key +
                                     ": cannot tell which to compare");
    }
    return Status::Ok();
  };
  for (const MicroRow& m : r.micro) {
    std::string key = m.mode + " " + m.engine + " " + (m.enctype.empty() ? "-" : m.enctype) + " " +
                      m.leg + " " + common::SizeLabel(m.size);
    if (m.threads != 1) {
      key += ' ';
      key += std::to_string(m.threads);
      key += " threads";
    }
    SECMODE_RETURN_IF_ERROR(add("micro", key, {"ns/op", m.m.ns_per_op}));
  }
  for (const BoundRow& b : r.bounds) {
    SECMODE_RETURN_IF_ERROR(add("bounds", b.primitive + " " + common::SizeLabel(b.size),
                                {"MB/s", b.bytes_per_second / 1e6}));
  }
  for (const json& row : r.e2e) {
    if (!row.is_object() || !row.contains("ops_per_second") || !row["ops_per_second"].is_number()) {
      continue;  // a row that failed has no figure to compare
    }
    std::string key;
    for (const char* k : {"server", "transport", "mode", "engine", "enctype", "op"}) {
      key += Text(row, k);
      key += ' ';
    }
    key += row.contains("size") && row["size"].is_number_unsigned()
               ? common::SizeLabel(row["size"].get<size_t>())
               : Text(row, "size");
    key += ", nconnect ";
    key += Text(row, "connections");
    key += ", slots ";
    key += Text(row, "slots");
    if (row.contains("shared_context") && row["shared_context"].is_boolean() &&
        !row["shared_context"].get<bool>()) {
      key += ", per-connection contexts";
    }
    key += ", crypto ";
    key += Text(row, "crypto_threads");
    SECMODE_RETURN_IF_ERROR(add("e2e", key, {"ops/s", row["ops_per_second"].get<double>()}));
  }
  return rows;
}

std::string Label(const RunResults& r) {
  std::string commit = r.machine.secmode_commit.empty() ? "unknown" : r.machine.secmode_commit;
  if (commit.size() > 12) commit = commit.substr(0, 12);
  if (r.machine.secmode_tree == "dirty") commit += "+dirty";
  return "`" + r.command + "` at " + r.started_at + ", secmode " + commit + ", " +
         r.machine.cpu_model + " (" + std::to_string(r.machine.logical_cpus) + " CPUs), " +
         (r.machine.hostname.empty() ? "unknown host" : r.machine.hostname);
}

// One side's figures of a row: one per run that has it.
struct SideFigures {
  std::string unit;
  std::vector<double> values;
};
using SideRows = std::map<std::pair<std::string, std::string>, SideFigures>;

Result<SideRows> SideRowsOf(const std::vector<RunResults>& runs, const char* side) {
  SideRows rows;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string name =
        runs.size() == 1 ? std::string(side) : std::string(side) + std::to_string(i + 1);
    SECMODE_ASSIGN_OR_RETURN(Rows one, RowsOf(runs[i], name));
    for (auto& [id, f] : one) {
      SideFigures& s = rows[id];
      s.unit = f.unit;
      s.values.push_back(f.value);
    }
  }
  return rows;
}

// The test over runs: Welch's t on the logarithms, so on the ratio.
Result<RowComparison> CompareRow(const std::pair<std::string, std::string>& id,
                                 const SideFigures& fa, const SideFigures& fb, double alpha) {
  RowComparison c;
  c.table = id.first;
  c.key = id.second;
  c.unit = fa.unit;
  c.a = common::Median(fa.values);
  c.b = common::Median(fb.values);
  c.ratio = c.a != 0 ? c.b / c.a : 0;
  c.ratio_low = c.ratio_high = c.ratio;
  c.a_runs = fa.values.size();
  c.b_runs = fb.values.size();
  auto positive = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
  };
  if (!positive(fa.values) || !positive(fb.values)) return c;  // no ratio to test
  std::vector<double> la, lb;
  for (double x : fa.values) la.push_back(std::log(x));
  for (double x : fb.values) lb.push_back(std::log(x));
  SECMODE_ASSIGN_OR_RETURN(c.test, common::WelchTTest(la, lb, alpha));
  if (!c.test.applicable) {
    if (la.size() >= common::kMinTTestSamples && lb.size() >= common::kMinTTestSamples) {
      c.verdict = Verdict::kNoSpread;
    }
    return c;
  }
  c.ratio_low = std::exp(c.test.low);
  c.ratio_high = std::exp(c.test.high);
  if (c.test.p >= alpha) {
    c.verdict = Verdict::kSame;
  } else {
    const bool lower_is_faster = c.unit == "ns/op";
    const bool lower = c.test.difference < 0;
    c.verdict = lower == lower_is_faster ? Verdict::kFaster : Verdict::kSlower;
  }
  return c;
}

}  // namespace

Result<RunComparison> CompareRuns(const std::vector<RunResults>& a,
                                  const std::vector<RunResults>& b, double alpha) {
  if (!(alpha > 0 && alpha < 1)) {
    return Status::InvalidArgument("alpha " + common::Fmt("%g", alpha) + ": must lie in (0, 1)");
  }
  if (a.empty() || b.empty()) {
    return Status::InvalidArgument(std::string("side ") + (a.empty() ? "A" : "B") +
                                   " has no run to compare");
  }
  SECMODE_ASSIGN_OR_RETURN(SideRows ra, SideRowsOf(a, "A"));
  SECMODE_ASSIGN_OR_RETURN(SideRows rb, SideRowsOf(b, "B"));
  RunComparison out;
  out.alpha = alpha;
  for (const RunResults& r : a) out.a_labels.push_back(Label(r));
  for (const RunResults& r : b) out.b_labels.push_back(Label(r));
  for (const auto& [id, fa] : ra) {
    auto it = rb.find(id);
    if (it == rb.end()) {
      out.only_a.push_back(id.first + ": " + id.second);
      continue;
    }
    SECMODE_ASSIGN_OR_RETURN(RowComparison c, CompareRow(id, fa, it->second, alpha));
    out.rows.push_back(std::move(c));
  }
  for (const auto& [id, fb] : rb) {
    if (!ra.count(id)) out.only_b.push_back(id.first + ": " + id.second);
  }
  std::set<std::string> estimators;
  for (const auto* side : {&a, &b}) {
    for (const RunResults& r : *side) {
      if (!r.micro.empty()) estimators.insert(MicroEstimatorOf(r));
    }
  }
  if (estimators.size() > 1) {
    std::string names;
    for (const std::string& e : estimators) {
      names += (names.empty() ? "" : ", ") + (e.empty() ? std::string("unknown") : e);
    }
    out.warnings.push_back(
        "the runs took their micro figures from their repetitions in different ways (" + names +
        "; results.json method.micro_estimator): the fastest repetition is never above the "
        "median, so micro B/A mixes the two; compare runs of one kind");
  }
  // micro first, then bounds, then e2e; each by its key.
  auto rank = [](const std::string& t) { return t == "micro" ? 0 : t == "bounds" ? 1 : 2; };
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [&](const RowComparison& x, const RowComparison& y) {
                     return rank(x.table) < rank(y.table);
                   });
  return out;
}

Result<std::vector<RowFigures>> FiguresOfRuns(const std::vector<RunResults>& runs,
                                              const char* side) {
  SECMODE_ASSIGN_OR_RETURN(SideRows rows, SideRowsOf(runs, side));
  std::vector<RowFigures> out;
  for (auto& [id, f] : rows) out.push_back({id.first, id.second, f.unit, std::move(f.values)});
  return out;
}

Result<std::vector<RunResults>> ReadRunSet(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec) || fs::exists(fs::path(path) / "results.json", ec)) {
    SECMODE_ASSIGN_OR_RETURN(RunResults one, ReadResultsFile(path));
    return std::vector<RunResults>{std::move(one)};
  }
  std::vector<std::string> dirs;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && fs::exists(it->path() / "results.json", ec)) {
      dirs.push_back(it->path().string());
    }
    if (dirs.size() > kMaxRunsPerSide) {
      return Status::InvalidArgument(path + ": more than " + std::to_string(kMaxRunsPerSide) +
                                     " run directories; compare a smaller set");
    }
  }
  if (ec) return Status::InvalidArgument(path + ": cannot list: " + ec.message());
  if (dirs.empty()) {
    return Status::InvalidArgument(path +
                                   ": neither a run (no results.json) nor a folder of runs (no "
                                   "subfolder holds a results.json)");
  }
  std::sort(dirs.begin(), dirs.end());
  std::vector<RunResults> runs;
  for (const std::string& d : dirs) {
    SECMODE_ASSIGN_OR_RETURN(RunResults r, ReadResultsFile(d));
    runs.push_back(std::move(r));
  }
  return runs;
}

}  // namespace secmode::harness
