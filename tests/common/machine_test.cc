// The machine's CPU time accounting: idle and steal shares between two
// readings of /proc/stat, and unknown (-1) whenever a reading is.
#include "common/machine.h"

#include <gtest/gtest.h>

#include "common/subprocess.h"

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

TEST(MachineTest, LoadAverageReadsThreeNonNegativeFigures) {
  const LoadAverage l = ReadLoadAverage();
  ASSERT_TRUE(l.known) << "/proc/loadavg";
  EXPECT_GE(l.one, 0);
  EXPECT_GE(l.five, 0);
  EXPECT_GE(l.fifteen, 0);
}

TEST(MachineTest, TheFingerprintNamesTheSourceCommitAndTheLoadedLibrariesVersions) {
  const MachineInfo m = ReadMachineInfo();
  // Built from a git checkout (the tests are): a full commit id and the
  // tree's state; otherwise both are said to be unknown.
  if (m.secmode_commit != "unknown") {
    EXPECT_EQ(m.secmode_commit.size(), 40u) << m.secmode_commit;
    EXPECT_EQ(m.secmode_commit.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_TRUE(m.secmode_tree == "clean" || m.secmode_tree == "dirty") << m.secmode_tree;
  } else {
    EXPECT_EQ(m.secmode_tree, "unknown");
  }
  EXPECT_FALSE(m.compiler_flags.empty());
  // This test links OpenSSL's libcrypto (secmode_common does): it is listed
  // as loaded, with its Debian package's version where dpkg can tell.
  std::string crypto;
  for (const auto& [name, version] : m.libraries) {
    if (name.rfind("libcrypto.so", 0) == 0) crypto = version;
  }
  ASSERT_FALSE(crypto.empty()) << "libcrypto is loaded but not listed";
  if (!FindProgram("dpkg-query").empty()) {
    EXPECT_EQ(crypto.find("unknown"), std::string::npos) << crypto;
    EXPECT_NE(crypto.find("(libssl3"), std::string::npos) << crypto;
  }
}

}  // namespace
}  // namespace secmode::common
