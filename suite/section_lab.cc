// Section "lab": the workload model checked on the two-host lab
// (suite/lab_validation.h): the default grid, the full one with --full;
// sys and every krb5 family the run measured with the native engine. A
// --quick run leaves it out (its grid alone takes minutes; `secmode lab
// --quick` runs the quick grid). Where no lab can be made (not root, no
// iproute2) or the run lacks sys's costs, sections["lab"].not_run says why
// and the run goes on.
#include "harness/workload_inputs.h"
#include "lab/net_lab.h"
#include "suite/lab_validation.h"
#include "suite/section.h"

namespace secmode::suite {

using common::Status;

double PlannedLabSeconds(const SectionContext& ctx) {
  if (ctx.options.quick || !lab::LabUnavailableReason().empty()) return 0;
  return ctx.options.full ? 2700 : 300;
}

Status RunLabSection(SectionContext& ctx) {
  nlohmann::json& section = ctx.results.sections["lab"];
  if (ctx.options.quick) {
    section = {{"not_run", "a --quick run leaves the lab out (its default grid takes about five "
                           "minutes; `secmode lab --quick` runs the quick grid)"}};
    return Status::Ok();
  }
  const std::string why = lab::LabUnavailableReason();
  if (!why.empty()) {
    section = {{"not_run", why}};
    return Status::Ok();
  }
  // The model needs sys's legs and the e2e sys rows of this run.
  if (!harness::LegCostsFromRun(ctx.results, "sys").ok()) {
    section = {{"not_run", "the run measured no sys legs (the model's baseline)"}};
    return Status::Ok();
  }
  std::string source;
  if (auto c = harness::ProtocolCostsFromRun(ctx.results, "sys", &source); !c.ok()) {
    section = {{"not_run", std::string(c.status().message())}};
    return Status::Ok();
  }
  SECMODE_ASSIGN_OR_RETURN(gss::Realm * realm, ctx.env.GetRealm());
  LabValidationOptions o;
  o.grid = ctx.options.full ? LabGrid::kFull : LabGrid::kDefault;
  o.log = &ctx.log;
  o.interrupt = ctx.options.interrupt;
  SECMODE_ASSIGN_OR_RETURN(section, RunLabValidation(ctx.results, realm, o));
  return Status::Ok();
}

}  // namespace secmode::suite
