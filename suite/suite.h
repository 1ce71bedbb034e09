// The default suite behind `secmode run`: measures every requested mode's
// four legs at every size and writes DIR/results.json, DIR/micro.csv and
// DIR/report.md (each atomically: temp name, fsync, rename).
//
// A mode that fails is reported (in results.json "errors" and on the log) and
// the others still run; the result is then an error, after the files are
// written, so nothing measured is lost.
#ifndef SECMODE_BENCH_SUITE_H_
#define SECMODE_BENCH_SUITE_H_

#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"

namespace secmode::bench {

inline constexpr size_t kDefaultSizes[] = {128, 4096, 65536, 1u << 20};

struct SuiteOptions {
  std::string out_dir;             // "" means DefaultOutDir()
  bool quick = false;              // shorter measurements, same coverage
  std::vector<std::string> modes;  // mode names; empty means DefaultModes()
  std::vector<size_t> sizes;       // empty means kDefaultSizes
  std::string command;             // the command line, recorded in the results
};

// results/runs/<UTC timestamp>-<hostname>, relative to the working directory.
std::string DefaultOutDir();

// Returns the directory the files went to.
common::Result<std::string> RunSuite(const SuiteOptions& options, std::ostream& log);

}  // namespace secmode::bench

#endif  // SECMODE_BENCH_SUITE_H_
