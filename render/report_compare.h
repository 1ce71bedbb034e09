// `secmode compare A B` drawn: a terminal table or Markdown from a
// harness::RunComparison (the verdicts are computed there).
#ifndef SECMODE_RENDER_REPORT_COMPARE_H_
#define SECMODE_RENDER_REPORT_COMPARE_H_

#include <string>

#include "harness/compare_runs.h"

namespace secmode::render {

// Both: each side's runs, one row per matching row (A, B, B/A with its
// confidence interval, the test's p, each side's runs and the verdict), the
// verdicts counted, how the verdict is reached, and the rows one side only
// has.
std::string CompareText(const harness::RunComparison& c);
std::string CompareMarkdown(const harness::RunComparison& c);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_COMPARE_H_
