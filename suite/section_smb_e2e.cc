// Section "smb-e2e": every smb-* mode end to end against a throwaway Samba
// AD DC over Kerberos (smb/samba_dc.h, smb/load.h): READ and WRITE of 4 KiB
// and 1 MiB and QUERY_INFO (metadata), on one channel and on four channels
// of one session (multichannel; not smb-sign-hmac-sha256, whose SMB 2.1 has
// none). Each case runs three times, and each time every mode runs one
// after the other (smb-plain first), so drift over the section spreads over
// the modes and each repetition's change against smb-plain is taken side by
// side (suite/smb_e2e_summary.h: medians, ranges, and how much of each
// mode's extra CPU per operation its crypto legs explain).
// A --quick run measures 1 MiB READ and metadata on one channel, once each, shortly.
// Where Samba cannot run (not root, packages missing), sections["smb-e2e"]
// .not_run says why and the run goes on. Rows and settings go to
// RunResults::sections["smb-e2e"].
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "smb/load.h"
#include "smb/samba_dc.h"
#include "suite/section.h"
#include "suite/smb_e2e_summary.h"

namespace secmode::suite {

using common::Status;

namespace {

struct Case {
  smb::SmbOp op;
  uint32_t size;
  int outstanding;
};
constexpr Case kCases[] = {{smb::SmbOp::kRead, 4096, 8},
                           {smb::SmbOp::kWrite, 4096, 8},
                           {smb::SmbOp::kRead, 1u << 20, 4},
                           {smb::SmbOp::kWrite, 1u << 20, 4},
                           {smb::SmbOp::kMetadata, 0, 8}};
constexpr Case kQuickCases[] = {{smb::SmbOp::kRead, 1u << 20, 4}, {smb::SmbOp::kMetadata, 0, 8}};
constexpr int kChannels[] = {1, 4};
constexpr int kQuickChannels[] = {1};

struct Budget {
  double seconds, warmup;
  int repetitions;
};
Budget BudgetOf(const SectionContext& ctx) {
  return ctx.options.quick ? Budget{0.3, 0.05, 1} : Budget{1.0, 0.2, 3};
}

// The smb-* modes of the run (every registered one by default), once each,
// smb-plain first (each repetition's other modes run after their baseline).
std::vector<std::string> SmbModes(const SectionContext& ctx) {
  std::vector<std::string> modes;
  for (const auto& m : ctx.restricted ? ctx.modes : harness::DefaultModes()) {
    if (m.family.rfind("smb-", 0) == 0 &&
        std::find(modes.begin(), modes.end(), m.family) == modes.end()) {
      modes.push_back(m.family);
    }
  }
  std::stable_partition(modes.begin(), modes.end(),
                        [](const std::string& m) { return m == "smb-plain"; });
  return modes;
}

}  // namespace

double PlannedSmbE2eSeconds(const SectionContext& ctx) {
  if (!smb::SambaDc::Available().ok()) return 0;
  const Budget b = BudgetOf(ctx);
  const size_t cases = ctx.options.quick ? std::size(kQuickCases) : std::size(kCases);
  const size_t channels = ctx.options.quick ? std::size(kQuickChannels) : std::size(kChannels);
  // Planning figures: each row also sets its sessions up and ends them
  // (about 0.1 s); the domain controller takes about 8 s to provision and start.
  return 8 + static_cast<double>(SmbModes(ctx).size() * cases * channels) * b.repetitions *
                 (b.seconds + b.warmup + 0.1);
}

Status RunSmbE2eSection(SectionContext& ctx) {
  nlohmann::json& section = ctx.results.sections["smb-e2e"];
  const Status available = smb::SambaDc::Available();
  if (!available.ok()) {
    section = {{"not_run", std::string(available.message())}};
    return Status::Ok();
  }
  const std::vector<std::string> modes = SmbModes(ctx);
  if (modes.empty()) {
    section = {{"not_run", "the run's --modes name no smb-* mode"}};
    return Status::Ok();
  }
  auto started = smb::SambaDc::Start();
  if (!started.ok()) {
    section = {{"not_run", "Samba did not start: " + started.status().ToString()}};
    return started.status();
  }
  std::unique_ptr<smb::SambaDc> dc = std::move(started).value();
  const Budget b = BudgetOf(ctx);
  const std::vector<Case> cases =
      ctx.options.quick ? std::vector<Case>(std::begin(kQuickCases), std::end(kQuickCases))
                        : std::vector<Case>(std::begin(kCases), std::end(kCases));
  const std::vector<int> channels =
      ctx.options.quick ? std::vector<int>(std::begin(kQuickChannels), std::end(kQuickChannels))
                        : std::vector<int>(std::begin(kChannels), std::end(kChannels));
  const smb::SmbConnector connect = dc->Connector();
  // The runs in the order they are made: by case and channels, then by
  // repetition, every mode within a repetition.
  struct Step {
    Case c;
    int channels, rep;
    const std::string* mode;
  };
  std::vector<Step> plan;
  for (const Case& c : cases) {
    for (int ch : channels) {
      for (int rep = 0; rep < b.repetitions; ++rep) {
        for (const std::string& mode : modes) {
          if (ch > 1 && mode == "smb-sign-hmac-sha256") continue;  // SMB 2.1: no multichannel
          plan.push_back({c, ch, rep, &mode});
        }
      }
    }
  }
  nlohmann::json runs = nlohmann::json::array();
  Status first_failure = Status::Ok();
  bool interrupted = false;
  for (const Step& step : plan) {
    if (InterruptSignal(ctx.options)) {
      interrupted = true;
      break;
    }
    const Case& c = step.c;
    smb::SmbLoadOptions o;
    o.op = c.op;
    o.size = c.size ? c.size : 4096;
    o.outstanding = c.outstanding;
    o.channels = step.channels;
    o.seconds = b.seconds;
    o.warmup_seconds = b.warmup;
    dc->WatchThreads(&o);
    SECMODE_ASSIGN_OR_RETURN(const smb::SmbMode mode, smb::ParseSmbModeName(*step.mode));
    auto r = smb::RunSmbLoad(o, dc->ClientConfig(mode), connect);
    const std::string what = *step.mode + " " + smb::SmbOpName(c.op) + " " +
                             std::to_string(c.size) + " x" + std::to_string(step.channels) +
                             " channels, repetition " + std::to_string(step.rep + 1);
    if (!r.ok()) {
      ctx.log << "\n  smb-e2e " << what << " failed: " << r.status().ToString();
      if (first_failure.ok()) first_failure = r.status().Annotate("smb-e2e " + what);
      continue;
    }
    nlohmann::json run = harness::SmbLoadReportJson(*r);
    run["repetition"] = step.rep;
    runs.push_back(std::move(run));
    if (r->errors > 0 && first_failure.ok()) {
      first_failure = Status::Internal("smb-e2e " + what + ": " + std::to_string(r->errors) +
                                       " refused requests, first: " + r->first_error);
    }
  }
  const std::string server = "Samba " + dc->version() + " AD DC (throwaway, network namespace)";
  SECMODE_RETURN_IF_ERROR(dc->Stop());
  section = {{"server", server},
             {"seconds", b.seconds},
             {"warmup_seconds", b.warmup},
             {"repetitions", b.repetitions},
             {"transport", "tcp over a veth pair between two network namespaces"},
             {"rows", SummarizeSmbE2e(runs, ctx.results.micro, ctx.results.machine.logical_cpus)}};
  if (interrupted) {
    const int sig = InterruptSignal(ctx.options);
    section["interrupted"] = SignalName(sig);
    ctx.results.errors.push_back(
        InterruptedError("section", "smb-e2e", sig, "the rows after the last one were not run"));
  }
  return first_failure;
}

}  // namespace secmode::suite
