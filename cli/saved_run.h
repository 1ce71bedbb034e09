// The saved run a command takes its costs from (`secmode predict`,
// `secmode lab`): --results (a run directory or its results.json) or, when
// not given, the newest run under results/runs, else results/reference,
// from the current directory.
#ifndef SECMODE_CLI_SAVED_RUN_H_
#define SECMODE_CLI_SAVED_RUN_H_

#include <CLI/CLI.hpp>
#include <string>

#include "harness/results.h"

namespace secmode::cli {

// Adds --results to `cmd`, stored in *path.
void AddResultsOption(CLI::App* cmd, std::string* path);

// Reads the run *path names (the newest when empty, *path then set to it);
// Fail(command, ...) when there is none or it cannot be read.
harness::RunResults ReadSavedRunOrFail(const std::string& command, std::string* path);

}  // namespace secmode::cli

#endif  // SECMODE_CLI_SAVED_RUN_H_
