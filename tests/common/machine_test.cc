// The machine's CPU time accounting: idle and steal shares between two
// readings of /proc/stat, and unknown (-1) whenever a reading is.
#include "common/machine.h"

#include <gtest/gtest.h>

namespace secmode::common {
namespace {

CpuTimes Times(uint64_t idle, uint64_t steal, uint64_t total) {
  CpuTimes t;
  t.idle = idle;
  t.steal = steal;
  t.total = total;
  t.known = true;
  return t;
}

TEST(MachineTest, IdleAndStealSharesOfTheTicksBetweenTwoReadings) {
  const CpuTimes a = Times(100, 10, 1000), b = Times(150, 30, 1200);
  EXPECT_DOUBLE_EQ(IdleFraction(a, b), 0.25);
  EXPECT_DOUBLE_EQ(StealFraction(a, b), 0.1);
  // No tick passed, or a counter went back: unknown.
  EXPECT_EQ(StealFraction(a, a), -1);
  EXPECT_EQ(StealFraction(b, a), -1);
  EXPECT_EQ(StealFraction(Times(100, 40, 1000), Times(150, 30, 1200)), -1);
  CpuTimes unknown;
  EXPECT_EQ(StealFraction(unknown, b), -1);
  EXPECT_EQ(IdleFraction(a, unknown), -1);
}

TEST(MachineTest, ProcStatReadsAsCountersThatOnlyGrow) {
  const CpuTimes t = ReadCpuTimes();
  ASSERT_TRUE(t.known) << "/proc/stat";
  EXPECT_LE(t.idle + t.steal, t.total);
  const CpuTimes later = ReadCpuTimes();
  EXPECT_GE(later.total, t.total);
  EXPECT_GE(later.steal, t.steal);
}

}  // namespace
}  // namespace secmode::common
