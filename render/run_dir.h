// The one writer of a run's directory: results.json, then everything drawn
// from it (report.md, micro.csv, plots). Every file is written atomically
// (temporary name, fsync, rename), so a reader sees the old file or the
// whole new one; results.json is written first, so what was measured is
// kept even when drawing fails.
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
