#include "sim/sweep.h"

#include <gtest/gtest.h>

namespace secmode::sim {
namespace {

SweepGrid Small() {
  SweepGrid g;
  g.nconnect = {1, 4};
  g.window = {16, 128};
  g.slots = {8, 256};
  g.io_size = {4096};
  g.skew_ns = {0, 1000000};
  g.reactions = {rpc::WindowPolicy::kDropDisconnect};
  g.base.ops = 1500;
  return g;
}

TEST(SweepTest, ExpandsTheWholeGrid) {
  SweepGrid g = Small();
  std::vector<Scenario> all = g.Expand();
  EXPECT_EQ(all.size(), 16u);
  EXPECT_EQ(g.size(), 16u);
  for (const Scenario& s : all) {
    EXPECT_TRUE(s.Validate().ok());  // skew_conn clamped for nconnect 1
    EXPECT_EQ(s.ops, 1500);
  }
  EXPECT_GT(SweepGrid::Default().size(), SweepGrid::Quick().size());
}

TEST(SweepTest, RowsIndependentOfThreadCount) {
  std::vector<Scenario> all = Small().Expand();
  std::vector<SweepRow> one = RunSweep(all, 1);
  std::vector<SweepRow> two = RunSweep(all, 3);
  ASSERT_EQ(one.size(), all.size());
  ASSERT_EQ(two.size(), all.size());
  bool any_violation = false;
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(one[i].ToJson().dump(), two[i].ToJson().dump()) << i;
    EXPECT_TRUE(one[i].error.empty());
    nlohmann::json j = one[i].ToJson();
    EXPECT_EQ(j["nconnect"], all[i].nconnect);
    EXPECT_EQ(j["seed"], all[i].seed);
    EXPECT_TRUE(j.contains("violations"));
    any_violation |= one[i].result.violations > 0;
  }
  EXPECT_TRUE(any_violation);  // 256 slots over a window of 16 with skew
}

TEST(SweepTest, FailedScenarioBecomesAnErrorRow) {
  Scenario bad;
  bad.window = 0;
  std::vector<SweepRow> rows = RunSweep({bad}, 2);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].error.find("window"), std::string::npos);
  EXPECT_TRUE(rows[0].ToJson().contains("error"));
  EXPECT_FALSE(rows[0].ToJson().contains("violations"));
}

}  // namespace
}  // namespace secmode::sim
