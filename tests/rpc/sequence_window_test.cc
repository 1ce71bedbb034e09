// rpc::SequenceWindow, the RFC 2203 5.3.3.1 server sequence window used by
// the RPC server and by the nconnect simulator.
#include "rpc/sequence_window.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tests/rpc/rfc2203_window_model.h"

namespace secmode::rpc {
namespace {

using V = SeqVerdict;

TEST(SequenceWindowTest, InOrderAndReorderedWithinWindowAccepted) {
  SequenceWindow w(4);
  EXPECT_EQ(w.Check(10), V::kAccept);
  EXPECT_EQ(w.Check(12), V::kAccept);
  EXPECT_EQ(w.Check(11), V::kAccept);  // late but inside [9, 12]
  EXPECT_EQ(w.Check(9), V::kAccept);   // highest - 3: still inside a window of 4
  EXPECT_EQ(w.Lag(9), 3u);
}

TEST(SequenceWindowTest, BelowWindowRejected) {
  // RFC 2203 5.3.3.1: seq_num <= highest - window is discarded.
  SequenceWindow w(4);
  EXPECT_EQ(w.Check(100), V::kAccept);
  EXPECT_EQ(w.Check(96), V::kBelowWindow);
  EXPECT_EQ(w.Check(97), V::kAccept);
  EXPECT_EQ(w.Check(0), V::kBelowWindow);
  EXPECT_EQ(w.highest(), 100u);  // rejections do not move the window
}

TEST(SequenceWindowTest, DuplicateRejected) {
  SequenceWindow w(128);
  EXPECT_EQ(w.Check(5), V::kAccept);
  EXPECT_EQ(w.Check(5), V::kDuplicate);
  EXPECT_EQ(w.Check(7), V::kAccept);
  EXPECT_EQ(w.Check(6), V::kAccept);
  EXPECT_EQ(w.Check(6), V::kDuplicate);
}

TEST(SequenceWindowTest, AcceptsOnceInsideAndDropsBelow) {
  SequenceWindow w(128);
  EXPECT_EQ(w.Check(10), V::kAccept);
  EXPECT_EQ(w.Check(10), V::kDuplicate);
  EXPECT_EQ(w.Check(5), V::kAccept);  // late but inside
  EXPECT_EQ(w.Check(5), V::kDuplicate);
  EXPECT_EQ(w.Check(200), V::kAccept);
  EXPECT_EQ(w.Check(73), V::kAccept);       // 200-127 = lowest inside
  EXPECT_EQ(w.Check(72), V::kBelowWindow);  // just below
  EXPECT_EQ(w.Check(10), V::kBelowWindow);
  EXPECT_EQ(w.Check(199), V::kAccept);
  EXPECT_EQ(w.Check(199), V::kDuplicate);
  // A jump clears the bitmap: old bits must not make new numbers duplicates.
  EXPECT_EQ(w.Check(200 + 128), V::kAccept);
  EXPECT_EQ(w.Check(199 + 128), V::kAccept);
  EXPECT_EQ(w.Check(201), V::kAccept);
  EXPECT_EQ(w.Check(200), V::kBelowWindow);
}

TEST(SequenceWindowTest, SlidingForgetsOldBitsOnRingReuse) {
  // Ring of 64 bits for window 32: numbers 64 apart share a bit, so sliding
  // must clear it, or 70 would look like a duplicate of 6.
  SequenceWindow w(32);
  for (uint32_t s = 0; s < 40; ++s) ASSERT_EQ(w.Check(s), V::kAccept);
  EXPECT_EQ(w.Check(71), V::kAccept);
  EXPECT_EQ(w.Check(70), V::kAccept);
  EXPECT_EQ(w.Check(40), V::kAccept);  // 71 - 40 = 31 < 32
  EXPECT_EQ(w.Check(39), V::kBelowWindow);
  EXPECT_EQ(w.Check(10000), V::kAccept);  // a jump larger than the ring
  EXPECT_EQ(w.Check(9999), V::kAccept);
  EXPECT_EQ(w.Check(9999), V::kDuplicate);
}

TEST(SequenceWindowTest, SmallWindowsSlideExactly) {
  SequenceWindow w(5);  // libtirpc's size
  for (uint32_t s = 1; s <= 20; ++s) EXPECT_EQ(w.Check(s), V::kAccept);
  EXPECT_EQ(w.Check(16), V::kDuplicate);
  EXPECT_EQ(w.Check(15), V::kBelowWindow);
  EXPECT_EQ(w.Check(23), V::kAccept);
  EXPECT_EQ(w.Check(21), V::kAccept);
  EXPECT_EQ(w.Check(22), V::kAccept);
  EXPECT_EQ(w.Check(18), V::kBelowWindow);
  EXPECT_EQ(w.Check(19), V::kDuplicate);
}

TEST(SequenceWindowTest, WindowOfOne) {
  SequenceWindow w(1);
  EXPECT_EQ(w.Check(3), V::kAccept);
  EXPECT_EQ(w.Check(2), V::kBelowWindow);
  EXPECT_EQ(w.Check(3), V::kDuplicate);
  EXPECT_EQ(w.Check(4), V::kAccept);
  EXPECT_EQ(w.Check(3), V::kBelowWindow);  // once passed, even a seen number is old
}

TEST(SequenceWindowTest, SizeZeroIsOne) {
  SequenceWindow w(0);
  EXPECT_EQ(w.size(), 1u);
  EXPECT_EQ(w.Check(7), V::kAccept);
  EXPECT_EQ(w.Check(6), V::kBelowWindow);
}

// Exactly `size` below the highest is the first number outside the window,
// for sizes that are and are not the ring's size.
TEST(SequenceWindowTest, EdgeOfTheWindowForEverySizeShape) {
  for (uint32_t size : {1u, 5u, 32u, 63u, 64u, 65u, 128u, 1000u, 1024u}) {
    SCOPED_TRACE(size);
    SequenceWindow w(size);
    EXPECT_EQ(w.size(), size);
    const uint32_t top = 5000;
    ASSERT_EQ(w.Check(top), V::kAccept);
    EXPECT_EQ(w.Check(top - size), V::kBelowWindow);
    EXPECT_EQ(w.Lag(top - size), size);
    EXPECT_EQ(w.Check(top - (size - 1)), size == 1 ? V::kDuplicate : V::kAccept);
    EXPECT_EQ(w.Check(top - (size - 1)), V::kDuplicate);
    // One step up: the lowest number that was inside is now outside.
    ASSERT_EQ(w.Check(top + 1), V::kAccept);
    EXPECT_EQ(w.Check(top + 1 - size), V::kBelowWindow);
  }
}

TEST(SequenceWindowTest, JumpsOfAboutTheRingSize) {
  // Window 1000 has a ring of 1024: a jump of 1023 clears slot by slot, one
  // of 1024 or more clears the whole ring. Either way the numbers inside the
  // new window were not seen.
  for (uint32_t jump : {999u, 1000u, 1023u, 1024u, 1025u, 100000u}) {
    SCOPED_TRACE(jump);
    SequenceWindow w(1000);
    for (uint32_t s = 1; s <= 2000; ++s) ASSERT_EQ(w.Check(s), V::kAccept);
    const uint32_t top = 2000 + jump;
    ASSERT_EQ(w.Check(top), V::kAccept);
    for (uint32_t s = top - 999; s < top; ++s) {
      const V expected = s <= 2000 ? V::kDuplicate : V::kAccept;
      ASSERT_EQ(w.Check(s), expected) << s;
    }
    EXPECT_EQ(w.Check(top - 1000), V::kBelowWindow);
  }
}

TEST(SequenceWindowTest, ResetStartsOver) {
  SequenceWindow w(8);
  EXPECT_EQ(w.Check(1000), V::kAccept);
  EXPECT_EQ(w.Check(999), V::kAccept);
  w.Reset();
  EXPECT_EQ(w.Lag(0), 0u);
  EXPECT_EQ(w.highest(), 0u);
  EXPECT_EQ(w.Check(0), V::kAccept);  // far below the old window
  EXPECT_EQ(w.Check(1), V::kAccept);
  w.Reset();
  EXPECT_EQ(w.Check(999), V::kAccept);  // seen before the reset: not a duplicate
  EXPECT_EQ(w.Check(1000), V::kAccept);
}

TEST(SequenceWindowTest, LagIsDistanceBelowTheHighest) {
  SequenceWindow w(16);
  EXPECT_EQ(w.Lag(5), 0u);  // nothing seen
  ASSERT_EQ(w.Check(100), V::kAccept);
  EXPECT_EQ(w.Lag(100), 0u);
  EXPECT_EQ(w.Lag(101), 0u);
  EXPECT_EQ(w.Lag(90), 10u);
  EXPECT_EQ(w.Lag(0), 100u);  // also beyond the window
}

TEST(SequenceWindowTest, WholeUnsignedRange) {
  // The server stops numbers at MAXSEQ before they reach the window, but the
  // window itself must not misbehave at the top of uint32.
  SequenceWindow w(128);
  EXPECT_EQ(w.Check(0xfffffff0u), V::kAccept);
  EXPECT_EQ(w.Check(0xffffffffu), V::kAccept);
  EXPECT_EQ(w.Check(0xffffffffu), V::kDuplicate);
  EXPECT_EQ(w.Check(0xfffffff0u), V::kDuplicate);
  EXPECT_EQ(w.Check(0xfffffff1u), V::kAccept);
  EXPECT_EQ(w.Check(0xffffffffu - 128), V::kBelowWindow);
  EXPECT_EQ(w.Lag(0), 0xffffffffu);
  SequenceWindow one(1);
  EXPECT_EQ(one.Check(0), V::kAccept);
  EXPECT_EQ(one.Check(0xffffffffu), V::kAccept);  // a jump over the whole ring
}

// Random traffic as nconnect produces it (calls numbered in order, delivered
// with some reordering, the odd replay, jump and reset), checked call by
// call against the RFC's rule written plainly.
TEST(SequenceWindowTest, AgreesWithTheRfcModelOnRandomTraffic) {
  for (uint32_t size : {1u, 2u, 5u, 32u, 63u, 64u, 65u, 128u, 1000u}) {
    SCOPED_TRACE(size);
    std::mt19937 rng(size);
    SequenceWindow w(size);
    Rfc2203WindowModel model(size);
    std::vector<uint32_t> recent;
    uint32_t next = 1;
    int accepted = 0, duplicates = 0, below = 0;
    for (int i = 0; i < 20000; ++i) {
      const uint32_t r = rng() % 1000;
      uint32_t seq;
      if (r < 2) {
        w.Reset();
        model.Reset();
        next = rng() % 100;
        continue;
      } else if (r < 10) {
        next += 1 + rng() % (4 * size + 200);  // a jump
        seq = next;
      } else if (r < 60 && !recent.empty()) {
        seq = recent[rng() % recent.size()];  // a replay of a recent number
      } else {
        // A number issued a little earlier and delivered late.
        const uint32_t back = rng() % (2 * size + 3);
        seq = next > back ? next - back : 0;
        ++next;
      }
      const uint32_t lag = model.any() && seq < model.last() ? model.last() - seq : 0;
      ASSERT_EQ(w.Lag(seq), lag) << "call " << i << " seq " << seq;
      const V expected = model.Check(seq);
      ASSERT_EQ(w.Check(seq), expected) << "call " << i << " seq " << seq;
      ASSERT_EQ(w.highest(), model.last());
      (expected == V::kAccept ? accepted : expected == V::kDuplicate ? duplicates : below)++;
      recent.push_back(seq);
      if (recent.size() > 4 * size + 8) recent.erase(recent.begin());
    }
    // The traffic exercised all three verdicts.
    EXPECT_GT(accepted, 1000);
    EXPECT_GT(duplicates, 100);
    EXPECT_GT(below, 100);
  }
}

}  // namespace
}  // namespace secmode::rpc
