// `secmode merge`: runs made on many machines joined into one run
// directory. Three kinds, told apart by what the inputs are:
//  - the shards of one nconnect sweep (`secmode nconnect --sweep --shard
//    I/N`): the rows of the whole sweep in grid order, bit for bit those of
//    an unsharded run (the simulator is deterministic), and each shard's
//    host, simulator speed and wall time under sections.nconnect.shards;
//  - the shards of one nconnect validation (`secmode nconnect --validate
//    --shard I/N`): the points in grid order, each row carrying the host it
//    was measured on (a real run belongs to its machine: each shard
//    calibrated the model on its own host, and the row keeps that
//    calibration), and each shard's host, points, agreement and wall time
//    under sections.nconnect-validation.shards;
//  - whole runs of `secmode run`, one per host: their end-to-end rows side
//    by side, each with its host (sections.e2e.hosts lists every host's
//    fingerprint); ratios are taken within a host, never across.
// Every kind refuses, by name, inputs of mixed kinds, a missing, repeated
// or foreign shard, shards of another grid, or a host given twice; nothing
// is sized by a count a file states.
#ifndef SECMODE_SUITE_MERGE_H_
#define SECMODE_SUITE_MERGE_H_

#include <vector>

#include "common/status.h"
#include "harness/results.h"

namespace secmode::suite {

// What MergeRuns joined, for its summary line.
enum class MergeKind { kSweepShards, kValidationShards, kHostRuns };
const char* MergeKindName(MergeKind kind);  // "sweep shards", ...

struct Merged {
  MergeKind kind = MergeKind::kSweepShards;
  harness::RunResults results;
  size_t rows = 0;  // the rows joined (nconnect or e2e)
};

// Tells the inputs' kind and joins them.
common::Result<Merged> MergeRuns(const std::vector<harness::RunResults>& runs);

common::Result<harness::RunResults> MergeSweepShards(
    const std::vector<harness::RunResults>& shards);
common::Result<harness::RunResults> MergeValidationShards(
    const std::vector<harness::RunResults>& shards);
common::Result<harness::RunResults> MergeHostRuns(const std::vector<harness::RunResults>& runs);

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_MERGE_H_
