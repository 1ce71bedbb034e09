// Section "nconnect-validation": the simulator against the real krb5p
// client and server on loopback (suite/nconnect_validation.h): the default
// grid, or the wide one with SuiteOptions::full.
#include "suite/nconnect_validation.h"
#include "suite/section.h"

namespace secmode::suite {

namespace {

std::vector<ValidationPoint> Grid(const SectionContext& ctx, const ValidationOptions& options) {
  return ctx.options.full ? WideValidationGrid(options.ops) : DefaultValidationGrid(options.ops);
}

// The real runs count calls, not seconds: the plan takes a second for each
// (a planning figure, not a measurement; the progress line scales every
// plan by how long the finished steps took, suite/progress.h).
constexpr double kPlannedSecondsPerRealRun = 1.0;

}  // namespace

double PlannedValidationSeconds(const SectionContext& ctx) {
  const ValidationOptions options = ValidationOptions::ForGrid(ctx.options.full);
  // Each point's runs and its calibration passes.
  return static_cast<double>(Grid(ctx, options).size() *
                             (options.runs + options.calibration_passes)) *
         kPlannedSecondsPerRealRun;
}

common::Status RunNconnectValidationSection(SectionContext& ctx) {
  const ValidationOptions options = ValidationOptions::ForGrid(ctx.options.full);
  ValidationRun run = RunValidation(ctx.env, Grid(ctx, options), options, ctx.log);
  PutValidation(run, ctx.results);
  return run.status;
}

}  // namespace secmode::suite
