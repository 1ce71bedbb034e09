// The default suite behind `secmode run`: measures every requested mode's
// four legs at every size (the micro table), then runs every section that
// applies (suite/section.h), and returns what was measured as a RunResults.
// It writes nothing: render/run_dir.h turns the results into files.
//
// A mode or section that fails is recorded in RunResults::errors (and on the
// log) and the others still run, so nothing measured is lost. RunSuite itself
// fails only when the options are invalid, before anything is measured.
#ifndef SECMODE_SUITE_SUITE_H_
#define SECMODE_SUITE_SUITE_H_

#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "harness/results.h"

namespace secmode::suite {

inline constexpr size_t kDefaultSizes[] = {128, 4096, 65536, 1u << 20};

struct SuiteOptions {
  bool quick = false;              // shorter measurements, same coverage
  bool full = false;               // the wide nconnect validation grid (hours)
  std::vector<std::string> modes;  // mode names; empty means harness::DefaultModes()
  std::vector<size_t> sizes;       // empty means kDefaultSizes
  std::string command;             // the command line, recorded in the results
};

// Checks what RunSuite would refuse (unknown modes, enctypes, engines), so a
// caller can refuse bad options before it creates anything.
common::Status ValidateOptions(const SuiteOptions& options);

common::Result<harness::RunResults> RunSuite(const SuiteOptions& options, std::ostream& log);

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_SUITE_H_
