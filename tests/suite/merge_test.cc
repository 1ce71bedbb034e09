// `secmode merge` (suite/merge.h): a sweep run in shards and merged gives
// the rows of the unsharded sweep bit for bit, in grid order; a validation's
// shards join in grid order with each row's host; one run per host joins
// their e2e rows with their hosts; every kind refuses what does not make
// one whole, naming why.
#include "suite/merge.h"

#include <gtest/gtest.h>

#include <sstream>

#include "suite/nconnect_sweep.h"
#include "suite/shard.h"

namespace secmode::suite {
namespace {

sim::SweepGrid SmallGrid() {
  sim::SweepGrid g = sim::SweepGrid::Quick();
  g.nconnect = {1, 4};
  g.slots = {16, 128};
  g.base.ops = 1000;
  return g;  // 2 x 2 windows x 2 x 2 skews = 16 scenarios
}

harness::RunResults SweepShardRun(const sim::SweepGrid& g, int index, int count) {
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
  const harness::RunResults whole = SweepShardRun(g, 0, 1);
  ASSERT_EQ(whole.nconnect.size(), 16u);
  EXPECT_FALSE(whole.sections["nconnect"].contains("shard"));
  // Given out of order, as files from many hosts arrive.
  std::vector<harness::RunResults> shards = {SweepShardRun(g, 2, 3), SweepShardRun(g, 0, 3),
                                             SweepShardRun(g, 1, 3)};
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
  const harness::RunResults a = SweepShardRun(g, 0, 2), b = SweepShardRun(g, 1, 2);
  auto missing = MergeSweepShards({a});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("shard 1/2 is missing"), std::string::npos)
      << missing.status().ToString();
  auto twice = MergeSweepShards({a, a, b});
  EXPECT_NE(twice.status().message().find("given twice"), std::string::npos)
      << twice.status().ToString();
  sim::SweepGrid other = g;
  other.window = {64};
  auto mixed = MergeSweepShards({a, SweepShardRun(other, 1, 2)});
  EXPECT_NE(mixed.status().message().find("another grid"), std::string::npos)
      << mixed.status().ToString();
  auto whole = MergeSweepShards({SweepShardRun(g, 0, 1)});
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
  huge_a.sections["nconnect"]["shard"]["grid_points"] = 1000000000000;
  huge_b.sections["nconnect"]["shard"]["grid_points"] = 1000000000000;
  auto huge = MergeSweepShards({huge_a, huge_b});
  EXPECT_NE(huge.status().message().find("of their grid's"), std::string::npos)
      << huge.status().ToString();
}

TEST(ShardTest, ShardTextIsIOfN) {
  auto ok = ParseShard("2/5");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->index, 2);
  EXPECT_EQ(ok->count, 5);
  for (const char* bad : {"5/5", "-1/3", "1", "a/b", "1/0", "1/3x", ""}) {
    auto r = ParseShard(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--shard"), std::string::npos) << bad;
  }
}

// A validation shard as `secmode nconnect --validate --shard I/N` writes
// it: its points (grid_index % count == index), the grid and the shard in
// its section, and its host.
harness::RunResults ValidationShardRun(int index, int count, size_t points, const std::string& host,
                                       const std::string& filter = "") {
  harness::RunResults r;
  r.machine.hostname = host;
  r.machine.cpu_model = "CPU of " + host;
  r.started_at = "2026-12-02T00:00:0" + std::to_string(index) + "Z";
  for (size_t i = 0; i < points; ++i) {
    if (static_cast<int>(i % static_cast<size_t>(count)) != index) continue;
    r.nconnect.push_back({{"kind", "validation"},
                          {"name", "p" + std::to_string(i)},
                          {"grid_index", i},
                          {"violations_agree", true},
                          {"goodput_agree", i % 3 != 0}});
  }
  r.sections["nconnect-validation"] = {
      {"mode", "krb5p"},
      {"wall_seconds", 10.0 + index},
      {"grid", {{"name", "wide"}, {"points", points}, {"filter", filter}, {"ops", 2000}}},
      {"shard", Shard{index, count}.ToJson(points)}};
  return r;
}

TEST(MergeTest, ValidationShardsJoinInGridOrderEachRowWithItsHost) {
  std::vector<harness::RunResults> shards = {ValidationShardRun(1, 2, 7, "beta"),
                                             ValidationShardRun(0, 2, 7, "alpha")};
  auto merged = MergeRuns(shards);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->kind, MergeKind::kValidationShards);
  EXPECT_EQ(merged->rows, 7u);
  const harness::RunResults& r = merged->results;
  ASSERT_EQ(r.nconnect.size(), 7u);
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(r.nconnect[i]["grid_index"], i);
    EXPECT_EQ(r.nconnect[i]["host"], i % 2 == 0 ? "alpha" : "beta") << i;
  }
  const nlohmann::json& s = r.sections["nconnect-validation"];
  EXPECT_FALSE(s.contains("shard"));
  EXPECT_EQ(s["wall_seconds"], 11.0);  // the longest shard's
  ASSERT_EQ(s["shards"].size(), 2u);
  // Shard 0 holds points 0, 2, 4, 6, of which 0 and 6 disagree on goodput.
  for (const auto& sh : s["shards"]) {
    if (sh["index"] == 0) {
      EXPECT_EQ(sh["host"], "alpha");
      EXPECT_EQ(sh["points"], 4);
      EXPECT_EQ(sh["agree"], 2);
    } else {
      EXPECT_EQ(sh["points"], 3);
      EXPECT_EQ(sh["agree"], 2);  // 1, 5 agree; 3 does not
    }
  }
  EXPECT_EQ(r.machine.hostname, "alpha");  // shard 0's
  EXPECT_EQ(r.started_at, "2026-12-02T00:00:00Z");
}

