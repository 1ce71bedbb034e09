#include "harness/workload_inputs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/stats.h"
#include "harness/modes.h"
#include "smb/client.h"
#include "smb/legs.h"
#include "smb/message.h"
#include "smb/transform.h"

namespace secmode::harness {

using common::Result;
using common::Status;

std::optional<double> BusyCpuNsPerCall(const nlohmann::json& row, int logical_cpus) {
  const double idle = row.value("idle_fraction", -1.0);
  const double steal = std::max(0.0, row.value("steal_fraction", 0.0));
  const double seconds = row.value("seconds", 0.0);
  const double ops = row.value("ops", 0.0);
  if (idle < 0 || seconds <= 0 || ops <= 0 || logical_cpus <= 0) return std::nullopt;
  return logical_cpus * seconds * 1e9 * std::max(0.0, 1.0 - idle - steal) / ops;
}

namespace {

// The runs of `row` that have a busy CPU per call, the cheapest first: (that
// figure, 0 for the row's own run or i + 1 for its repeat i); ties keep the
// runs' order.
std::vector<std::pair<double, size_t>> RunsByCpu(const nlohmann::json& row, int logical_cpus) {
  std::vector<std::pair<double, size_t>> runs;
  if (auto own = BusyCpuNsPerCall(row, logical_cpus)) runs.emplace_back(*own, 0);
  if (row.contains("repeats") && row["repeats"].is_array()) {
    const nlohmann::json& repeats = row["repeats"];
    for (size_t i = 0; i < repeats.size(); ++i) {
      if (auto cpu = BusyCpuNsPerCall(repeats[i], logical_cpus)) runs.emplace_back(*cpu, i + 1);
    }
  }
  std::stable_sort(runs.begin(), runs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return runs;
}

// The median run of runs sorted by RunsByCpu: the lower middle of an even count.
size_t MedianOf(size_t runs) { return (runs - 1) / 2; }

}  // namespace

std::optional<CpuOverRuns> MedianCpuNsPerCall(const nlohmann::json& row, int logical_cpus) {
  if (!BusyCpuNsPerCall(row, logical_cpus)) return std::nullopt;
  const auto runs = RunsByCpu(row, logical_cpus);
  return CpuOverRuns{runs[MedianOf(runs.size())].first, runs.size(), runs.front().first,
                     runs.back().first};
}

void PutMedianRunFirst(nlohmann::json& row, int logical_cpus) {
  if (!row.is_object()) return;
  // A first run with failed replies stays in sight.
  if (row.contains("errors") && row["errors"].is_number() && row["errors"].get<double>() > 0) {
    return;
  }
  const auto runs = RunsByCpu(row, logical_cpus);
  if (runs.empty()) return;
  const auto [figure, run] = runs[MedianOf(runs.size())];
  // Already first, or the row's own run ties with the median.
  for (const auto& [cpu, index] : runs) {
    if (index == 0 && cpu == figure) return;
  }
  nlohmann::json& chosen = row["repeats"][run - 1];
  nlohmann::json former = nlohmann::json::object();
  for (auto& [key, value] : chosen.items()) {
    // A row's runs are its own: a run's own `repeats` (none is made) would be dropped.
    if (key == "repeats") continue;
    if (row.contains(key)) former[key] = std::move(row[key]);
    row[key] = std::move(value);
  }
  chosen = std::move(former);
}

Result<sim::LegCosts> LegCostsFromRun(const RunResults& run, const std::string& family,
                                      const std::string& engine, const std::string& enctype) {
  return LegCostsFromMicro(run.micro, family, engine, enctype);
}

Result<sim::LegCosts> LegCostsFromMicro(const std::vector<MicroRow>& micro,
                                        const std::string& family, const std::string& engine,
                                        const std::string& enctype) {
  std::set<std::string> engines;
  for (const MicroRow& m : micro) {
    if (m.threads == 1 && m.mode == family) engines.insert(m.engine);
  }
  if (engines.empty()) {
    return Status::InvalidArgument("the run has no micro rows of " + family);
  }
  auto list = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& e : s) out += (out.empty() ? "" : ", ") + e;
    return out;
  };
  std::string use_engine = engine;
  if (use_engine.empty()) {
    use_engine = engines.count("native") ? "native" : *engines.begin();
  } else if (!engines.count(use_engine)) {
    return Status::InvalidArgument("the run has no " + family + " rows with engine " + engine +
                                   " (it has " + list(engines) + ")");
  }
  std::string use_enctype = enctype;
  std::set<std::string> with_engine;
  for (const MicroRow& m : micro) {
    if (m.threads == 1 && m.mode == family && m.engine == use_engine) with_engine.insert(m.enctype);
  }
  if (use_enctype.empty()) {
    use_enctype = *with_engine.begin();
  } else if (!with_engine.count(use_enctype)) {
    return Status::InvalidArgument("the run has no " + family + ":" + use_engine +
                                   " rows with enctype " + enctype + " (it has " +
                                   list(with_engine) + ")");
  }
  sim::LegCosts out;
  out.mode = family;
  out.engine = use_engine;
  out.enctype = use_enctype;
  for (const MicroRow& m : micro) {
    if (m.threads != 1 || m.mode != family || m.engine != use_engine || m.enctype != use_enctype) {
      continue;
    }
    out.legs[m.leg][static_cast<int64_t>(m.size)] = TypicalNsPerOp(m.m);
  }
  if (sim::IsSmbMode(family)) {
    SECMODE_ASSIGN_OR_RETURN(const smb::SmbMode smb_mode, smb::ParseSmbModeName(family));
    const int64_t transform = smb_mode.protection == smb::Protection::kEncrypt
                                  ? static_cast<int64_t>(smb::kTransformHeaderSize)
                                  : 0;
    const int64_t header = static_cast<int64_t>(smb::kFrameHeaderSize) + transform +
                           static_cast<int64_t>(smb::kHeaderSize);
    out.wire = {header + static_cast<int64_t>(smb::kWriteRequestBodySize),
                header + static_cast<int64_t>(smb::kReadResponseBodySize)};
  }
  return out;
}

