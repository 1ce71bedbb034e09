#include "sim/ring_queue.h"

#include <gtest/gtest.h>

#include <deque>

#include "sim/random.h"

namespace secmode::sim {
namespace {

void ExpectSame(const RingQueue<int>& q, const std::deque<int>& ref) {
  ASSERT_EQ(q.size(), ref.size());
  ASSERT_EQ(q.empty(), ref.empty());
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(q[i], ref[i]) << "index " << i;
}

// Every operation the simulator uses, at random, against std::deque doing
// the same: the same items in the same order after each, across growth
// (from empty to a few hundred items, the ring wrapping around).
TEST(RingQueueTest, BehavesAsADequeThroughEveryOperation) {
  RingQueue<int> q, other;
  std::deque<int> ref, other_ref;
  Rng rng(5);
  for (int step = 0; step < 100000; ++step) {
    const uint64_t r = rng.Next();
    const int v = static_cast<int>(r >> 40);
    const bool grow = (step / 3000) % 2 == 0;  // phases that grow and that shrink
    switch (r % 16) {
      case 0:
      case 1:
      case 2:
        q.push_back(v);
        ref.push_back(v);
        break;
      case 3:
        if (grow) {
          q.push_front(v);
          ref.push_front(v);
        }
        break;
      case 4: {
        const size_t i = ref.empty() ? 0 : (r >> 8) % (ref.size() + 1);
        q.insert(i, v);
        ref.insert(ref.begin() + static_cast<std::ptrdiff_t>(i), v);
        break;
      }
      case 5:
        if (!ref.empty()) {
          const size_t i = (r >> 8) % ref.size();
          q.erase(i);
          ref.erase(ref.begin() + static_cast<std::ptrdiff_t>(i));
        }
        break;
      case 6:
        if (r % 200 == 6) {
          q.swap(other);
          ref.swap(other_ref);
        }
        break;
      case 7:
        if (r % 1000 == 7) {
          q.clear();
          ref.clear();
        }
        break;
      default:
        if (!ref.empty() && !grow) {
          ASSERT_EQ(q.front(), ref.front());
          q.pop_front();
          ref.pop_front();
        } else if (!grow || ref.size() < 400) {
          q.push_back(v);
          ref.push_back(v);
        }
        break;
    }
    if (step % 97 == 0) ExpectSame(q, ref);
  }
  ExpectSame(q, ref);
  ExpectSame(other, other_ref);
}

}  // namespace
}  // namespace secmode::sim