// Shards that judged their points three ways: the merged counts are every
// shard's rows', not the first shard's section copied.
TEST(MergeTest, ValidationShardsCountEveryShardsVerdicts) {
  std::vector<harness::RunResults> shards = {ValidationShardRun(0, 2, 7, "alpha"),
                                             ValidationShardRun(1, 2, 7, "beta")};
  const char* words[] = {"disagrees", "agrees", "undecided"};
  for (auto& shard : shards) {
    nlohmann::json counts = {{"agrees", 0}, {"disagrees", 0}, {"undecided", 0}};
    for (auto& row : shard.nconnect) {
      const std::string word = words[row["grid_index"].get<size_t>() % 3];
      row["verdict"] = word;
      counts[word] = counts[word].get<int>() + 1;
    }
    shard.sections["nconnect-validation"]["verdicts"] = counts;
  }
  auto merged = MergeRuns(shards);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  const nlohmann::json& s = merged->results.sections["nconnect-validation"];
  // Points 0..6: 0, 3, 6 disagree; 1, 4 agree; 2, 5 undecided.
  EXPECT_EQ(s["verdicts"], (nlohmann::json{{"agrees", 2}, {"disagrees", 3}, {"undecided", 2}}));
  for (const auto& sh : s["shards"]) {
    EXPECT_EQ(sh["agree"], 1) << sh.dump();      // 4 | 1
    EXPECT_EQ(sh["undecided"], 1) << sh.dump();  // 2 | 5
  }
}

TEST(MergeTest, ValidationShardsThatAreNotOneWholeGridAreRefused) {
  const harness::RunResults a = ValidationShardRun(0, 2, 6, "a"),
                            b = ValidationShardRun(1, 2, 6, "b");
  auto missing = MergeRuns({a});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("shard 1/2 is missing"), std::string::npos)
      << missing.status().ToString();
  EXPECT_NE(MergeRuns({a, a, b}).status().message().find("given twice"), std::string::npos);
  // Another --points filter is another grid.
  auto other = MergeRuns({a, ValidationShardRun(1, 2, 6, "b", "shared-")});
  EXPECT_NE(other.status().message().find("another grid"), std::string::npos)
      << other.status().ToString();
  harness::RunResults foreign = b;
  foreign.nconnect[0]["grid_index"] = 2;  // an even index in the odd shard
  EXPECT_NE(MergeRuns({a, foreign}).status().message().find("not its own"), std::string::npos);
  harness::RunResults short_b = b;
  short_b.nconnect.erase(short_b.nconnect.begin());
  EXPECT_NE(MergeRuns({a, short_b}).status().message().find("5 of their grid's 6"),
            std::string::npos)
      << MergeRuns({a, short_b}).status().ToString();
  // Kinds do not mix: a validation shard with a sweep shard or a whole run.
  auto mixed = MergeRuns({a, SweepShardRun(SmallGrid(), 1, 2)});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("different kinds"), std::string::npos)
      << mixed.status().ToString();
}

harness::RunResults HostRun(const std::string& host, double sys_ops, double krb5p_ops) {
  harness::RunResults r;
  r.machine.hostname = host;
  r.machine.cpu_model = "CPU of " + host;
  r.started_at = "2026-12-02T01:00:00Z";
  for (auto [mode, ops] : {std::pair<const char*, double>{"sys", sys_ops}, {"krb5p", krb5p_ops}}) {
    r.e2e.push_back({{"mode", mode}, {"op", "read"}, {"size", 4096}, {"ops_per_second", ops}});
  }
  r.sections["e2e"] = {{"connections", 4}, {"slots", 64}, {"slots_large_io", 16}, {"seconds", 0.4}};
  r.errors.push_back({{"section", "smb"}, {"error", "x"}});
  return r;
}

TEST(MergeTest, OneRunPerHostJoinsTheirEndToEndRowsWithTheirHosts) {
  auto merged = MergeRuns({HostRun("alpha", 1000, 250), HostRun("beta", 2000, 1000)});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->kind, MergeKind::kHostRuns);
  const harness::RunResults& r = merged->results;
  ASSERT_EQ(r.e2e.size(), 4u);
  EXPECT_EQ(r.e2e[0]["host"], "alpha");
  EXPECT_EQ(r.e2e[3]["host"], "beta");
  ASSERT_EQ(r.sections["e2e"]["hosts"].size(), 2u);
  EXPECT_EQ(r.sections["e2e"]["hosts"][1]["cpu_model"], "CPU of beta");
  EXPECT_EQ(r.sections["e2e"]["hosts"][1]["rows"], 2);
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[1]["host"], "beta");
  EXPECT_TRUE(r.micro.empty());  // only the e2e rows are joined
}

TEST(MergeTest, HostRunsThatCannotStandSideBySideAreRefused) {
  auto twice = MergeRuns({HostRun("alpha", 1, 1), HostRun("alpha", 2, 2)});
  EXPECT_NE(twice.status().message().find("host alpha given twice"), std::string::npos)
      << twice.status().ToString();
  harness::RunResults other = HostRun("beta", 1, 1);
  other.sections["e2e"]["slots"] = 8;
  auto shape = MergeRuns({HostRun("alpha", 1, 1), other});
  EXPECT_NE(shape.status().message().find("another slots"), std::string::npos)
      << shape.status().ToString();
  harness::RunResults none = HostRun("gamma", 1, 1);
  none.e2e.clear();
  EXPECT_NE(MergeRuns({HostRun("alpha", 1, 1), none}).status().message().find("no end-to-end"),
            std::string::npos);
  EXPECT_NE(MergeRuns({}).status().message().find("nothing given"), std::string::npos);
}

}  // namespace
}  // namespace secmode::suite
