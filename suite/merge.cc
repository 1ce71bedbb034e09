#include "suite/merge.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "suite/nconnect_validation_verdict.h"

namespace secmode::suite {

using common::Status;
using nlohmann::json;

namespace {

// What a shard's section says of its grid and shard ("grid": the sweep's
// by RunNconnectSweep, the validation's by RunValidationSelection; "shard":
// Shard::ToJson); `what` names the kind ("nconnect sweep"), `flag` the
// command that makes one.
struct JoinKind {
  const char* section;  // "nconnect", "nconnect-validation"
  const char* what;
  const char* flag;
};
constexpr JoinKind kSweep = {"nconnect", "nconnect sweep", "--sweep --shard I/N"};
constexpr JoinKind kValidation = {"nconnect-validation", "nconnect validation",
                                  "--validate --shard I/N"};

bool IsShard(const harness::RunResults& r, const JoinKind& k) {
  return r.sections.contains(k.section) && r.sections[k.section].is_object() &&
         r.sections[k.section].contains("shard");
}

// The shards of one grid checked and their rows by grid index.
struct Joined {
  std::map<int64_t, const harness::RunResults*> by_index;  // shard index -> its run
  std::map<size_t, json> rows;                             // grid index -> row
  json list = json::array();  // per shard: index, host, cpu_model, started_at
  size_t grid_points = 0;
};

common::Result<Joined> JoinShards(const std::vector<harness::RunResults>& shards,
                                  const JoinKind& k) {
  if (shards.empty()) return Status::InvalidArgument("merge: no shards");
  auto shard_of = [&](const harness::RunResults& r, size_t n) -> common::Result<json> {
    const std::string which = "shard " + std::to_string(n + 1) + " given";
    if (!r.sections.contains(k.section) || !r.sections[k.section].is_object() ||
        !r.sections[k.section].contains("grid")) {
      return Status::InvalidArgument("merge: the " + which + " is not an " + k.what +
                                     " (no sections." + k.section + ".grid)");
    }
    const json& s = r.sections[k.section];
    if (!s.contains("shard")) {
      return Status::InvalidArgument("merge: the " + which + " is a whole " + k.what +
                                     ", not a shard (" + k.flag + ")");
    }
    const json& sh = s["shard"];
    auto integer = [&](const char* key) {
      return sh.contains(key) && sh[key].is_number_integer() && sh[key].get<int64_t>() >= 0;
    };
    if (!sh.is_object() || !integer("index") || !integer("count") || !integer("grid_points") ||
        sh["count"].get<int64_t>() < 1 || sh["count"].get<int64_t>() > 1000000) {
      return Status::Corrupt("merge: the " + which + " has no valid sections." + k.section +
                             ".shard (index, count, grid_points)");
    }
    return s;
  };
  Joined j;
  SECMODE_ASSIGN_OR_RETURN(json first, shard_of(shards[0], 0));
  const int64_t count = first["shard"]["count"].get<int64_t>();
  j.grid_points = first["shard"]["grid_points"].get<size_t>();
  for (size_t n = 0; n < shards.size(); ++n) {
    SECMODE_ASSIGN_OR_RETURN(json s, shard_of(shards[n], n));
    if (s["grid"] != first["grid"]) {
      return Status::InvalidArgument("merge: shard " + std::to_string(n + 1) +
                                     " given ran another grid than the first");
    }
    if (s["shard"]["count"].get<int64_t>() != count) {
      return Status::InvalidArgument("merge: shard " + std::to_string(n + 1) + " given is of " +
                                     s["shard"]["count"].dump() + " shards, the first of " +
                                     std::to_string(count));
    }
    const int64_t index = s["shard"]["index"].get<int64_t>();
    if (index >= count) {
      return Status::InvalidArgument("merge: shard index " + std::to_string(index) +
                                     " out of range");
    }
    if (j.by_index.count(index)) {
      return Status::InvalidArgument("merge: shard " + std::to_string(index) + "/" +
                                     std::to_string(count) + " given twice");
    }
    j.by_index[index] = &shards[n];
    for (const json& row : shards[n].nconnect) {
      if (!row.contains("grid_index") || !row["grid_index"].is_number_integer() ||
          row["grid_index"].get<int64_t>() < 0) {
        return Status::Corrupt("merge: a row of shard " + std::to_string(index) +
                               " has no grid_index");
      }
      const size_t i = row["grid_index"].get<size_t>();
      if (i >= j.grid_points || static_cast<int64_t>(i % static_cast<size_t>(count)) != index ||
          j.rows.count(i)) {
        return Status::Corrupt("merge: shard " + std::to_string(index) + " holds row " +
                               std::to_string(i) + ", which is not its own or is repeated");
      }
      j.rows[i] = row;
    }
    j.list.push_back({{"index", index},
                      {"host", shards[n].machine.hostname},
                      {"cpu_model", shards[n].machine.cpu_model},
                      {"started_at", shards[n].started_at},
                      {"wall_seconds", s.value("wall_seconds", json())}});
  }
  for (int64_t i = 0; i < count; ++i) {
    if (!j.by_index.count(i)) {
      return Status::InvalidArgument("merge: shard " + std::to_string(i) + "/" +
                                     std::to_string(count) + " is missing");
    }
  }
  // Distinct indexes below grid_points: as many as the grid means all of them.
  if (j.rows.size() != j.grid_points) {
    return Status::Corrupt("merge: the shards hold " + std::to_string(j.rows.size()) +
                           " of their grid's " + std::to_string(j.grid_points) + " rows");
  }
  return j;
}

// The merged run's frame: shard 0's machine, command and method, the
// earliest start and the latest end, every shard's errors.
harness::RunResults Frame(const Joined& j) {
  const harness::RunResults& zero = *j.by_index.at(0);
  harness::RunResults merged;
  merged.machine = zero.machine;
  merged.command = zero.command;
  merged.method = zero.method;
  merged.started_at = zero.started_at;
  merged.finished_at = zero.finished_at;
  for (const auto& [index, r] : j.by_index) {
    merged.started_at = std::min(merged.started_at, r->started_at);
    merged.finished_at = std::max(merged.finished_at, r->finished_at);
    for (const auto& e : r->errors) merged.errors.push_back(e);
  }
  return merged;
}

// The shards ran side by side: the longest one's wall time.
double LongestWall(const Joined& j, const char* section) {
  double wall = 0;
  for (const auto& [index, r] : j.by_index) {
    const json& s = r->sections[section];
    if (s.contains("wall_seconds") && s["wall_seconds"].is_number()) {
      wall = std::max(wall, s["wall_seconds"].get<double>());
    }
  }
  return wall;
}

bool True(const json& row, const char* key) {
  return row.contains(key) && row[key].is_boolean() && row[key].get<bool>();
}

}  // namespace

const char* MergeKindName(MergeKind kind) {
  switch (kind) {
    case MergeKind::kSweepShards: return "nconnect sweep shards";
    case MergeKind::kValidationShards: return "nconnect validation shards";
    case MergeKind::kHostRuns: return "runs of different hosts";
  }
  return "?";
}

common::Result<harness::RunResults> MergeSweepShards(
    const std::vector<harness::RunResults>& shards) {
  SECMODE_ASSIGN_OR_RETURN(Joined j, JoinShards(shards, kSweep));
  harness::RunResults merged = Frame(j);
  for (auto& [i, row] : j.rows) merged.nconnect.push_back(std::move(row));
  json section = j.by_index.at(0)->sections["nconnect"];
  section.erase("shard");
  int64_t total_ops = 0, failed = 0, truncated = 0;
  for (const auto& r : merged.nconnect) {
    if (r.contains("completed") && r["completed"].is_number_integer()) {
      total_ops += r["completed"].get<int64_t>();
    }
    failed += r.contains("error") ? 1 : 0;
    truncated += True(r, "truncated") ? 1 : 0;
  }
  // Its threads are all the shards'; each shard's own figures are in "shards".
  int64_t threads = 0;
  for (const auto& [index, r] : j.by_index) {
    const json& s = r->sections["nconnect"];
    if (s.contains("threads") && s["threads"].is_number_integer()) {
      threads += s["threads"].get<int64_t>();
    }
  }
  for (size_t n = 0; n < j.list.size(); ++n) {
    const json& s = j.by_index.at(j.list[n]["index"].get<int64_t>())->sections["nconnect"];
    j.list[n]["simulator_speed"] = s.value("simulator_speed", json());
  }
  section["wall_seconds"] = LongestWall(j, "nconnect");
  section["threads"] = threads;
  section["scenarios"] = j.grid_points;
  section["total_ops"] = total_ops;
  section["failed"] = failed;
  section["truncated"] = truncated;
  section["shards"] = std::move(j.list);
  merged.sections["nconnect"] = std::move(section);
  return merged;
}

common::Result<harness::RunResults> MergeValidationShards(
    const std::vector<harness::RunResults>& shards) {
  SECMODE_ASSIGN_OR_RETURN(Joined j, JoinShards(shards, kValidation));
  harness::RunResults merged = Frame(j);
  // Each row keeps the host that measured it (its calibration is that
  // host's already).
  // A point's verdict: its three-valued "verdict" where the shard wrote one,
  // else the older two-valued reading (both quantities agree).
  auto verdict_of = [](const json& row) -> Verdict {
    if (row.contains("verdict") && row["verdict"].is_string()) {
      const std::string v = row["verdict"].get<std::string>();
      if (v == VerdictName(Verdict::kAgrees)) return Verdict::kAgrees;
      if (v == VerdictName(Verdict::kUndecided)) return Verdict::kUndecided;
      return Verdict::kDisagrees;
    }
    return True(row, "violations_agree") && True(row, "goodput_agree") ? Verdict::kAgrees
                                                                       : Verdict::kDisagrees;
  };
  std::map<int64_t, VerdictCounts> by_shard;
  VerdictCounts all;
  bool every_row_three_valued = true;
  for (auto& [i, row] : j.rows) {
    const int64_t shard = static_cast<int64_t>(i % j.by_index.size());
    row["host"] = j.by_index.at(shard)->machine.hostname;
    const Verdict v = verdict_of(row);
    by_shard[shard].Add(v);
    all.Add(v);
    every_row_three_valued = every_row_three_valued && row.contains("verdict");
    merged.nconnect.push_back(std::move(row));
  }
  for (json& entry : j.list) {
    const VerdictCounts& c = by_shard[entry["index"].get<int64_t>()];
    entry["points"] = c.agrees + c.disagrees + c.undecided;
    entry["agree"] = c.agrees;
    entry["undecided"] = c.undecided;
  }
  json section = j.by_index.at(0)->sections["nconnect-validation"];
  section.erase("shard");
  // The counts are every shard's, not the first shard's copied with its
  // section.
  if (every_row_three_valued) {
    section["verdicts"] = all.ToJson();
  } else {
    section.erase("verdicts");
  }
  section["wall_seconds"] = LongestWall(j, "nconnect-validation");
  section["shards"] = std::move(j.list);
  merged.sections["nconnect-validation"] = std::move(section);
  return merged;
}

common::Result<harness::RunResults> MergeHostRuns(const std::vector<harness::RunResults>& runs) {
  if (runs.empty()) return Status::InvalidArgument("merge: no runs");
  std::set<std::string> hosts;
  const json* shape = nullptr;
  harness::RunResults merged;
  json list = json::array();
  for (size_t n = 0; n < runs.size(); ++n) {
    const harness::RunResults& r = runs[n];
    const std::string which = "run " + std::to_string(n + 1) + " given";
    if (r.e2e.empty() || !r.sections.contains("e2e")) {
      return Status::InvalidArgument("merge: the " + which + " (" + r.machine.hostname +
                                     ") has no end-to-end rows: runs of many hosts are joined "
                                     "by their e2e section");
    }
    const std::string host = r.machine.hostname.empty() ? "unknown host" : r.machine.hostname;
    if (!hosts.insert(host).second) {
      return Status::InvalidArgument("merge: host " + host +
                                     " given twice: merge joins one run per host (two runs of "
                                     "one host: secmode compare)");
    }
    // Rows side by side must be the same load.
    const json& e2e = r.sections["e2e"];
    if (shape == nullptr) {
      shape = &e2e;
    } else {
      for (const char* key : {"connections", "slots", "slots_large_io", "seconds", "rounds"}) {
        if (e2e.value(key, json()) != shape->value(key, json())) {
          return Status::InvalidArgument("merge: the " + which + " (" + host +
                                         ") ran its e2e rows with another " + key + " (" +
                                         e2e.value(key, json()).dump() + " against " +
                                         shape->value(key, json()).dump() + ")");
        }
      }
    }
    if (n == 0) {
      merged.machine = r.machine;
      merged.command = r.command;
      merged.method = r.method;
      merged.started_at = r.started_at;
      merged.finished_at = r.finished_at;
      merged.sections["e2e"] = e2e;
    }
    merged.started_at = std::min(merged.started_at, r.started_at);
    merged.finished_at = std::max(merged.finished_at, r.finished_at);
    for (json row : r.e2e) {
      row["host"] = host;
      merged.e2e.push_back(std::move(row));
    }
    for (json e : r.errors) {
      e["host"] = host;
      merged.errors.push_back(std::move(e));
    }
    list.push_back({{"host", host},
                    {"cpu_model", r.machine.cpu_model},
                    {"logical_cpus", r.machine.logical_cpus},
                    {"kernel", r.machine.kernel},
                    {"openssl", r.machine.openssl},
                    {"secmode_commit", r.machine.secmode_commit},
                    {"started_at", r.started_at},
                    {"rows", r.e2e.size()}});
  }
  merged.sections["e2e"]["hosts"] = std::move(list);
  return merged;
}

common::Result<Merged> MergeRuns(const std::vector<harness::RunResults>& runs) {
  if (runs.empty()) return Status::InvalidArgument("merge: nothing given");
  auto kind_of = [](const harness::RunResults& r) {
    return IsShard(r, kSweep)        ? MergeKind::kSweepShards
           : IsShard(r, kValidation) ? MergeKind::kValidationShards
                                     : MergeKind::kHostRuns;
  };
  const MergeKind kind = kind_of(runs[0]);
  for (size_t n = 1; n < runs.size(); ++n) {
    if (kind_of(runs[n]) != kind) {
      return Status::InvalidArgument(std::string("merge: the inputs are of different kinds: the "
                                                 "first given is one of the ") +
                                     MergeKindName(kind) + ", input " + std::to_string(n + 1) +
                                     " one of the " + MergeKindName(kind_of(runs[n])));
    }
  }
  Merged m;
  m.kind = kind;
  switch (kind) {
    case MergeKind::kSweepShards: {
      SECMODE_ASSIGN_OR_RETURN(m.results, MergeSweepShards(runs));
      m.rows = m.results.nconnect.size();
      break;
    }
    case MergeKind::kValidationShards: {
      SECMODE_ASSIGN_OR_RETURN(m.results, MergeValidationShards(runs));
      m.rows = m.results.nconnect.size();
      break;
    }
    case MergeKind::kHostRuns: {
      SECMODE_ASSIGN_OR_RETURN(m.results, MergeHostRuns(runs));
      m.rows = m.results.e2e.size();
      break;
    }
  }
  return m;
}

}  // namespace secmode::suite
