#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "sim/random.h"

namespace secmode::sim {
namespace {

TEST(EventQueueTest, PopsByTimeThenInsertionOrder) {
  EventQueue q;
  Rng rng(3);
  std::vector<std::tuple<int64_t, uint32_t>> pushed;
  for (uint32_t i = 0; i < 5000; ++i) {
    int64_t t = static_cast<int64_t>(rng.Next() % 50);  // many ties
    q.Push(t, 0, i, 0);
    pushed.emplace_back(t, i);
  }
  std::stable_sort(pushed.begin(), pushed.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  for (const auto& [t, i] : pushed) {
    ASSERT_FALSE(q.empty());
    Event e = q.Pop();
    EXPECT_EQ(e.time, t);
    EXPECT_EQ(e.target, i);
  }
  EXPECT_TRUE(q.empty());
}

TEST(EventQueueTest, InterleavedPushPop) {
  EventQueue q;
  q.Push(10, 1, 0, 0);
  q.Push(5, 2, 0, 0);
  EXPECT_EQ(q.Pop().kind, 2u);
  q.Push(7, 3, 0, 0);
  q.Push(10, 4, 0, 0);
  EXPECT_EQ(q.Pop().kind, 3u);
  EXPECT_EQ(q.Pop().kind, 1u);  // same time as kind 4, pushed first
  EXPECT_EQ(q.Pop().kind, 4u);
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace secmode::sim
