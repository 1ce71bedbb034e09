// RunResults and results.json (schema "secmode-results/1", ../shared/DESIGN.md):
// what a run measured, as data. Sections compute into a RunResults; the
// renderers (render/) draw report.md, micro.csv and the plots from the
// results.json document alone, so a saved run can be rendered again.
//
// Sections a run did not produce stay empty and are written as empty arrays,
// never filled with made-up values. The reader accepts schema version 1 and
// says why it refuses anything else.
//
// Beyond ../shared/DESIGN.md's list, version 1 files carry (all optional to
// a reader): "sections" (per section its settings and the tables that are
// not rows, e.g. sections.gss.comparison, sections.nconnect.grid),
// "errors" (an entry of a run interrupted by a signal has "interrupted":
// "SIGINT"; sections.e2e.interrupted too), "method.cycle_source",
// "method.pinned_cpu" (a CPU number or "not pinned"), e2e rows'
// "crypto_threads", "stale_replies", "first_error", "window",
// "server_window_drops", "round", "repeats" (the row's other runs),
// "sys_just_before" (GSS rows: the sys run of the same load made just before
// each of the row's runs, each with its "round"),
// "wide_window" and "context_per_connection" (control runs, each with its
// own "repeats"), and validation rows'
// "assert_goodput" and "attribution"; micro rows' "repetitions_ns" (each
// repetition's mean), "cv" and "noisy" (ns_per_op is then the fastest, method's "micro_estimator";
// their median in files that do not name one); machine's "compiler_flags", "secmode_commit",
// "secmode_tree" and "libraries"; "noise" (NoiseJson). Files written before "sections" existed
// still read; their e2e and nconnect parts cannot be drawn again (render/report.h).
#ifndef SECMODE_HARNESS_RESULTS_H_
#define SECMODE_HARNESS_RESULTS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/machine.h"
#include "common/status.h"
#include "harness/measure.h"
#include "rpc/load.h"
#include "rpc/window_probe.h"
#include "smb/load.h"

namespace secmode::harness {

inline constexpr const char* kResultsSchema = "secmode-results/1";

struct MicroRow {
  std::string mode, engine, enctype, leg;
  size_t size = 0;
  int threads = 1;
  LegMeasurement m;
};

struct BoundRow {
  std::string primitive;
  size_t size = 0;
  double bytes_per_second = 0;
};

// How this build times operations (results.json "method").
nlohmann::json DefaultMethod();

struct RunResults;
// How the run took its micro figures from their repetitions, as its method
// says: kMicroEstimator ("fastest"), "median" for a run that does not say
// (written before it did), "" for anything else (unknown to this secmode).
std::string MicroEstimatorOf(const RunResults& r);

struct RunResults {
  common::MachineInfo machine;
  std::string command, started_at, finished_at;
  nlohmann::json method = DefaultMethod();
  std::vector<MicroRow> micro;
  std::vector<BoundRow> bounds;
  // Row arrays owned by the sections that fill them (suite/section_*.cc).
  nlohmann::json nconnect = nlohmann::json::array();
  nlohmann::json predictions = nlohmann::json::array();
  nlohmann::json e2e = nlohmann::json::array();
  // Per-section settings and tables that are not rows of the arrays above
  // (what ran, how long, comparisons), keyed by section name: "gss", "smb",
  // "e2e", "nconnect", "nconnect-validation". Everything a renderer needs
  // beyond the arrays is here; a section that did not run has no key.
  nlohmann::json sections = nlohmann::json::object();
  // What failed: {"mode", ...} or {"section", ...} objects with "error".
  // Written only when non-empty.
  nlohmann::json errors = nlohmann::json::array();
  // How busy the machine was (NoiseJson); written only when non-empty.
  nlohmann::json noise = nlohmann::json::object();
};

// The machine's noise over a run, from readings at its start and end:
// {"loadavg_before": [1, 5, 15 min], "loadavg_after": [...],
// "steal_fraction", "idle_fraction"}, each null where unknown.
nlohmann::json NoiseJson(const common::LoadAverage& load_before,
                         const common::LoadAverage& load_after, const common::CpuTimes& cpu_before,
                         const common::CpuTimes& cpu_after);

nlohmann::json ToJson(const RunResults& results);

// Checks a parsed results.json against schema 1: the schema string, the
// machine block, and every micro/bounds row's fields and types. The error
// names the first offending path ("micro[3].ns_per_op: expected a number").
common::Status ValidateResultsJson(const nlohmann::json& doc);

// Parses and validates text from a results.json.
common::Result<RunResults> ReadResultsJson(const std::string& text);
// The same from a parsed document.
common::Result<RunResults> FromJson(const nlohmann::json& doc);
// The same from a file: a results.json, or a run directory holding one.
// Errors name the path.
common::Result<RunResults> ReadResultsFile(const std::string& path);

// One `secmode load` run (rpc::RunLoad) as a JSON object: the e2e rows and
// `secmode load` print the same fields.
nlohmann::json LoadReportJson(const rpc::LoadReport& report);
// One `secmode smb-load` run (smb::RunSmbLoad) as a JSON object.
nlohmann::json SmbLoadReportJson(const smb::SmbLoadReport& report);

// One `secmode probe` (rpc::ProbeWindow) as a JSON object: the verdicts,
// `model` (the `secmode nconnect` flags they map to, where they do) and
// every test's calls as evidence.
nlohmann::json ProbeReportJson(const rpc::ProbeReport& report);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_RESULTS_H_