void UseSambaServer(sim::Environment* env) {
  constexpr int64_t kSambaMaxCredits = 8192;  // smb.conf's "smb2 max credits" default
  env->slots = kSambaMaxCredits;
  env->server_threads = 1;
}

std::vector<std::string> SmbModesOfRun(const RunResults& run) {
  std::set<std::string> families;
  for (const MicroRow& m : run.micro) {
    if (m.threads == 1 && sim::IsSmbMode(m.mode) && m.mode != "smb-plain") families.insert(m.mode);
  }
  return {families.begin(), families.end()};
}

Result<std::string> BaselineOfModes(const std::vector<std::string>& modes) {
  std::string baseline, first;
  for (const std::string& m : modes) {
    SECMODE_ASSIGN_OR_RETURN(const ModeName name, ParseModeName(m));
    if (name.family != m) {
      return Status::InvalidArgument("mode '" + m + "': give the family alone (" + name.family +
                                     "); --engine and --enctype choose its costs");
    }
    const std::string b = sim::BaselineOf(m);
    if (baseline.empty()) {
      baseline = b;
      first = m;
    } else if (b != baseline) {
      return Status::InvalidArgument("modes '" + first + "' and '" + m +
                                     "' are of two protocols (NFS against sys, SMB against "
                                     "smb-plain): predict them apart");
    }
  }
  return baseline.empty() ? "sys" : baseline;
}

