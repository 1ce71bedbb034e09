// MeasureSimSpeed: the median of the timed runs after a cold one, its range
// and the cold run's speed; one run timed cold; a bad run count refused by
// name.
#include "harness/sim_speed.h"

#include <gtest/gtest.h>

#include "sim/simulator.h"

namespace secmode::harness {
namespace {

sim::Scenario Small() {
  sim::Scenario s = sim::EveryMechanismScenario();
  s.ops = 2000;
  return s;
}

TEST(SimSpeedTest, MedianOfTheTimedRunsAfterAColdOne) {
  auto speed = MeasureSimSpeed(Small(), 3);
  ASSERT_TRUE(speed.ok()) << speed.status().ToString();
  EXPECT_EQ(speed->runs, 3);
  EXPECT_EQ(speed->rpcs, 2000);  // each run completes the scenario's operations
  EXPECT_GT(speed->cold_rpcs_per_second, 0);
  EXPECT_GT(speed->min_rpcs_per_second, 0);
  EXPECT_LE(speed->min_rpcs_per_second, speed->rpcs_per_second);
  EXPECT_LE(speed->rpcs_per_second, speed->max_rpcs_per_second);
  // The median run's figures belong together.
  ASSERT_GT(speed->cpu_seconds, 0);
  EXPECT_DOUBLE_EQ(speed->rpcs_per_second, 2000 / speed->cpu_seconds);
  const nlohmann::json j = speed->ToJson();
  EXPECT_EQ(j.at("runs"), 3);
  EXPECT_EQ(j.at("rpcs_per_second"), speed->rpcs_per_second);
  EXPECT_EQ(j.at("cold_rpcs_per_second"), speed->cold_rpcs_per_second);
}

// The sweep's way: one short run at a time between other work, the figure
// the median of them with their range, marked as spread over the run.
TEST(SimSpeedTest, SamplesSpreadOverOtherWorkGiveTheMedianAndTheRange) {
  SimSpeedSampler sampler(Small());
  EXPECT_FALSE(sampler.Speed(true).ok());  // nothing timed yet
  sim::Scenario other = Small();
  other.seed = 7;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(sampler.Sample().ok());
    ASSERT_TRUE(sim::Simulate(other).ok());  // the run's other work
  }
  EXPECT_EQ(sampler.samples(), 4);
  auto speed = sampler.Speed(true);
  ASSERT_TRUE(speed.ok()) << speed.status().ToString();
  EXPECT_EQ(speed->runs, 4);
  EXPECT_EQ(speed->rpcs, 2000);
  EXPECT_GT(speed->cold_rpcs_per_second, 0);
  EXPECT_LE(speed->min_rpcs_per_second, speed->rpcs_per_second);
  EXPECT_LE(speed->rpcs_per_second, speed->max_rpcs_per_second);
  EXPECT_TRUE(speed->ToJson().at("interleaved").get<bool>());
  auto block = MeasureSimSpeed(Small(), 3);
  ASSERT_TRUE(block.ok());
  EXPECT_FALSE(block->ToJson().at("interleaved").get<bool>());
}

TEST(SimSpeedTest, OneRunIsTimedCold) {
  auto speed = MeasureSimSpeed(Small());
  ASSERT_TRUE(speed.ok()) << speed.status().ToString();
  EXPECT_EQ(speed->runs, 1);
  EXPECT_GT(speed->rpcs_per_second, 0);
  EXPECT_EQ(speed->cold_rpcs_per_second, speed->rpcs_per_second);
  EXPECT_EQ(speed->min_rpcs_per_second, speed->max_rpcs_per_second);
}

TEST(SimSpeedTest, BadRunCountAndBadScenarioAreRefused) {
  for (int runs : {0, -1}) {
    auto none = MeasureSimSpeed(Small(), runs);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.status().code(), common::Code::kInvalidArgument);
    EXPECT_NE(none.status().message().find("runs"), std::string::npos)
        << none.status().ToString();
  }
  sim::Scenario bad = Small();
  bad.nconnect = 0;
  EXPECT_FALSE(MeasureSimSpeed(bad, 3).ok());
}

}  // namespace
}  // namespace secmode::harness
