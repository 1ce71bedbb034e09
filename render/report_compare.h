// `secmode compare A B` drawn: a terminal table or Markdown from a
// harness::RunComparison (the verdicts are computed there).
#ifndef SECMODE_RENDER_REPORT_COMPARE_H_
#define SECMODE_RENDER_REPORT_COMPARE_H_

#include <string>

#include "harness/compare_runs.h"

namespace secmode::render {

// Both: the two runs, one row per matching row (A, B, B/A, the U test's p
// and the verdict), the verdicts counted, and the rows only one run has.
std::string CompareText(const harness::RunComparison& c);
std::string CompareMarkdown(const harness::RunComparison& c);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_COMPARE_H_
