// The per-thread accounts the nconnect validation reads at a thread's start
// and end: its context switches and the scheduler's schedstat.
#include "common/clock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

namespace secmode::common {
namespace {

TEST(ThreadAccountsTest, ASleepIsAVoluntarySwitchAndARunOfTheThreadOwn) {
  // On a thread of its own, so nothing else this process did counts.
  ThreadSwitches before, after;
  ThreadSchedStat sched_before, sched_after;
  std::thread t([&] {
    before = ThreadSwitchesNow();
    sched_before = ThreadSchedStatNow();
    for (int i = 0; i < 5; ++i) usleep(1000);  // blocks five times
    const uint64_t until = ThreadCpuNs() + 2000000;
    while (ThreadCpuNs() < until) {
    }
    after = ThreadSwitchesNow();
    sched_after = ThreadSchedStatNow();
  });
  t.join();
  EXPECT_GE(after.voluntary - before.voluntary, 5u);
  if (!sched_before.known) GTEST_SKIP() << "no /proc/thread-self/schedstat on this kernel";
  ASSERT_TRUE(sched_after.known);
  EXPECT_GE(sched_after.runs - sched_before.runs, 5u);            // on a CPU again after each sleep
  EXPECT_GE(sched_after.run_ns - sched_before.run_ns, 2000000u);  // the spin's CPU at least
  EXPECT_GE(sched_after.wait_ns, sched_before.wait_ns);
}

}  // namespace
}  // namespace secmode::common
