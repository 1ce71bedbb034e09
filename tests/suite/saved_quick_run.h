// A quick `secmode run` restricted to some modes and sizes, saved as the
// CLI saves it and read back: RunSuite, the run directory written
// (render/run_dir.h), results.json parsed again and report.md read, the
// directory removed. For the tests of one section's rows and report part.
#ifndef SECMODE_TESTS_SUITE_SAVED_QUICK_RUN_H_
#define SECMODE_TESTS_SUITE_SAVED_QUICK_RUN_H_

#include <sstream>
#include <string>
#include <vector>

#include "common/files.h"
#include "harness/results.h"
#include "render/run_dir.h"
#include "suite/suite.h"

namespace secmode::suite {

struct SavedQuickRun {
  harness::RunResults results;  // as read back from results.json
  std::string report_md;
  std::string log;  // the run's log, for failure messages
};

inline common::Result<SavedQuickRun> RunQuickAndSave(const std::vector<std::string>& modes,
                                                     const std::vector<size_t>& sizes,
                                                     const std::string& command) {
  SECMODE_ASSIGN_OR_RETURN(std::string tmp, common::MakeTempDirectory("secmode-" + command + "-"));
  SuiteOptions o;
  o.quick = true;
  o.modes = modes;
  o.sizes = sizes;
  o.command = command;
  std::ostringstream log;
  SavedQuickRun out;
  common::Status done = [&]() -> common::Status {
    auto run = RunSuite(o, log);
    if (!run.ok()) return run.status().Annotate(log.str());
    const std::string dir = tmp + "/run";
    SECMODE_RETURN_IF_ERROR(render::WriteRunDirectory(dir, *run).status());
    SECMODE_ASSIGN_OR_RETURN(std::string text, common::ReadFile(dir + "/results.json"));
    SECMODE_ASSIGN_OR_RETURN(out.results, harness::ReadResultsJson(text));
    SECMODE_ASSIGN_OR_RETURN(out.report_md, common::ReadFile(dir + "/report.md"));
    return common::Status::Ok();
  }();
  (void)common::RemoveTree(tmp);
  SECMODE_RETURN_IF_ERROR(done);
  out.log = log.str();
  return out;
}

}  // namespace secmode::suite

#endif  // SECMODE_TESTS_SUITE_SAVED_QUICK_RUN_H_
