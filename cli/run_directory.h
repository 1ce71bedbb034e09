// The end of every command that writes a run directory (`secmode run`,
// `nconnect`, `merge`, `report`, `trace`): the files written atomically by
// render/run_dir.h, each warning said on stderr, a failure turned into the
// command's error, and the line that says where the run went.
#ifndef SECMODE_CLI_RUN_DIRECTORY_H_
#define SECMODE_CLI_RUN_DIRECTORY_H_

#include <string>
#include <vector>

#include "harness/results.h"

namespace secmode::cli {

// A run's results, started now on this machine by this command line.
harness::RunResults NewRunResults();

// Writes `results` to the run directory `dir` (render::WriteRunDirectory:
// results.json, then the report drawn from it), says each warning on stderr
// ("secmode <command>: <warning>") and returns the paths written (dir/name,
// results.json first). Fail(command, ...) when they could not be written,
// the cause annotated with `unsaved` when given.
std::vector<std::string> WriteRunDirectoryOrFail(const std::string& command, const std::string& dir,
                                                 const harness::RunResults& results,
                                                 const std::string& unsaved = "");

// The same for a saved run drawn again (render::RenderSavedRun: DIR's
// results.json into `out_dir`, default DIR).
std::vector<std::string> RenderSavedRunOrFail(const std::string& command, const std::string& dir,
                                              const std::string& out_dir);

// "<what> <path> <path>...": where a run went, a line on stdout.
void PrintWritten(const std::string& what, const std::vector<std::string>& paths);

}  // namespace secmode::cli

#endif  // SECMODE_CLI_RUN_DIRECTORY_H_
