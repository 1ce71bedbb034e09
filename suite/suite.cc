#include "suite/suite.h"

#include <string.h>

#include "common/clock.h"
#include "common/cpu_affinity.h"
#include "common/format.h"
#include "common/machine.h"
#include "suite/section.h"

namespace secmode::suite {

using common::Status;

namespace {

// Every section in report order. A module adds its section here, one line.
const Section kSections[] = {
    {"micro", RunMicroSection, nullptr, {""}},  // a step per round (PlannedMicroSecondsPerRound)
    {"scaling", RunScalingSection, PlannedScalingSeconds, {""}},
    {"gss", RunGssSection, PlannedGssSeconds, {"krb5"}},
    {"smb", RunSmbSection, PlannedSmbSeconds, {"smb-"}},
    {"e2e", RunE2eSection, PlannedE2eSeconds, {"sys", "krb5"}},
    {"smb-e2e", RunSmbE2eSection, PlannedSmbE2eSeconds, {"smb-"}},
    {"predictions", RunPredictionsSection, nullptr, {"krb5", "smb-"}},
    {"lab", RunLabSection, PlannedLabSeconds, {"krb5"}},
    {"smb-lab", RunSmbLabSection, PlannedSmbLabSeconds, {"smb-"}},
    {"windows", RunWindowsSection, nullptr, {"krb5"}},
    {"nconnect", RunNconnectSection, nullptr, {}},
    {"nconnect-validation", RunNconnectValidationSection, PlannedValidationSeconds, {}},
};

}  // namespace

int InterruptSignal(const SuiteOptions& options) {
  return options.interrupt ? options.interrupt->load(std::memory_order_relaxed) : 0;
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

nlohmann::json InterruptedError(const std::string& key, const std::string& name, int signal,
                                const std::string& what) {
  return {{key, name},
          {"interrupted", SignalName(signal)},
          {"error", what + ": the run was interrupted by " + SignalName(signal)}};
}

std::vector<std::string> SectionNames() {
  std::vector<std::string> names;
  for (const Section& section : kSections) names.emplace_back(section.name);
  return names;
}

bool SectionApplies(const Section& section, const SuiteOptions& options) {
  if (options.modes.empty()) return true;
  for (const auto& mode : options.modes) {
    for (const auto& prefix : section.mode_prefixes) {
      if (mode.rfind(prefix, 0) == 0) return true;
    }
  }
  return false;
}

// The run's modes, the user's names parsed (defaults filled in), or every
// registered one; the one place --modes is read.
common::Result<std::vector<harness::ModeName>> RunModes(const SuiteOptions& options) {
  if (options.modes.empty()) return harness::DefaultModes();
  std::vector<harness::ModeName> modes;
  for (const auto& text : options.modes) {
    SECMODE_ASSIGN_OR_RETURN(harness::ModeName name, harness::ParseModeName(text));
    modes.push_back(name);
  }
  return modes;
}

harness::MeasureOptions MicroMeasureOptions(const SuiteOptions& options) {
  harness::MeasureOptions m;
  if (options.quick) {
    m.min_seconds = 0.04;
    m.min_ops = 10;
  }
  m.repetitions = options.repetitions > 0 ? options.repetitions
                  : options.quick         ? kQuickRepetitions
                                          : kRepetitions;
  m.pin_cpu = options.pin_cpu;
  return m;
}

Status ValidateOptions(const SuiteOptions& options) {
  if (options.repetitions > kMaxRepetitions) {
    return Status::InvalidArgument("--repetitions " + std::to_string(options.repetitions) +
                                   ": at most " + std::to_string(kMaxRepetitions));
  }
  SECMODE_RETURN_IF_ERROR(RunModes(options).status());
  if (options.pin_cpu >= 0) {
    SECMODE_RETURN_IF_ERROR(common::CheckCpuAllowed(options.pin_cpu).Annotate("--pin"));
  }
  if (options.noise_floor) {
    const std::vector<std::string> differ =
        harness::NoiseMachineDifferences(*options.noise_floor, common::ReadMachineInfo());
    if (!differ.empty()) {
      std::string what;
      for (const std::string& d : differ) what += (what.empty() ? "" : "; ") + d;
      return Status::InvalidArgument(
          "--publish " + common::TerminalText(options.noise_floor->path) +
          ": its A/A runs were not made on this machine with this build (" + what +
          "); run `secmode noise` here with this build first");
    }
  }
  return Status::Ok();
}

common::Result<harness::RunResults> RunSuite(const SuiteOptions& options, std::ostream& log) {
  SECMODE_ASSIGN_OR_RETURN(const std::vector<harness::ModeName> modes, RunModes(options));
  std::vector<size_t> sizes = options.sizes;
  if (sizes.empty()) sizes.assign(std::begin(kDefaultSizes), std::end(kDefaultSizes));

  harness::RunResults results;
  results.machine = common::ReadMachineInfo();
  results.command = options.command;
  results.started_at = common::UtcTimestamp();
  if (options.noise_floor) {
    results.sections[kNoiseFloorSection] = harness::NoiseFloorJson(*options.noise_floor);
  }
  const harness::MeasureOptions measure = MicroMeasureOptions(options);
  results.method["repetitions"] = measure.repetitions;
  results.method["warmup_ops"] = measure.warmup_ops;
  results.method["noisy_cv"] = harness::kNoisyCv;
  results.method["micro_estimator"] = harness::kMicroEstimator;
  results.method["pinned_cpu"] =
      measure.pin_cpu >= 0 ? nlohmann::json(measure.pin_cpu) : nlohmann::json("not pinned");
  results.method["micro_figure"] =
      "ns_per_op is the fastest of the repetitions' mean ns per operation; cv is their "
      "coefficient of variation; p50/p99/p999 are over every timed operation. The "
      "repetitions are taken in rounds: round r measures the r-th repetition of every "
      "figure of every mode, so they are spread over the section";
  const common::CpuTimes cpu_before = common::ReadCpuTimes();
  const common::LoadAverage load_before = common::ReadLoadAverage();
  harness::ModeEnvironment env;
  SectionContext context{options, modes, sizes, !options.modes.empty(), env, results, log};
  context.progress = options.progress;
  // The plan: a step per micro round, then one per section that applies.
  std::vector<ProgressStep> plan;
  std::vector<size_t> first_step(std::size(kSections), 0);
  for (size_t i = 0; i < std::size(kSections); ++i) {
    const Section& section = kSections[i];
    if (!SectionApplies(section, options)) continue;
    first_step[i] = plan.size();
    if (section.run == RunMicroSection) {
      const size_t rounds = MicroRounds(context);
      for (size_t r = 0; r < rounds; ++r) {
        plan.push_back(
            {"measuring round " + std::to_string(r + 1) + " of " + std::to_string(rounds),
             PlannedMicroSecondsPerRound(context)});
      }
    } else {
      plan.push_back({std::string("section ") + section.name,
                      section.planned_seconds ? section.planned_seconds(context) : 0});
    }
  }
  if (options.progress) options.progress->Planned(plan);
  std::string skipped;
  for (size_t i = 0; i < std::size(kSections); ++i) {
    const Section& section = kSections[i];
    if (!SectionApplies(section, options)) continue;
    if (const int sig = InterruptSignal(options)) {
      results.errors.push_back(InterruptedError("section", section.name, sig, "not run"));
      skipped += std::string(skipped.empty() ? "" : ", ") + section.name;
      continue;
    }
    const bool micro = section.run == RunMicroSection;  // logs per round itself
    context.first_step = first_step[i];
    if (!micro) log << "section " << section.name << " ..." << std::flush;
    if (!micro && options.progress) options.progress->Started(first_step[i]);
    Status s = section.run(context);
    if (!s.ok()) {
      log << " failed: " << s.ToString() << "\n";
      results.errors.push_back({{"section", section.name}, {"error", s.ToString()}});
    } else if (!micro) {
      log << " done\n";
    }
    if (!micro && options.progress) options.progress->Finished(first_step[i]);
  }
  if (const int sig = InterruptSignal(options)) {
    log << "interrupted by " << SignalName(sig)
        << (skipped.empty() ? std::string() : "; sections not run: " + skipped) << "\n";
  }
  results.finished_at = common::UtcTimestamp();
  results.noise = harness::NoiseJson(load_before, common::ReadLoadAverage(), cpu_before,
                                     common::ReadCpuTimes());
  return results;
}

}  // namespace secmode::suite
