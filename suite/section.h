// Suite sections: the parts of `secmode run` beyond the per-leg micro table
// (primitive bounds, end-to-end RPC runs, the nconnect simulator sweep ...).
//
// A section is one function in its own file (bench/section_<name>.cc),
// listed once in kSections in suite.cc. It appends rows to RunResults (its
// own JSON section, bounds, report markdown, extra files). A section that
// fails returns a Status; the suite records it in "errors" and goes on.
#ifndef SECMODE_BENCH_SECTIONS_H_
#define SECMODE_BENCH_SECTIONS_H_

#include <ostream>
#include <string>
#include <vector>

#include "bench/modes.h"
#include "bench/results.h"
#include "bench/suite.h"
#include "common/status.h"

namespace secmode::bench {

struct SectionContext {
  const SuiteOptions& options;
  ModeEnvironment& env;  // the run's shared realm
  RunResults& results;
  std::ostream& log;
};

struct Section {
  const char* name;  // for the log and "errors"
  common::Status (*run)(SectionContext& context);
  // The default suite (no --modes) runs every section. A run restricted with
  // --modes runs a section only if one of its modes starts with one of these
  // prefixes; empty means "default suite only".
  std::vector<std::string> mode_prefixes;
};

// Whether `section` runs for these options (see Section::mode_prefixes).
bool SectionApplies(const Section& section, const SuiteOptions& options);

// Section functions (one file each).
common::Status RunE2eSection(SectionContext& context);  // section_e2e.cc

}  // namespace secmode::bench

#endif  // SECMODE_BENCH_SECTIONS_H_
