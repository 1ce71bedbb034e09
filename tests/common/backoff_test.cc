#include "common/backoff.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace secmode::common {
namespace {

constexpr uint64_t kOneMs = 1000000;

TEST(BackoffTest, AtOnceThenDoublingWithinItsJitterUpToTheCap) {
  Backoff b({10 * kOneMs, 1000 * kOneMs}, 1);
  EXPECT_EQ(b.Next(), 0u);
  uint64_t full = 10 * kOneMs;
  for (int i = 0; i < 20; ++i) {
    const uint64_t w = b.Next();
    EXPECT_GE(w, full / 2) << "attempt " << i + 2;
    EXPECT_LE(w, full) << "attempt " << i + 2;
    full = std::min(full * 2, 1000 * kOneMs);
  }
  EXPECT_EQ(b.failures(), 21u);
}

TEST(BackoffTest, ResetAfterASuccessStartsOverAtOnce) {
  Backoff b({10 * kOneMs, 1000 * kOneMs}, 2);
  for (int i = 0; i < 8; ++i) b.Next();
  b.Reset();
  EXPECT_EQ(b.failures(), 0u);
  EXPECT_EQ(b.Next(), 0u);
  const uint64_t w = b.Next();
  EXPECT_GE(w, 5 * kOneMs);
  EXPECT_LE(w, 10 * kOneMs);
}

TEST(BackoffTest, TheJitterSpreadsAndFollowsTheSeed) {
  Backoff a({kOneMs, 1000 * kOneMs}, 7), same({kOneMs, 1000 * kOneMs}, 7),
      other({kOneMs, 1000 * kOneMs}, 8);
  bool differs = false;
  for (int i = 0; i < 30; ++i) {
    const uint64_t wa = a.Next();
    EXPECT_EQ(wa, same.Next());
    differs |= wa != other.Next();
  }
  EXPECT_TRUE(differs);
}

// Attempts in a span of failures stay logarithmic in the ratio, then one
// per cap: the sum of the waits of attempts 2..n reaches T quickly.
TEST(BackoffTest, AttemptsInASpanOfFailuresAreBounded) {
  Backoff b({kOneMs, 1000 * kOneMs}, 3);
  uint64_t waited = 0;
  int attempts = 0;
  while (waited < 10000 * kOneMs) {
    waited += b.Next();
    ++attempts;
  }
  // 1 + 10 doublings to the cap, then at least 0.5 s each for 10 s.
  EXPECT_LE(attempts, 1 + 11 + 20);
  EXPECT_GE(attempts, 1 + 10 + 5);
}

TEST(BackoffTest, ACapBelowTheStartAndHugeCountsStaySane) {
  Backoff b({50 * kOneMs, 10 * kOneMs}, 4);  // the cap is raised to the start
  b.Next();
  for (int i = 0; i < 100; ++i) {
    const uint64_t w = b.Next();
    EXPECT_GE(w, 25 * kOneMs);
    EXPECT_LE(w, 50 * kOneMs);
  }
}

}  // namespace
}  // namespace secmode::common
