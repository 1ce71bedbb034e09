// Report writers: micro.csv (one row per measurement) and report.md (tables a
// person reads, with ratios taken within the one run).
#ifndef SECMODE_BENCH_REPORT_H_
#define SECMODE_BENCH_REPORT_H_

#include <string>

#include "bench/results.h"

namespace secmode::bench {

std::string MicroCsv(const RunResults& results);
std::string ReportMarkdown(const RunResults& results);
// A short plain-text table for the terminal: per mode and size, the request
// direction's seal+open time and its ratio to sys.
std::string SummaryTable(const RunResults& results);

}  // namespace secmode::bench

#endif  // SECMODE_BENCH_REPORT_H_
