#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
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

// An order taken early (TakeOrder) puts a later push among the events of
// its time where a push at that moment would have gone: after those pushed
// before it, before those pushed after it; Push returns each one's order.
TEST(EventQueueTest, AnOrderTakenEarlyKeepsItsPlaceAmongSameTimeEvents) {
  EventQueue q;
  const uint64_t first = q.Push(10, 1, 0, 0);
  const uint64_t reserved = q.TakeOrder();
  const uint64_t later = q.Push(10, 3, 0, 0);
  EXPECT_LT(first, reserved);
  EXPECT_LT(reserved, later);
  q.Push(5, 4, 0, 0);
  q.PushWithOrder(10, reserved, 2, 0, 0);
  EXPECT_EQ(q.Pop().kind, 4u);
  EXPECT_EQ(q.Pop().kind, 1u);
  EXPECT_EQ(q.Pop().kind, 2u);
  EXPECT_EQ(q.Pop().kind, 3u);
  EXPECT_TRUE(q.empty());
}

// Pushes and pops interleaved as a simulation does them (each push at or
// after the last pop's time, heaps of every size from empty to a few
// thousand, times up to the simulator's 2^60 ns limit): every pop is the
// smallest (time, insertion) pair still queued, as a std::set says.
TEST(EventQueueTest, EveryPopIsTheSmallestQueuedAsASortedSetSays) {
  EventQueue q;
  std::set<std::pair<int64_t, uint32_t>> ref;
  Rng rng(11);
  int64_t now = 0;
  uint32_t next = 0;
  for (int round = 0; round < 200000; ++round) {
    const uint64_t r = rng.Next();
    // Phases that grow the heap and phases that drain it.
    const bool push = ref.empty() || ((round / 5000) % 2 == 0 ? r % 3 != 0 : r % 3 == 0);
    if (push) {
      int64_t t = now + static_cast<int64_t>((r >> 8) % 100);  // many ties
      if (r % 97 == 0) t = (int64_t{1} << 60) - static_cast<int64_t>(r % 1000);
      q.Push(t, 0, next, 0);
      ref.emplace(t, next);
      ++next;
      continue;
    }
    ASSERT_FALSE(q.empty());
    const Event e = q.Pop();
    ASSERT_EQ(std::make_pair(e.time, e.target), *ref.begin()) << "round " << round;
    ref.erase(ref.begin());
    now = e.time;
    ASSERT_EQ(q.size(), ref.size());
  }
}

}  // namespace
}  // namespace secmode::sim
