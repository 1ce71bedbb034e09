// Sections "lab" and "smb-lab": the workload model checked on the two-host
// lab (suite/lab_validation.h): the default grid, the full one with --full;
// "lab" sys and every krb5 family the run measured with the native engine,
// "smb-lab" smb-plain, smb-sign-aes-cmac and smb-enc-aes-128-gcm against a
// throwaway Samba DC. A --quick run leaves them out (their grids alone take
// minutes; `secmode lab --quick [--smb]` runs the quick grid). Where no lab
// can be made (not root, no iproute2, no Samba) or the run lacks the
// baseline's costs, sections[...].not_run says why and the run goes on.
#include "harness/workload_inputs.h"
#include "suite/lab_validation.h"
#include "suite/section.h"

namespace secmode::suite {

using common::Status;

namespace {

Status RunLab(SectionContext& ctx, LabProtocol protocol, const char* name) {
  nlohmann::json& section = ctx.results.sections[name];
  const bool smb = protocol == LabProtocol::kSmb;
  if (ctx.options.quick) {
    section = {{"not_run", std::string("a --quick run leaves the lab out (its default grid takes "
                                       "minutes; `secmode lab --quick") +
                               (smb ? " --smb" : "") + "` runs the quick grid)"}};
    return Status::Ok();
  }
  const std::string why = LabValidationUnavailableReason(protocol);
  if (!why.empty()) {
    section = {{"not_run", why}};
    return Status::Ok();
  }
  // The model needs the baseline's legs and its end-to-end rows of this run.
  const std::string baseline = LabBaseline(protocol);
  if (!harness::LegCostsFromRun(ctx.results, baseline).ok()) {
    section = {{"not_run", "the run measured no " + baseline + " legs (the model's baseline)"}};
    return Status::Ok();
  }
  std::string source;
  if (auto c = harness::ProtocolCostsFromRun(ctx.results, baseline, &source); !c.ok()) {
    section = {{"not_run", std::string(c.status().message())}};
    return Status::Ok();
  }
  gss::Realm* realm = nullptr;
  if (!smb) {
    SECMODE_ASSIGN_OR_RETURN(realm, ctx.env.GetRealm());
  }
  LabValidationOptions o;
  o.grid = ctx.options.full ? LabGrid::kFull : LabGrid::kDefault;
  o.protocol = protocol;
  o.log = &ctx.log;
  o.interrupt = ctx.options.interrupt;
  SECMODE_ASSIGN_OR_RETURN(section, RunLabValidation(ctx.results, realm, o));
  return Status::Ok();
}

double Planned(const SectionContext& ctx, LabProtocol protocol) {
  if (ctx.options.quick || !LabValidationUnavailableReason(protocol).empty()) return 0;
  // The full SMB grid has 864 points with three modes, NFS's 768 with four.
  if (ctx.options.full) return protocol == LabProtocol::kSmb ? 3600 : 2700;
  return 300;
}

}  // namespace

double PlannedLabSeconds(const SectionContext& ctx) { return Planned(ctx, LabProtocol::kNfs); }
double PlannedSmbLabSeconds(const SectionContext& ctx) { return Planned(ctx, LabProtocol::kSmb); }

Status RunLabSection(SectionContext& ctx) { return RunLab(ctx, LabProtocol::kNfs, "lab"); }
Status RunSmbLabSection(SectionContext& ctx) { return RunLab(ctx, LabProtocol::kSmb, "smb-lab"); }

}  // namespace secmode::suite
