// Section "nconnect-validation": the simulator against the real krb5p
// client and server on loopback (suite/nconnect_validation.h): the default
// grid, or the wide one with SuiteOptions::full.
#include "suite/nconnect_validation.h"
#include "suite/section.h"

namespace secmode::suite {

common::Status RunNconnectValidationSection(SectionContext& ctx) {
  ValidationOptions options;
  ValidationRun run = RunValidation(
      ctx.env,
      ctx.options.full ? WideValidationGrid(options.ops) : DefaultValidationGrid(options.ops),
      options, ctx.log);
  for (auto& row : run.JsonRows()) ctx.results.nconnect.push_back(std::move(row));
  if (!run.outcomes.empty()) ctx.results.sections["nconnect-validation"] = run.SectionJson();
  return run.status;
}

}  // namespace secmode::suite
