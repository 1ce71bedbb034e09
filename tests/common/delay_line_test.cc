// DelayLine on its own: order, the delay, back-pressure, a failing writer,
// Stop with batches held.
#include "common/delay_line.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"

namespace secmode::common {
namespace {

using common::Bytes;

constexpr uint64_t kMs = 1000000;

struct Written {
  uint64_t at_ns;
  Bytes bytes;
};

TEST(DelayLineTest, WritesEveryBatchInOrderNoSoonerThanItsDelay) {
  std::mutex mu;
  std::vector<Written> written;
  DelayLine line(20 * kMs, 1 << 20, [&](Bytes& b) {
    std::lock_guard<std::mutex> l(mu);
    written.push_back({common::NowNs(), b});
    return true;
  });
  std::vector<uint64_t> pushed;
  for (uint8_t i = 0; i < 5; ++i) {
    Bytes b(100 + i, i);
    pushed.push_back(common::NowNs());
    ASSERT_TRUE(line.Push(b));
    EXPECT_TRUE(b.empty());
    std::this_thread::sleep_until(common::SteadyAt(common::NowNs() + 2 * kMs));
  }
  std::this_thread::sleep_until(common::SteadyAt(pushed.back() + 200 * kMs));
  line.Stop();
  ASSERT_EQ(written.size(), 5u);
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(written[i].bytes, Bytes(100 + i, static_cast<uint8_t>(i))) << i;
    EXPECT_GE(written[i].at_ns, pushed[i] + 20 * kMs) << i;
  }
  EXPECT_EQ(line.batches_written(), 5u);
}

// Every batch held at once leaves a buffer to reuse: after eight batches
// are written, eight pushes get a spent buffer back, none a new one.
TEST(DelayLineTest, AsManyBuffersComeBackAsWereHeldAtOnce) {
  std::atomic<int> written{0};
  DelayLine line(1 * kMs, 1 << 20, [&](Bytes&) {
    ++written;
    return true;
  });
  for (int i = 0; i < 8; ++i) {
    Bytes b(1000, 1);
    ASSERT_TRUE(line.Push(b));
  }
  const uint64_t deadline = common::NowNs() + 2000 * kMs;
  while (written.load() < 8 && common::NowNs() < deadline) {
    std::this_thread::sleep_until(common::SteadyAt(common::NowNs() + 1 * kMs));
  }
  ASSERT_EQ(written.load(), 8);
  for (int i = 0; i < 8; ++i) {
    Bytes b(10, 2);
    ASSERT_TRUE(line.Push(b));
    EXPECT_GE(b.capacity(), 1000u) << "push " << i << " got no spent buffer";
    EXPECT_TRUE(b.empty());
  }
}

TEST(DelayLineTest, PushWaitsWhileTheBoundIsHeld) {
  DelayLine line(30 * kMs, 1000, [](Bytes&) { return true; });
  Bytes a(800, 1), b(800, 2);
  const uint64_t t0 = common::NowNs();
  ASSERT_TRUE(line.Push(a));
  ASSERT_TRUE(line.Push(b));  // waits until `a` is written, 30 ms on
  EXPECT_GE(common::NowNs() - t0, 30 * kMs);
}

TEST(DelayLineTest, AFailedWriteFailsTheLineAndDropsTheRest) {
  // Three batches pushed at once (due within microseconds of each other,
  // so mostly at one wakeup), then more while the line runs: the writer
  // fails on the first, and is never called again, neither for the batches
  // due at the same wakeup nor for later ones; Push refuses from then on.
  std::atomic<int> calls{0};
  DelayLine line(50 * kMs, 1 << 20, [&](Bytes&) {
    ++calls;
    return false;
  });
  for (int i = 0; i < 3; ++i) {
    Bytes b(10, static_cast<uint8_t>(i));
    ASSERT_TRUE(line.Push(b));
  }
  const uint64_t deadline = common::NowNs() + 2000 * kMs;
  bool refused = false;
  while (!refused && common::NowNs() < deadline) {
    Bytes more(10, 9);
    refused = !line.Push(more);
    std::this_thread::sleep_until(common::SteadyAt(common::NowNs() + 1 * kMs));
  }
  EXPECT_TRUE(refused);
  // Long after every batch pushed before the refusal was due.
  std::this_thread::sleep_until(common::SteadyAt(common::NowNs() + 100 * kMs));
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(line.batches_written(), 0u);
}

TEST(DelayLineTest, StopReturnsAtOnceAndDropsWhatIsHeld) {
  std::atomic<int> calls{0};
  auto line = std::make_unique<DelayLine>(10000 * kMs, 1 << 20, [&](Bytes&) {
    ++calls;
    return true;
  });
  Bytes a(10, 1);
  ASSERT_TRUE(line->Push(a));
  const uint64_t t0 = common::NowNs();
  line->Stop();
  EXPECT_LT(common::NowNs() - t0, 1000 * kMs);
  EXPECT_EQ(calls.load(), 0);
  Bytes b(10, 1);
  EXPECT_FALSE(line->Push(b));
}

}  // namespace
}  // namespace secmode::common
