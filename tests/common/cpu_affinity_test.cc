// CpuPin pins the calling thread to one CPU and gives back what it had; a
// CPU the process may not use is refused naming the allowed ones.
#include "common/cpu_affinity.h"

#include <gtest/gtest.h>

#include <thread>

namespace secmode::common {
namespace {

TEST(CpuAffinityTest, CpuListTextJoinsRuns) {
  EXPECT_EQ(CpuListText({0, 1, 2, 3, 6}), "0-3,6");
  EXPECT_EQ(CpuListText({5}), "5");
  EXPECT_EQ(CpuListText({1, 3, 4}), "1,3-4");
  EXPECT_EQ(CpuListText({}), "none");
}

TEST(CpuAffinityTest, PinsToOneCpuAndRestoresTheMaskAfter) {
  // On a thread of its own, so the test process's mask is never changed.
  std::thread([] {
    const std::vector<int> before = AllowedCpus();
    ASSERT_FALSE(before.empty());
    {
      auto pin = CpuPin::Pin(before.back());
      ASSERT_TRUE(pin.ok()) << pin.status().ToString();
      EXPECT_EQ(AllowedCpus(), std::vector<int>{before.back()});
      EXPECT_EQ(sched_getcpu(), before.back());
      CpuPin moved(std::move(pin).value());  // the moved-from one restores nothing
      EXPECT_EQ(AllowedCpus(), std::vector<int>{before.back()});
    }
    EXPECT_EQ(AllowedCpus(), before);
  }).join();
}

TEST(CpuAffinityTest, ACpuOutsideTheMaskIsRefusedNamingTheAllowedOnes) {
  auto pin = CpuPin::Pin(CPU_SETSIZE + 1);
  ASSERT_FALSE(pin.ok());
  EXPECT_EQ(pin.status().code(), Code::kInvalidArgument);
  EXPECT_NE(pin.status().message().find("allowed: " + CpuListText(AllowedCpus())),
            std::string::npos)
      << pin.status().ToString();
  EXPECT_FALSE(CpuPin::Pin(-1).ok());
  // The check alone changes nothing and says the same.
  EXPECT_TRUE(CheckCpuAllowed(AllowedCpus().front()).ok());
  EXPECT_EQ(CheckCpuAllowed(CPU_SETSIZE + 1).message(), pin.status().message());
}

}  // namespace
}  // namespace secmode::common
