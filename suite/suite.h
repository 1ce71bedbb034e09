// The default suite behind `secmode run`: measures every requested mode's
// four legs at every size (the micro table), then runs every section that
// applies (suite/section.h), and returns what was measured as a RunResults.
// It writes nothing: render/run_dir.h turns the results into files.
//
// A mode or section that fails is recorded in RunResults::errors (and on the
// log) and the others still run, so nothing measured is lost. RunSuite itself
// fails only when the options are invalid, before anything is measured.
//
// Interruption: when *SuiteOptions::interrupt holds a signal number (the
// CLI's SIGINT/SIGTERM watcher sets it from another thread), the run stops
// early and returns what it measured. The micro section stops before its
// next mode and the e2e section before its next run (of a row, a control or
// a later round); any other section in
// progress finishes first (the nconnect validation's grid takes minutes);
// sections not yet started are skipped. Each mode, row set or section not
// measured is an entry of RunResults::errors with "interrupted": "SIGINT".
#ifndef SECMODE_SUITE_SUITE_H_
#define SECMODE_SUITE_SUITE_H_

#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "harness/aa_test.h"
#include "harness/results.h"
#include "suite/progress.h"

namespace secmode::suite {

inline constexpr size_t kDefaultSizes[] = {128, 4096, 65536, 1u << 20};

// The section RunSuite writes itself, not a measuring section
// (suite/section.h): a `--publish` run's A/A test (SuiteOptions::noise_floor).
inline constexpr const char* kNoiseFloorSection = "noise-floor";

struct SuiteOptions {
  bool quick = false;              // shorter measurements, same coverage
  bool full = false;               // the wide nconnect validation grid (hours)
  std::vector<std::string> modes;  // mode names; empty means harness::DefaultModes()
  std::vector<size_t> sizes;       // empty means kDefaultSizes
  std::string command;             // the command line, recorded in the results
  // Repetitions of every micro figure (the fastest is the figure); 0: the
  // default, kRepetitions or kQuickRepetitions.
  size_t repetitions = 0;
  // >= 0: every micro figure is measured with its thread pinned to this CPU
  // (--pin); the sections' own threads and servers are not pinned.
  int pin_cpu = -1;
  // A signal number once the run should stop early (0: go on); null: the
  // run is never interrupted. Read between steps; owned by the caller.
  const std::atomic<int>* interrupt = nullptr;
  // Told the plan and each step's start and end (suite/progress.h); null:
  // nobody is. Owned by the caller.
  ProgressListener* progress = nullptr;
  // `--publish`: the A/A test made on this machine with this build
  // (ValidateOptions refuses another's), put into results.json as
  // sections["noise-floor"] (harness::NoiseFloorJson) for the report.
  std::optional<harness::NoiseFile> noise_floor;
};

// The signal that interrupted the run, 0 if none.
inline constexpr size_t kRepetitions = 5, kQuickRepetitions = 3, kMaxRepetitions = 100;
// The options' micro measurement: time per leg and size, minimum operations
// and repetitions (section micro and section gss's extra rows alike).
harness::MeasureOptions MicroMeasureOptions(const SuiteOptions& options);

int InterruptSignal(const SuiteOptions& options);
// "SIGINT", "SIGTERM" ...
std::string SignalName(int signal);
// An entry of RunResults::errors for what an interruption left unmeasured:
// {key: name, "interrupted": "SIGINT", "error": "<what>: the run was
// interrupted by SIGINT"}; key is "section" or "mode".
nlohmann::json InterruptedError(const std::string& key, const std::string& name, int signal,
                                const std::string& what);

// Checks what RunSuite would refuse (unknown modes, enctypes, engines), so a
// caller can refuse bad options before it creates anything.
common::Status ValidateOptions(const SuiteOptions& options);

common::Result<harness::RunResults> RunSuite(const SuiteOptions& options, std::ostream& log);

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_SUITE_H_