namespace {

sim::CostCurve* CurveOf(sim::OpCosts& out, const std::string& op) {
  return op == "read"                          ? &out.read
         : op == "write"                       ? &out.write
         : op == "getattr" || op == "metadata" ? &out.metadata
                                               : nullptr;
}

Result<ProtocolCosts> NfsProtocolCosts(const RunResults& run, std::string* source) {
  sim::OpCosts half;
  const int cpus = run.machine.logical_cpus;
  for (const auto& row : run.e2e) {
    if (row.value("mode", "") != "sys") continue;
    if (row.value("server", std::string("secmode")) != "secmode") continue;
    if (row.value("connections", 0) <= 1 && row.value("slots", 0) <= 1) continue;
    const std::optional<CpuOverRuns> cpu = MedianCpuNsPerCall(row, cpus);
    if (!cpu) continue;
    const std::string op = row.value("op", "");
    sim::CostCurve* curve = CurveOf(half, op);
    if (curve == nullptr) continue;
    (*curve)[op == "getattr" ? 0 : row.value("size", int64_t{0})] = cpu->median_ns / 2;
  }
  if (half.read.empty() && half.write.empty() && half.metadata.empty()) {
    return Status::InvalidArgument(
        "the run has no end-to-end sys rows to take the protocol's own CPU per operation from "
        "(give --client-op-us and --server-op-us)");
  }
  if (source != nullptr) {
    *source =
        "half each of the busy CPU per call of the run's end-to-end sys rows (client, "
        "server and kernel on one machine over loopback; the median over each row's runs)";
  }
  return ProtocolCosts{half, half};
}

Result<ProtocolCosts> SmbProtocolCosts(const RunResults& run, std::string* source);

// The same for a results.json of any shape: a field of the wrong type is an
// error naming the section, not an exception.
Result<ProtocolCosts> SmbProtocolCostsChecked(const RunResults& run, std::string* source) {
  try {
    return SmbProtocolCosts(run, source);
  } catch (const nlohmann::json::exception& e) {
    return Status::Corrupt(std::string("sections.smb-e2e: ") + e.what());
  }
}

Result<ProtocolCosts> SmbProtocolCosts(const RunResults& run, std::string* source) {
  ProtocolCosts out;
  std::map<std::pair<sim::CostCurve*, int64_t>, double> least_busy;
  const int cpus = run.machine.logical_cpus;
  const nlohmann::json section = run.sections.value("smb-e2e", nlohmann::json::object());
  const nlohmann::json rows = section.value("rows", nlohmann::json::array());
  // One rule for every row: the session thread's CPU only if every
  // smb-plain run measured it (a merge of older and newer runs may mix).
  bool every_thread = true;
  for (const auto& row : rows) {
    if (!row.is_object() || row.value("mode", "") != "smb-plain") continue;
    for (const auto& r : row.value("runs", nlohmann::json::array())) {
      if (r.is_object() && r.value("server_session_thread_cpu_seconds", -1.0) <= 0) {
        every_thread = false;
      }
    }
  }
  for (const auto& row : rows) {
    if (!row.is_object() || row.value("mode", "") != "smb-plain") continue;
    std::vector<double> client, server;
    for (const auto& r : row.value("runs", nlohmann::json::array())) {
      if (!r.is_object()) continue;
      const std::optional<double> busy = BusyCpuNsPerCall(r, cpus);
      const double ops = r.value("ops", 0.0), own = r.value("client_cpu_seconds", -1.0);
      if (!busy || ops <= 0 || own < 0) continue;
      const double c = std::min(*busy, own * 1e9 / ops);
      client.push_back(c);
      // The server's one thread (UseSambaServer): the session's smbd
      // thread's own CPU where the runs measured Samba's threads; else the
      // rest of the busy CPU, all of it on that thread.
      const double thread = r.value("server_session_thread_cpu_seconds", -1.0);
      server.push_back(every_thread ? std::min(*busy - c, thread * 1e9 / ops) : *busy - c);
    }
    if (client.empty()) continue;
    const std::string op = row.value("op", "");
    sim::CostCurve* c = CurveOf(out.client, op);
    sim::CostCurve* s = CurveOf(out.server, op);
    if (c == nullptr || s == nullptr) continue;
    const int64_t size = op == "metadata" ? 0 : row.value("size", int64_t{0});
    const double cm = common::Summarize(client).median, sm = common::Summarize(server).median;
    auto [it, fresh] = least_busy.emplace(std::make_pair(c, size), cm + sm);
    if (!fresh && it->second <= cm + sm) continue;
    it->second = cm + sm;
    (*c)[size] = cm;
    (*s)[size] = sm;
  }
  if (out.client.read.empty() && out.client.write.empty() && out.client.metadata.empty()) {
    return Status::InvalidArgument(
        "the run has no smb-e2e smb-plain rows (the SMB end-to-end section against Samba) to "
        "take the protocol's own CPU per operation from (give --client-op-us and "
        "--server-op-us)");
  }
  if (source != nullptr) {
    const std::string server = section.value("server", std::string("Samba"));
    if (every_thread) {
      *source =
          "the run's smb-e2e smb-plain rows: the client's own CPU per operation, and the "
          "CPU of the thread serving the session (" +
          server +
          ": its busiest smbd main thread, system calls included) to the server's one thread; "
          "Samba's other threads and the kernel's work elsewhere are not on that thread "
          "and not modelled";
    } else {
      *source =
          "the run's smb-e2e smb-plain rows: the client's own CPU per operation, and the "
          "rest of the machine's busy CPU to the server's one thread (" +
          server +
          ", and the kernel; not every run measured Samba's threads): an upper bound on that "
          "thread's work";
    }
  }
  return out;
}

}  // namespace

Result<ProtocolCosts> ProtocolCostsFromRun(const RunResults& run, const std::string& baseline,
                                           std::string* source) {
  if (baseline == "sys") return NfsProtocolCosts(run, source);
  if (baseline == "smb-plain") return SmbProtocolCostsChecked(run, source);
  return Status::InvalidArgument("no protocol has the baseline '" + baseline + "'");
}

Result<std::string> NewestResultsFile(const std::string& root) {
  namespace fs = std::filesystem;
  for (const char* dir : {"results/runs", "results/reference"}) {
    std::error_code ec;
    const fs::path base = fs::path(root) / dir;
    if (!fs::is_directory(base, ec)) continue;
    std::string newest;
    for (const auto& entry : fs::directory_iterator(base, ec)) {
      const fs::path file = entry.path() / "results.json";
      if (entry.is_directory(ec) && fs::is_regular_file(file, ec) &&
          entry.path().filename().string() > fs::path(newest).parent_path().filename().string()) {
        newest = file.string();
      }
    }
    if (!newest.empty()) return newest;
  }
  return Status::InvalidArgument(
      "no saved run under " + root +
      "/results/runs or results/reference: run `secmode run` first, or give --results");
}

