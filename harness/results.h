// RunResults and results.json (schema "secmode-results/1", ../shared/DESIGN.md).
//
// Sections a run did not produce stay empty and are written as empty arrays,
// never filled with made-up values. The reader accepts schema version 1 and
// says why it refuses anything else.
#ifndef SECMODE_BENCH_RESULTS_H_
#define SECMODE_BENCH_RESULTS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/measure.h"
#include "common/machine.h"
#include "common/status.h"

namespace secmode::bench {

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

struct RunResults {
  common::MachineInfo machine;
  std::string command, started_at, finished_at;
  std::vector<MicroRow> micro;
  std::vector<BoundRow> bounds;
  // Sections owned by later modules; JSON arrays as those modules write them.
  nlohmann::json nconnect = nlohmann::json::array();
  nlohmann::json predictions = nlohmann::json::array();
  nlohmann::json e2e = nlohmann::json::array();
  // Markdown written by suite sections (bench/sections.h), appended to
  // report.md in order. Not part of results.json.
  std::vector<std::string> report_sections;
  // Extra files a section wants next to results.json (name -> contents),
  // written atomically with the others (plots, CSVs).
  std::vector<std::pair<std::string, std::string>> extra_files;
};

nlohmann::json ToJson(const RunResults& results);

// Checks a parsed results.json against schema 1: the schema string, the
// machine block, and every micro/bounds row's fields and types. The error
// names the first offending path ("micro[3].ns_per_op: expected a number").
common::Status ValidateResultsJson(const nlohmann::json& doc);

// Parses and validates text from a results.json.
common::Result<RunResults> ReadResultsJson(const std::string& text);

}  // namespace secmode::bench

#endif  // SECMODE_BENCH_RESULTS_H_
