// The nconnect simulator sweep as part of a run: measures the simulator's
// own speed, runs a sweep grid on threads and adds to RunResults the
// `nconnect` rows (one per scenario) and sections["nconnect"] (the grid, where
// the crypto costs came from, the simulator's speed, the sweep's wall time).
// render/ draws the tables and plots from those.
//
// Used by the `secmode run` section (section_nconnect.cc) and by
// `secmode nconnect --sweep`.
#ifndef SECMODE_SUITE_NCONNECT_SWEEP_H_
#define SECMODE_SUITE_NCONNECT_SWEEP_H_

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "common/status.h"
#include "harness/results.h"
#include "sim/sweep.h"
#include "suite/shard.h"

namespace secmode::suite {

// Crypto cost per message (sim::Scenario::cost_fixed_ns / cost_ns_per_byte)
// fitted to the micro rows of one krb5p association: the mean of its four
// legs against payload size, the least-squares line over the measured sizes
// (common::FitLine; a negative slope taken as 0). Returns
// false (and leaves `scenario` alone) when there are fewer than two sizes.
bool FitCostsFromMicro(const harness::RunResults& results, sim::Scenario& scenario,
                       std::string* source);

// The grid as JSON: base scenario and every axis.
nlohmann::json SweepGridJson(const sim::SweepGrid& grid);

// `cost_source` says where the grid's crypto costs came from (for the
// report); threads <= 0 means all hardware threads. Each row carries its
// "grid_index"; a shard's section says which shard it is ("shard";
// suite/merge.h joins the shards).
common::Status RunNconnectSweep(const sim::SweepGrid& grid, const std::string& cost_source,
                                int threads, harness::RunResults& results, std::ostream& log,
                                Shard shard = {});

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_NCONNECT_SWEEP_H_
