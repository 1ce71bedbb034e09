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

namespace secmode::suite {

// Crypto cost per message (sim::Scenario::cost_fixed_ns / cost_ns_per_byte)
// fitted to the micro rows of one krb5p association: the mean of its four
// legs against payload size, least squares over the measured sizes. Returns
// false (and leaves `scenario` alone) when there are fewer than two sizes.
bool FitCostsFromMicro(const harness::RunResults& results, sim::Scenario& scenario,
                       std::string* source);

// The grid as JSON: base scenario and every axis.
nlohmann::json SweepGridJson(const sim::SweepGrid& grid);

// One slice of a grid (`secmode nconnect --sweep --shard I/N`): the
// scenarios whose index in the expanded grid leaves remainder `index` when
// divided by `count` (round robin, so every shard gets a like mix). The
// default is the whole grid.
struct SweepShard {
  int index = 0, count = 1;
};
// "I/N" with 0 <= I < N; the error names what is wrong.
common::Result<SweepShard> ParseSweepShard(const std::string& text);

// `cost_source` says where the grid's crypto costs came from (for the
// report); threads <= 0 means all hardware threads. Each row carries its
// "grid_index"; a shard's section says which shard it is ("shard").
common::Status RunNconnectSweep(const sim::SweepGrid& grid, const std::string& cost_source,
                                int threads, harness::RunResults& results, std::ostream& log,
                                SweepShard shard = {});

// `secmode merge`: the shards of one sweep (each a run of RunNconnectSweep
// with the same grid and shard count, every index once) joined into the
// run the whole grid would have made: its rows in grid order, bit for bit
// those of an unsharded run, and the section of shard 0 with each shard's
// own simulator speed, wall time and host under "shards". Refuses shards of
// different grids or counts, a missing or repeated index, or a row that is
// not its shard's.
common::Result<harness::RunResults> MergeSweepShards(
    const std::vector<harness::RunResults>& shards);

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_NCONNECT_SWEEP_H_
