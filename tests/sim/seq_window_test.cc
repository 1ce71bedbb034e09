#include "sim/seq_window.h"

#include <gtest/gtest.h>

namespace secmode::sim {
namespace {

using V = SeqWindow::Verdict;

TEST(SeqWindowTest, InOrderAndReorderedWithinWindowAccepted) {
  SeqWindow w(4);
  EXPECT_EQ(w.Check(10), V::kAccept);
  EXPECT_EQ(w.Check(12), V::kAccept);
  EXPECT_EQ(w.Check(11), V::kAccept);  // late but inside [9, 12]
  EXPECT_EQ(w.Check(9), V::kAccept);   // highest - 3: still inside a window of 4
  EXPECT_EQ(w.Lag(9), 3u);
}

TEST(SeqWindowTest, BelowWindowRejected) {
  // RFC 2203 5.3.3.1: seq_num <= highest - window is discarded.
  SeqWindow w(4);
  EXPECT_EQ(w.Check(100), V::kAccept);
  EXPECT_EQ(w.Check(96), V::kBelowWindow);
  EXPECT_EQ(w.Check(97), V::kAccept);
  EXPECT_EQ(w.Check(0), V::kBelowWindow);
}

TEST(SeqWindowTest, ReplayRejected) {
  SeqWindow w(128);
  EXPECT_EQ(w.Check(5), V::kAccept);
  EXPECT_EQ(w.Check(5), V::kReplay);
  EXPECT_EQ(w.Check(7), V::kAccept);
  EXPECT_EQ(w.Check(6), V::kAccept);
  EXPECT_EQ(w.Check(6), V::kReplay);
}

TEST(SeqWindowTest, SlidingForgetsOldBitsOnRingReuse) {
  // Ring of 64 bits for window 32: numbers 64 apart share a bit, so sliding
  // must clear it, or 70 would look like a replay of 6.
  SeqWindow w(32);
  for (uint64_t s = 0; s < 40; ++s) ASSERT_EQ(w.Check(s), V::kAccept);
  EXPECT_EQ(w.Check(71), V::kAccept);
  EXPECT_EQ(w.Check(70), V::kAccept);
  EXPECT_EQ(w.Check(40), V::kAccept);  // 71 - 40 = 31 < 32
  EXPECT_EQ(w.Check(39), V::kBelowWindow);
  EXPECT_EQ(w.Check(10000), V::kAccept);  // a jump larger than the ring
  EXPECT_EQ(w.Check(9999), V::kAccept);
  EXPECT_EQ(w.Check(9999), V::kReplay);
}

TEST(SeqWindowTest, ResetStartsOver) {
  SeqWindow w(8);
  EXPECT_EQ(w.Check(1000), V::kAccept);
  w.Reset();
  EXPECT_EQ(w.Check(0), V::kAccept);
  EXPECT_EQ(w.Check(1), V::kAccept);
}

TEST(SeqWindowTest, WindowOfOne) {
  SeqWindow w(1);
  EXPECT_EQ(w.Check(3), V::kAccept);
  EXPECT_EQ(w.Check(2), V::kBelowWindow);
  EXPECT_EQ(w.Check(3), V::kReplay);
  EXPECT_EQ(w.Check(4), V::kAccept);
}

}  // namespace
}  // namespace secmode::sim
