#include "harness/compare_runs.h"

#include <algorithm>
#include <map>
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
    case Verdict::kTooFewRepetitions: return "too few repetitions";
    case Verdict::kMeasuredOnce: return "measured once";
  }
  return "?";
}

namespace {

// One side's figure of a row.
struct Figure {
  std::string unit;
  double value = 0;
  // micro rows: each repetition's ns/op; e2e rows that ran in rounds: each
  // run's ops/s; none for a figure measured once.
  std::vector<double> repetitions;
};
using Rows = std::map<std::pair<std::string, std::string>, Figure>;  // (table, key)

std::string Text(const json& row, const char* k) {
  if (!row.contains(k)) return "-";
  const json& v = row[k];
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  return v.dump();
}

Result<Rows> RowsOf(const RunResults& r, const char* side) {
  Rows rows;
  auto add = [&](const std::string& table, const std::string& key, Figure f) -> Status {
    if (!rows.emplace(std::make_pair(table, key), std::move(f)).second) {
      return Status::InvalidArgument(std::string("run ") + side + " has two " + table +
                                     " rows for " + key + ": cannot tell which to compare");
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
    Figure f{"ns/op", m.m.ns_per_op, m.m.repetitions_ns};
    SECMODE_RETURN_IF_ERROR(add("micro", key, std::move(f)));
  }
  for (const BoundRow& b : r.bounds) {
    SECMODE_RETURN_IF_ERROR(add("bounds", b.primitive + " " + common::SizeLabel(b.size),
                                {"MB/s", b.bytes_per_second / 1e6, {}}));
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
    Figure f{"ops/s", row["ops_per_second"].get<double>(), {}};
    if (row.contains("repeats") && row["repeats"].is_array() && !row["repeats"].empty()) {
      f.repetitions.push_back(f.value);
      for (const json& again : row["repeats"]) {
        if (again.contains("ops_per_second") && again["ops_per_second"].is_number()) {
          f.repetitions.push_back(again["ops_per_second"].get<double>());
        }
      }
    }
    SECMODE_RETURN_IF_ERROR(add("e2e", key, std::move(f)));
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

}  // namespace

Result<RunComparison> CompareRuns(const RunResults& a, const RunResults& b, double alpha) {
  if (!(alpha > 0 && alpha < 1)) {
    return Status::InvalidArgument("alpha " + common::Fmt("%g", alpha) + ": must lie in (0, 1)");
  }
  SECMODE_ASSIGN_OR_RETURN(Rows ra, RowsOf(a, "A"));
  SECMODE_ASSIGN_OR_RETURN(Rows rb, RowsOf(b, "B"));
  RunComparison out;
  out.alpha = alpha;
  out.a_label = Label(a);
  out.b_label = Label(b);
  for (const auto& [id, fa] : ra) {
    auto it = rb.find(id);
    if (it == rb.end()) {
      out.only_a.push_back(id.first + ": " + id.second);
      continue;
    }
    const Figure& fb = it->second;
    RowComparison c;
    c.table = id.first;
    c.key = id.second;
    c.unit = fa.unit;
    c.a = fa.value;
    c.b = fb.value;
    c.ratio = fa.value != 0 ? fb.value / fa.value : 0;
    c.a_repetitions = fa.repetitions.size();
    c.b_repetitions = fb.repetitions.size();
    if (c.table == "micro" || (!fa.repetitions.empty() && !fb.repetitions.empty())) {
      SECMODE_ASSIGN_OR_RETURN(c.test, common::MannWhitneyU(fa.repetitions, fb.repetitions));
      const bool lower_is_faster = c.unit == "ns/op";
      if (!c.test.applicable) {
        c.verdict = Verdict::kTooFewRepetitions;
      } else if (c.test.p >= alpha) {
        c.verdict = Verdict::kSame;
      } else {
        // The direction of what was tested: the repetitions' medians.
        const bool lower = common::Median(fb.repetitions) < common::Median(fa.repetitions);
        c.verdict = lower == lower_is_faster ? Verdict::kFaster : Verdict::kSlower;
      }
    }
    out.rows.push_back(std::move(c));
  }
  for (const auto& [id, fb] : rb) {
    if (!ra.count(id)) out.only_b.push_back(id.first + ": " + id.second);
  }
  // micro first, then bounds, then e2e; each by its key.
  auto rank = [](const std::string& t) { return t == "micro" ? 0 : t == "bounds" ? 1 : 2; };
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [&](const RowComparison& x, const RowComparison& y) {
                     return rank(x.table) < rank(y.table);
                   });
  return out;
}

}  // namespace secmode::harness