Result<int64_t> MaxTcpReceiveWindow() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_rmem");
  int64_t lo = 0, def = 0, max = 0;
  if (!(in >> lo >> def >> max) || max <= 0) {
    return Status::Unavailable("cannot read net.ipv4.tcp_rmem (/proc/sys/net/ipv4/tcp_rmem)");
  }
  return max;
}

namespace {

// Which run the costs came from, for the documents below.
nlohmann::json SourceJson(const RunResults& run, const std::string& run_path) {
  return {
      {"results", run_path}, {"cpu_model", run.machine.cpu_model}, {"started_at", run.started_at}};
}

}  // namespace

Result<nlohmann::json> PredictJobs(const RunResults& run, const std::string& run_path,
                                   const std::vector<sim::Workload>& jobs,
                                   const sim::Environment& env,
                                   const std::vector<std::string>& families,
                                   const std::string& engine, const std::string& enctype,
                                   const std::vector<std::string>& warnings) {
  SECMODE_ASSIGN_OR_RETURN(const std::string baseline, BaselineOfModes(families));
  SECMODE_ASSIGN_OR_RETURN(sim::LegCosts sys, LegCostsFromRun(run, baseline));
  const bool smb = baseline == "smb-plain";
  if (smb && !(engine.empty() && enctype.empty())) {
    return Status::InvalidArgument(
        "--engine and --enctype choose the krb5 modes' costs; the SMB modes have one each");
  }
  std::vector<sim::LegCosts> modes;
  for (const std::string& family : families) {
    if (family == baseline) continue;
    SECMODE_ASSIGN_OR_RETURN(sim::LegCosts m, LegCostsFromRun(run, family, engine, enctype));
    modes.push_back(std::move(m));
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const sim::Workload& w : jobs) {
    auto p = sim::PredictWorkload(w, env, sys, modes);
    if (!p.ok()) return p.status().Annotate("job [" + w.name + "]");
    for (const sim::ModePrediction& m : *p) {
      nlohmann::json row = m.ToJson();
      row["job"] = w.name;
      row["workload"] = w.Describe();
      row["baseline"] = baseline;
      rows.push_back(std::move(row));
    }
  }
  return nlohmann::json{{"schema", "secmode-predictions/1"},
                        {"source", SourceJson(run, run_path)},
                        {"baseline", baseline},
                        {"environment", env.ToJson()},
                        {"warnings", warnings},
                        {"predictions", rows}};
}

Result<nlohmann::json> ExplainPublished(const RunResults& run, const std::string& run_path,
                                        const sim::Workload& job, const sim::Environment& env,
                                        const std::string& engine, const std::string& enctype,
                                        double baseline_iops) {
  SECMODE_ASSIGN_OR_RETURN(sim::LegCosts sys, LegCostsFromRun(run, "sys"));
  const std::vector<sim::PublishedChange> published = sim::PublishedNfsChanges();
  std::vector<sim::LegCosts> modes;
  for (const auto& p : published) {
    auto m = LegCostsFromRun(run, p.mode, engine, enctype);
    if (!m.ok()) return m.status().Annotate("to set beside " + p.source);
    modes.push_back(std::move(m).value());
  }
  SECMODE_ASSIGN_OR_RETURN(nlohmann::json nfs,
                           sim::ExplainNfs(job, env, sys, modes, published, baseline_iops));
  nlohmann::json smb = nlohmann::json::array();
  nlohmann::json notes = nlohmann::json::array();
  auto plain = LegCostsFromRun(run, "smb-plain");
  if (!plain.ok()) {
    notes.push_back("no SMB figures explained: " + plain.status().message());
  } else {
    std::vector<sim::LegCosts> smb_modes;
    for (const std::string& f : SmbModesOfRun(run)) {
      SECMODE_ASSIGN_OR_RETURN(sim::LegCosts m, LegCostsFromRun(run, f));
      smb_modes.push_back(std::move(m));
    }
    SECMODE_ASSIGN_OR_RETURN(smb, sim::ExplainSmb(*plain, smb_modes));
  }
  return nlohmann::json{{"schema", "secmode-explain/1"},
                        {"source", SourceJson(run, run_path)},
                        {"environment", env.ToJson()},
                        {"workload", job.Describe()},
                        {"baseline_iops", baseline_iops},
                        {"nfs", nfs},
                        {"smb", smb},
                        {"notes", notes}};
}

}  // namespace secmode::harness
