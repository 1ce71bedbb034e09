#include "cli/run_directory.h"

#include <iostream>

#include "cli/cli.h"
#include "common/clock.h"
#include "common/format.h"
#include "common/machine.h"
#include "render/run_dir.h"

namespace secmode::cli {

namespace {

// The paths of `files` in `dir`, its warnings said; Fail when it failed.
std::vector<std::string> Written(const std::string& command, const std::string& dir,
                                 const common::Result<render::RunFiles>& files,
                                 const std::string& unsaved) {
  if (!files.ok()) {
    Fail(command, unsaved.empty() ? files.status() : files.status().Annotate(unsaved));
  }
  for (const auto& w : files->warnings) {
    std::cerr << "secmode " << command << ": " << common::TerminalText(w) << "\n";
  }
  std::vector<std::string> paths;
  for (const auto& f : files->written) paths.push_back(dir + "/" + f);
  return paths;
}

}  // namespace

harness::RunResults NewRunResults() {
  harness::RunResults results;
  results.machine = common::ReadMachineInfo();
  results.command = CommandLine();
  results.started_at = common::UtcTimestamp();
  return results;
}

std::vector<std::string> WriteRunDirectoryOrFail(const std::string& command, const std::string& dir,
                                                 const harness::RunResults& results,
                                                 const std::string& unsaved) {
  return Written(command, dir, render::WriteRunDirectory(dir, results), unsaved);
}

std::vector<std::string> RenderSavedRunOrFail(const std::string& command, const std::string& dir,
                                              const std::string& out_dir) {
  return Written(command, out_dir.empty() ? dir : out_dir, render::RenderSavedRun(dir, out_dir),
                 "");
}

void PrintWritten(const std::string& what, const std::vector<std::string>& paths) {
  std::cout << what;
  for (const auto& p : paths) std::cout << " " << p;
  std::cout << "\n";
}

}  // namespace secmode::cli
