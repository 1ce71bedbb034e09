#include "bench/suite.h"

#include "bench/measure.h"
#include "bench/modes.h"
#include "bench/nconnect_sweep.h"
#include "bench/nconnect_validate.h"
#include "bench/report.h"
#include "bench/results.h"
#include "bench/section_gss.h"
#include "bench/section_smb.h"
#include "bench/sections.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/machine.h"

namespace secmode::bench {

using common::Status;

namespace {

// Every section of the default suite beyond the micro table, in report order.
// A module adds its section here, one line.
const Section kSections[] = {
    {"gss", RunGssSection, {"krb5"}},
    {"smb", RunSmbSection, {"smb-"}},
    {"e2e", RunE2eSection, {"sys", "krb5"}},
    {"nconnect", RunNconnectSection, {}},
    {"nconnect-validation", RunNconnectValidationSection, {}},
};

}  // namespace

bool SectionApplies(const Section& section, const SuiteOptions& options) {
  if (options.modes.empty()) return true;
  for (const auto& mode : options.modes) {
    for (const auto& prefix : section.mode_prefixes) {
      if (mode.rfind(prefix, 0) == 0) return true;
    }
  }
  return false;
}

std::string DefaultOutDir() {
  return "results/runs/" + common::UtcTimestamp("%Y%m%dT%H%M%SZ") + "-" + common::Hostname();
}

common::Result<std::string> RunSuite(const SuiteOptions& options, std::ostream& log) {
  std::vector<ModeName> modes;
  if (options.modes.empty()) {
    modes = DefaultModes();
  } else {
    for (const auto& text : options.modes) {
      SECMODE_ASSIGN_OR_RETURN(ModeName name, ParseModeName(text));
      modes.push_back(name);
    }
  }
  std::vector<size_t> sizes = options.sizes;
  if (sizes.empty()) sizes.assign(std::begin(kDefaultSizes), std::end(kDefaultSizes));
  const std::string dir = options.out_dir.empty() ? DefaultOutDir() : options.out_dir;
  SECMODE_RETURN_IF_ERROR(common::MakeDirectories(dir));

  MeasureOptions mopts;
  if (options.quick) {
    mopts.min_seconds = 0.04;
    mopts.min_ops = 10;
  }
  RunResults results;
  results.machine = common::ReadMachineInfo();
  results.command = options.command;
  results.started_at = common::UtcTimestamp();
  nlohmann::json errors = nlohmann::json::array();

  ModeEnvironment env;
  for (const auto& name : modes) {
    log << "measuring " << name.ToString() << " ..." << std::flush;
    auto made = MakeAssociation(name, env);
    if (!made.ok()) {
      log << " failed: " << made.status().ToString() << "\n";
      errors.push_back({{"mode", name.ToString()}, {"error", made.status().ToString()}});
      continue;
    }
    common::Association& a = *made;
    bool failed = false;
    for (size_t size : sizes) {
      for (common::Leg leg : common::kAllLegs) {
        auto m = MeasureLeg(a, leg, size, mopts);
        if (!m.ok()) {
          log << " failed at " << common::LegName(leg) << " size " << size << ": "
              << m.status().ToString() << "\n";
          errors.push_back({{"mode", name.ToString()},
                            {"leg", common::LegName(leg)},
                            {"size", size},
                            {"error", m.status().ToString()}});
          failed = true;
          break;
        }
        results.micro.push_back({a.mode, a.engine, a.enctype, common::LegName(leg), size, 1, *m});
      }
      if (failed) break;
    }
    if (!failed) log << " done\n";
  }
  for (const Section& section : kSections) {
    if (!SectionApplies(section, options)) continue;
    log << "section " << section.name << " ..." << std::flush;
    SectionContext context{options, env, results, log};
    Status s = section.run(context);
    if (!s.ok()) {
      log << " failed: " << s.ToString() << "\n";
      errors.push_back({{"section", section.name}, {"error", s.ToString()}});
    } else {
      log << " done\n";
    }
  }
  results.finished_at = common::UtcTimestamp();

  nlohmann::json doc = ToJson(results);
  if (!errors.empty()) doc["errors"] = errors;
  SECMODE_RETURN_IF_ERROR(ValidateResultsJson(doc).Annotate("internal: results do not validate"));
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir + "/results.json", doc.dump(2) + "\n"));
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir + "/micro.csv", MicroCsv(results)));
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir + "/report.md", ReportMarkdown(results)));
  for (const auto& [name, contents] : results.extra_files) {
    SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir + "/" + name, contents));
  }
  log << "\n" << SummaryTable(results) << "\n";
  if (!errors.empty()) {
    return Status::Internal(std::to_string(errors.size()) +
                            " mode(s) failed; what was measured is in " + dir + "/results.json");
  }
  return dir;
}

}  // namespace secmode::bench
