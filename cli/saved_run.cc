#include "cli/saved_run.h"

#include <filesystem>

#include "cli/cli.h"
#include "harness/workload_inputs.h"

namespace secmode::cli {

void AddResultsOption(CLI::App* cmd, std::string* path) {
  cmd->add_option("--results", *path,
                  "A run directory or its results.json, for the costs (default: the newest under "
                  "results/runs, else results/reference, from the current directory)");
}

harness::RunResults ReadSavedRunOrFail(const std::string& command, std::string* path) {
  if (path->empty()) {
    auto newest = harness::NewestResultsFile(std::filesystem::current_path().string());
    if (!newest.ok()) Fail(command, newest.status());
    *path = *newest;
  }
  auto run = harness::ReadResultsFile(*path);
  if (!run.ok()) Fail(command, run.status().Annotate("--results"));
  return std::move(*run);
}

}  // namespace secmode::cli
