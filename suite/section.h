// Suite sections: the parts of `secmode run`, each one function in its own
// file (suite/section_<name>.cc), listed once in kSections (suite.cc), each
// drawn by one renderer (render/report.cc kRenderers).
//
// A section computes: it appends rows to RunResults (micro, bounds, e2e,
// nconnect) and puts its settings and any table that is not a row into
// RunResults::sections[<name>]. It writes no Markdown and no files; the
// renderers in render/ draw its part of the report from results.json alone.
// A section that fails returns a Status; the suite records it in "errors"
// and goes on.
#ifndef SECMODE_SUITE_SECTION_H_
#define SECMODE_SUITE_SECTION_H_

#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "harness/modes.h"
#include "harness/results.h"
#include "suite/suite.h"

namespace secmode::suite {

struct SectionContext {
  const SuiteOptions& options;
  const std::vector<harness::ModeName>& modes;  // the run's modes, parsed (defaults filled in)
  const std::vector<size_t>& sizes;             // the run's sizes (defaults filled in)
  bool restricted;                              // --modes given: only what was asked
  harness::ModeEnvironment& env;                // the run's shared realm
  harness::RunResults& results;
  std::ostream& log;
  // The run's progress (may be null) and this section's first step in its
  // plan; the micro section has a step per round and says when each starts.
  ProgressListener* progress = nullptr;
  size_t first_step = 0;
};

struct Section {
  const char* name;  // for the log, "errors" and RunResults::sections
  common::Status (*run)(SectionContext& context);
  // Seconds the section's options budget for it, for the progress plan
  // (suite/progress.h); null: too short to say.
  double (*planned_seconds)(const SectionContext& context);
  // The default suite (no --modes) runs every section. A run restricted with
  // --modes runs a section only if one of its modes starts with one of these
  // prefixes; empty means "default suite only".
  std::vector<std::string> mode_prefixes;
};

// Every section's name, in run order (kSections): each must have a renderer
// (render::DrawnSections; tests/render/section_renderers_test.cc).
std::vector<std::string> SectionNames();

// Whether `section` runs for these options (see Section::mode_prefixes).
bool SectionApplies(const Section& section, const SuiteOptions& options);

// The sections' plans, each next to its budgets in its file.
size_t MicroRounds(const SectionContext& context);                // section_micro.cc
double PlannedMicroSecondsPerRound(const SectionContext& context);  // section_micro.cc
double PlannedScalingSeconds(const SectionContext& context);       // section_scaling.cc
double PlannedGssSeconds(const SectionContext& context);           // section_gss.cc
double PlannedSmbSeconds(const SectionContext& context);           // section_smb.cc
double PlannedE2eSeconds(const SectionContext& context);           // section_e2e.cc
double PlannedSmbE2eSeconds(const SectionContext& context);        // section_smb_e2e.cc
double PlannedValidationSeconds(const SectionContext& context);    // section_nconnect_validation.cc
double PlannedLabSeconds(const SectionContext& context);           // section_lab.cc
double PlannedSmbLabSeconds(const SectionContext& context);        // section_lab.cc

// The sections, one file each.
common::Status RunMicroSection(SectionContext& context);     // section_micro.cc
common::Status RunScalingSection(SectionContext& context);   // section_scaling.cc
common::Status RunGssSection(SectionContext& context);       // section_gss.cc
common::Status RunSmbSection(SectionContext& context);       // section_smb.cc
common::Status RunE2eSection(SectionContext& context);       // section_e2e.cc
common::Status RunSmbE2eSection(SectionContext& context);    // section_smb_e2e.cc
common::Status RunWindowsSection(SectionContext& context);   // section_windows.cc
common::Status RunPredictionsSection(SectionContext& context);  // section_predictions.cc
common::Status RunLabSection(SectionContext& context);          // section_lab.cc
common::Status RunSmbLabSection(SectionContext& context);       // section_lab.cc
common::Status RunNconnectSection(SectionContext& context);  // section_nconnect.cc
common::Status RunNconnectValidationSection(
    SectionContext& context);  // section_nconnect_validation.cc

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_SECTION_H_
