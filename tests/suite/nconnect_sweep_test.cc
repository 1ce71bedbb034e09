// A sweep run in shards and merged gives the rows of the unsharded sweep
// bit for bit, in grid order; merging refuses shards that do not make one
// whole sweep, naming why.
#include "suite/nconnect_sweep.h"

#include <gtest/gtest.h>

#include <sstream>

namespace secmode::suite {
namespace {

sim::SweepGrid SmallGrid() {
  sim::SweepGrid g = sim::SweepGrid::Quick();
  g.nconnect = {1, 4};
  g.slots = {16, 128};
  g.base.ops = 1000;
  return g;  // 2 x 2 windows x 2 x 2 skews = 16 scenarios
}

harness::RunResults Shard(const sim::SweepGrid& g, int index, int count) {
  harness::RunResults r;
  r.started_at = "2026-12-02T00:00:0" + std::to_string(index) + "Z";
  std::ostringstream log;
  const common::Status s = RunNconnectSweep(g, "test", 2, r, log, {index, count});
  EXPECT_TRUE(s.ok()) << s.ToString();
  return r;
}

TEST(NconnectSweepTest, ShardsMergeIntoTheUnshardedRowsBitForBit) {
  const sim::SweepGrid g = SmallGrid();
  ASSERT_EQ(g.size(), 16u);
  const harness::RunResults whole = Shard(g, 0, 1);
  ASSERT_EQ(whole.nconnect.size(), 16u);
  EXPECT_FALSE(whole.sections["nconnect"].contains("shard"));
  // Given out of order, as files from many hosts arrive.
  std::vector<harness::RunResults> shards = {Shard(g, 2, 3), Shard(g, 0, 3), Shard(g, 1, 3)};
  EXPECT_EQ(shards[0].nconnect.size(), 5u);  // grid indexes 2, 5, 8, 11, 14
  EXPECT_EQ(shards[1].nconnect.size(), 6u);
  auto merged = MergeSweepShards(shards);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->nconnect.dump(), whole.nconnect.dump());
  const nlohmann::json& s = merged->sections["nconnect"];
  EXPECT_EQ(s["scenarios"], 16);
  EXPECT_EQ(s["total_ops"], whole.sections["nconnect"]["total_ops"]);
  EXPECT_EQ(s["grid"], whole.sections["nconnect"]["grid"]);
  ASSERT_EQ(s["shards"].size(), 3u);
  EXPECT_FALSE(s.contains("shard"));
  EXPECT_EQ(merged->started_at, "2026-12-02T00:00:00Z");  // the earliest shard's
}

TEST(NconnectSweepTest, MergeRefusesWhatIsNotOneWholeSweep) {
  const sim::SweepGrid g = SmallGrid();
  const harness::RunResults a = Shard(g, 0, 2), b = Shard(g, 1, 2);
  auto missing = MergeSweepShards({a});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("shard 1/2 is missing"), std::string::npos)
      << missing.status().ToString();
  auto twice = MergeSweepShards({a, a, b});
  EXPECT_NE(twice.status().message().find("given twice"), std::string::npos)
      << twice.status().ToString();
  sim::SweepGrid other = g;
  other.window = {64};
  auto mixed = MergeSweepShards({a, Shard(other, 1, 2)});
  EXPECT_NE(mixed.status().message().find("another grid"), std::string::npos)
      << mixed.status().ToString();
  auto whole = MergeSweepShards({Shard(g, 0, 1)});
  EXPECT_NE(whole.status().message().find("not a shard"), std::string::npos);
  harness::RunResults edited = b;
  edited.nconnect[0]["grid_index"] = 0;  // shard 1 of 2 holds odd indexes only
  auto foreign = MergeSweepShards({a, edited});
  EXPECT_NE(foreign.status().message().find("not its own"), std::string::npos)
      << foreign.status().ToString();
  EXPECT_NE(MergeSweepShards({}).status().message().find("no shards"), std::string::npos);
  // A shard whose count is not a number, or claims a huge grid, is refused
  // before anything is sized by it.
  harness::RunResults bad = a;
  bad.sections["nconnect"]["shard"]["count"] = "two";
  EXPECT_NE(MergeSweepShards({bad, b}).status().message().find("no valid"), std::string::npos);
  harness::RunResults huge_a = a, huge_b = b;
  huge_a.sections["nconnect"]["shard"]["grid_scenarios"] = 1000000000000;
  huge_b.sections["nconnect"]["shard"]["grid_scenarios"] = 1000000000000;
  auto huge = MergeSweepShards({huge_a, huge_b});
  EXPECT_NE(huge.status().message().find("of their grid's"), std::string::npos)
      << huge.status().ToString();
}

TEST(NconnectSweepTest, ShardTextIsIOfN) {
  auto ok = ParseSweepShard("2/5");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->index, 2);
  EXPECT_EQ(ok->count, 5);
  for (const char* bad : {"5/5", "-1/3", "1", "a/b", "1/0", "1/3x", ""}) {
    auto r = ParseSweepShard(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--shard"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace secmode::suite
