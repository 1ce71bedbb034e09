// The nconnect simulator sweep as part of a run: measures the simulator's
// own speed, runs a sweep grid on threads, and adds to RunResults the
// `nconnect` rows, a report section (tables) and plots drawn by gnuplot
// (nconnect-violations.svg, nconnect-goodput.svg, nconnect-safe.svg).
//
// Used by the `secmode run` section (section_nconnect.cc) and by
// `secmode nconnect --sweep`. A plot that gnuplot cannot draw is reported in
// the log and the report; the numbers are kept either way.
#ifndef SECMODE_BENCH_NCONNECT_SWEEP_H_
#define SECMODE_BENCH_NCONNECT_SWEEP_H_

#include <ostream>
#include <string>

#include "bench/results.h"
#include "bench/sections.h"
#include "common/status.h"
#include "sim/sweep.h"

namespace secmode::bench {

// Crypto cost per message (sim::Scenario::cost_fixed_ns / cost_ns_per_byte)
// fitted to the micro rows of one krb5p association: the mean of its four
// legs against payload size, least squares over the measured sizes. Returns
// false (and leaves `scenario` alone) when there are fewer than two sizes.
bool FitCostsFromMicro(const RunResults& results, sim::Scenario& scenario, std::string* source);

struct SimSpeed {
  int64_t rpcs = 0;
  double cpu_seconds = 0;  // this thread's CPU time
  double wall_seconds = 0;
  double rpcs_per_second = 0;  // per second of CPU time: the speed of one
                               // core, whatever else the machine is running
};
// Runs `scenario` once on this thread and times it.
common::Result<SimSpeed> MeasureSimSpeed(const sim::Scenario& scenario);

// `cost_source` says where the grid's crypto costs came from (for the
// report); threads <= 0 means all hardware threads.
common::Status AddNconnectSweep(const sim::SweepGrid& grid, const std::string& cost_source,
                                int threads, RunResults& results, std::ostream& log);

// The `secmode run` section (listed in kSections, suite.cc): the default grid
// (SweepGrid::Quick under --quick) with crypto costs fitted to the run's
// krb5p micro results when there are any, on all hardware threads.
common::Status RunNconnectSection(SectionContext& context);

}  // namespace secmode::bench

#endif  // SECMODE_BENCH_NCONNECT_SWEEP_H_
