// One slice of a grid run on one machine of many (`--shard I/N`): the grid's
// points whose index leaves remainder `index` when divided by `count`
// (round robin, so every shard gets a like mix of cheap and dear points).
// The nconnect sweep (suite/nconnect_sweep.h) and the nconnect validation
// (suite/nconnect_validation.h, `secmode nconnect --validate`) run shards;
// suite/merge.h joins them.
#ifndef SECMODE_SUITE_SHARD_H_
#define SECMODE_SUITE_SHARD_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace secmode::suite {

struct Shard {
  int index = 0, count = 1;  // the default: the whole grid
  bool Holds(size_t grid_index) const {
    return static_cast<int>(grid_index % static_cast<size_t>(count)) == index;
  }
  bool Whole() const { return count == 1; }
  // {"index", "count", "grid_points"}: what a section records of its shard.
  nlohmann::json ToJson(size_t grid_points) const;
};

// "I/N" with 0 <= I < N; the error names what is wrong.
common::Result<Shard> ParseShard(const std::string& text);

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_SHARD_H_
