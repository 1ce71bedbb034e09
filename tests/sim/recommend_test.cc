#include "sim/recommend.h"

#include <gtest/gtest.h>

#include "sim/simulator.h"

namespace secmode::sim {
namespace {

TEST(RecommendTest, LargestSafeSlotsIsSafeAndTheNextIsNot) {
  Scenario base;
  base.nconnect = 8;
  base.window = 32;
  base.skew_ns = 500000;
  base.ops = 3000;
  auto rec = Recommend(base, 1024, 2);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  ASSERT_GT(rec->max_safe_slots, 0);
  ASSERT_GT(rec->first_unsafe_slots, rec->max_safe_slots);
  EXPECT_EQ(rec->at_max_safe.violations, 0);
  EXPECT_GT(rec->at_max_safe.ops_per_s, 0);
  Scenario check = base;
  check.slots = rec->first_unsafe_slots;
  bool violated = false;
  for (uint64_t seed : {base.seed, base.seed + 1}) {
    check.seed = seed;
    violated |= Simulate(check)->violations > 0;
  }
  EXPECT_TRUE(violated);
  // The capped alternative keeps the window safe.
  EXPECT_EQ(rec->spread_cap, base.window);
  EXPECT_EQ(rec->with_cap.violations, 0);
  std::string text = rec->ToText(base);
  EXPECT_NE(text.find("largest safe slot count: " + std::to_string(rec->max_safe_slots)),
            std::string::npos);
}

TEST(RecommendTest, PerConnectionContextsAreSafeUpToTheLimit) {
  Scenario base;
  base.per_connection_context = true;
  base.skew_ns = 2000000;
  base.window = 8;
  base.ops = 2000;
  auto rec = Recommend(base, 256, 1);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->max_safe_slots, 256);
  EXPECT_EQ(rec->first_unsafe_slots, 0);
}

TEST(RecommendTest, RejectsBadInput) {
  Scenario base;
  base.window = 0;
  EXPECT_FALSE(Recommend(base).ok());
  EXPECT_FALSE(Recommend(Scenario(), 0).ok());
  EXPECT_FALSE(Recommend(Scenario(), 64, 0).ok());
}

}  // namespace
}  // namespace secmode::sim
