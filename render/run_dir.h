// The one writer of a run's directory: results.json, then everything drawn
// from it (report.md, micro.csv, plots). Everything is drawn in memory
// first; then every file is written to a temporary (fsynced) and only when
// all are written are they renamed over their names, results.json first
// (common::WriteFilesAtomically). So a full disk or a read-only directory
// fails with an error naming the file and the errno and leaves a previous
// run's files there as they were, and a reader never sees a truncated file.
// When drawing fails, results.json alone is still written, so what was
// measured is kept.
#ifndef SECMODE_RENDER_RUN_DIR_H_
#define SECMODE_RENDER_RUN_DIR_H_

#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "harness/results.h"

namespace secmode::render {

// results/runs/<UTC timestamp>-<hostname>, relative to the working directory.
std::string DefaultOutDir();

// The files a run directory holds, in writing order.
struct RunFiles {
  std::vector<std::string> written;   // names, results.json first
  std::vector<std::string> warnings;  // e.g. a plot that could not be drawn
};

// Creates `dir` if needed, validates and writes results.json, then renders
// from the written document (not from `results` itself) and writes the rest.
common::Result<RunFiles> WriteRunDirectory(const std::string& dir,
                                           const harness::RunResults& results);

// `secmode report DIR`: reads DIR/results.json and draws report.md,
// micro.csv and the plots again into `out_dir` (default: DIR).
common::Result<RunFiles> RenderSavedRun(const std::string& dir, const std::string& out_dir = "");

}  // namespace secmode::render

#endif  // SECMODE_RENDER_RUN_DIR_H_
