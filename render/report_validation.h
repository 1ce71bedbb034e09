// The validation's part of a run's report (section "nconnect-validation",
// report_validation.cc) on its own, for `secmode nconnect --validate` to
// print after it wrote the run directory.
#ifndef SECMODE_RENDER_REPORT_VALIDATION_H_
#define SECMODE_RENDER_REPORT_VALIDATION_H_

#include <string>

#include "common/status.h"
#include "harness/results.h"

namespace secmode::render {

// The Markdown RenderRun draws into report.md for the section, from its
// heading on (its collapse plot drawn again for its place in the text; the
// plot file itself is RenderRun's); "" when `results` has no such section.
// Fails (kCorrupt, naming the value) where RenderRun would.
common::Result<std::string> ValidationMarkdown(const harness::RunResults& results);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_VALIDATION_H_
