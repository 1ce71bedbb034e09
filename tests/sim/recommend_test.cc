#include "sim/recommend.h"

#include <gtest/gtest.h>

#include <algorithm>

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
  // The alternatives at the slots given (or the first unsafe count, if more):
  // as given it violates; one context per connection and the spread cap keep
  // the window safe.
  EXPECT_EQ(rec->alternative_slots, std::max(base.slots, rec->first_unsafe_slots));
  auto find = [&](const std::string& name) -> const Alternative* {
    for (const Alternative& a : rec->alternatives) {
      if (a.name == name) return &a;
    }
    return nullptr;
  };
  ASSERT_NE(find("as given"), nullptr);
  EXPECT_GT(find("as given")->worst_violations, 0);
  ASSERT_NE(find("per-connection contexts"), nullptr);
  EXPECT_TRUE(find("per-connection contexts")->scenario.per_connection_context);
  EXPECT_EQ(find("per-connection contexts")->worst_violations, 0);
  ASSERT_NE(find("spread capped at the window"), nullptr);
  EXPECT_EQ(find("spread capped at the window")->scenario.spread_cap, base.window);
  EXPECT_EQ(find("spread capped at the window")->worst_violations, 0);
  ASSERT_NE(find("re-encode at transmit"), nullptr);
  EXPECT_TRUE(find("re-encode at transmit")->scenario.reencode);
  for (const Alternative& a : rec->alternatives) {
    EXPECT_EQ(a.scenario.slots, rec->alternative_slots) << a.name;
    EXPECT_GT(a.worst_ops_per_s, 0) << a.name;
    EXPECT_LE(a.worst_ops_per_s, a.result.ops_per_s) << a.name;
  }
  std::string text = rec->ToText(base);
  EXPECT_NE(text.find("largest safe slot count: " + std::to_string(rec->max_safe_slots)),
            std::string::npos);
  EXPECT_NE(text.find("window 32, reaction drop-disconnect"), std::string::npos) << text;
  EXPECT_NE(text.find("skew 0.500 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("per-connection contexts: "), std::string::npos) << text;
}

TEST(RecommendTest, TheThreadModelStatesItsPauses) {
  Scenario base;
  base.nconnect = 4;
  base.window = 32;
  base.thread_model = true;
  base.cores = 2;
  base.slice_ns = 3000000;
  base.wakeup_preempt_ns = 8000;
  base.pause_per_s = 400;
  base.pause_ns = {5000, 6000, 7000, 20000, 30000, 40000, 50000, 90000, 700000, 900000};
  base.ops = 3000;
  auto rec = Recommend(base, 256, 1);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  for (const Alternative& a : rec->alternatives) EXPECT_TRUE(a.scenario.thread_model) << a.name;
  const std::string text = rec->ToText(base);
  EXPECT_NE(text.find("2 cores shared by client and server threads"), std::string::npos) << text;
  EXPECT_NE(text.find("3.000 ms slice"), std::string::npos) << text;
  EXPECT_NE(text.find("has run 8.0 us"), std::string::npos) << text;
  EXPECT_NE(text.find("pauses 400 times a second (median 20.0 us, longest 900.0 us)"),
            std::string::npos)
      << text;
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
