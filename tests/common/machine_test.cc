// The machine's CPU time accounting: idle and steal shares between two
// readings of /proc/stat, and unknown (-1) whenever a reading is.
#include "common/machine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/clock.h"
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

// Others' share: the task ticks between two readings less this process's
// own CPU seconds, over all the ticks between them.
TEST(MachineTest, OthersShareIsTheTaskTimeThisProcessDidNotRun) {
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  CpuTimes a = Times(0, 0, 1000), b = Times(0, 0, 1400);
  a.task = 100;
  b.task = 300;  // 200 ticks of tasks in 400
  EXPECT_DOUBLE_EQ(OthersFraction(a, b, 0), 0.5);
  EXPECT_NEAR(OthersFraction(a, b, 150 * tick), 50.0 / 400, 1e-12);
  // Own time beyond the tasks' (rusage and ticks are sampled apart): none.
  EXPECT_EQ(OthersFraction(a, b, 300 * tick), 0);
  EXPECT_EQ(OthersFraction(a, a, 0), -1);
  EXPECT_EQ(OthersFraction(b, a, 0), -1);
  EXPECT_EQ(OthersFraction(CpuTimes(), b, 0), -1);
  // Its parts add up over spans, divided once: a span with nothing known
  // adds nothing, and own time beyond one span's task time (rounding) takes
  // from the others' time of the rest instead of counting as 0 alone.
  CpuShare sum;
  sum.Add(OthersShare(a, b, 0));
  EXPECT_DOUBLE_EQ(sum.part_s, 200 * tick);
  EXPECT_DOUBLE_EQ(sum.all_s, 400 * tick);
  sum.Add(OthersShare(CpuTimes(), b, 0));
  EXPECT_DOUBLE_EQ(sum.Fraction(), 0.5);
  sum.Add(OthersShare(a, b, 300 * tick));  // own time over the task time: below 0 alone
  EXPECT_DOUBLE_EQ(sum.part_s, 100 * tick);
  EXPECT_DOUBLE_EQ(sum.Fraction(), 100.0 / 800);
  EXPECT_EQ(CpuShare().Fraction(), -1);
  // This process's own time is counted, and only grows.
  const double own = OwnCpuSeconds();
  EXPECT_GT(own, 0);
  volatile uint64_t x = 0;
  for (int i = 0; i < 20000000; ++i) x = x + static_cast<uint64_t>(i);
  EXPECT_GT(OwnCpuSeconds(), own);
}

// The hypervisor's steal adds up over spans like others' share: 1 tick of 5
// and none of 95 is 1 in 100 (a median of the two spans' fractions, 20% and
// 0%, says 10%).
TEST(MachineTest, StealSharesAddUpOverSpansBeforeOneDivision) {
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  CpuTimes c = Times(0, 0, 1000), d = Times(0, 0, 1005), e = Times(0, 0, 1100);
  c.steal = 7;
  d.steal = 8;
  e.steal = 8;
  CpuShare steal;
  steal.Add(StealShare(c, d));
  steal.Add(StealShare(d, e));
  EXPECT_DOUBLE_EQ(steal.part_s, tick);
  EXPECT_DOUBLE_EQ(steal.Fraction(), 0.01);
  EXPECT_EQ(StealShare(d, c).all_s, 0);
  EXPECT_EQ(StealShare(CpuTimes(), d).all_s, 0);
}

TEST(MachineTest, ProcStatReadsAsCountersThatOnlyGrow) {
  const CpuTimes t = ReadCpuTimes();
  ASSERT_TRUE(t.known) << "/proc/stat";
  EXPECT_LE(t.idle + t.steal + t.task, t.total);
  EXPECT_GT(t.task, 0u);  // this process has run
  const CpuTimes later = ReadCpuTimes();
  EXPECT_GE(later.total, t.total);
  EXPECT_GE(later.steal, t.steal);
  EXPECT_GE(later.task, t.task);
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

namespace secmode::common {
namespace {

// What a thread spent is read from /proc and counted: this process's tree
// holds this thread, and a thread that spins for 200 ms of CPU is the
// busiest, with at least most of that.
TEST(TaskCpuTest, ASpinningThreadIsTheBusiestOfItsGroup) {
  const std::vector<TaskCpu> before = ReadProcessTreeTaskCpu(getpid());
  bool found = false;
  for (const TaskCpu& t : before) found = found || t.tid == gettid();
  EXPECT_TRUE(found) << "this thread is not among " << before.size() << " threads";
  int spinner_tid = 0;
  std::thread spinner([&spinner_tid] {
    spinner_tid = gettid();
    const uint64_t start = ThreadCpuNs();
    volatile uint64_t x = 0;
    while (ThreadCpuNs() - start < 200000000) x = x + 1;
  });
  spinner.join();
  // The spinner has ended: it is left out. Another one, still running, counts.
  std::atomic<bool> stop{false};
  std::atomic<bool> spun{false};
  std::atomic<int> second_tid{0};
  std::thread second([&] {
    second_tid.store(gettid());
    const uint64_t start = ThreadCpuNs();
    volatile uint64_t x = 0;
    while (!stop.load()) {
      x = x + 1;
      if (ThreadCpuNs() - start > 200000000) spun.store(true);
    }
  });
  while (!spun.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const TaskCpuSpent spent = SpentBetween(before, ReadProcessTreeTaskCpu(getpid()));
  stop.store(true);
  second.join();
  EXPECT_GE(spent.busiest_seconds, 0.15);
  EXPECT_GE(spent.seconds, spent.busiest_seconds);
  EXPECT_NE(spent.busiest.find("(tid " + std::to_string(second_tid.load()) + ")"),
            std::string::npos)
      << spent.busiest << "; the first spinner was tid " << spinner_tid;
}

TEST(TaskCpuTest, NewThreadsCountFromZeroAndAReusedTidIsANewThread) {
  // {pid, tid, comm, system ns, cpu ns}
  const std::vector<TaskCpu> before = {{10, 11, "a", 0, 1000000000},
                                       {20, 21, "b", 100000000, 600000000},
                                       {30, 31, "gone", 0, 9000000000}};
  const std::vector<TaskCpu> after = {{10, 11, "a", 0, 1300000000},           // 0.3 s
                                      {20, 21, "b", 200000000, 700000000},    // 0.1 s, kernel
                                      {40, 41, "new", 400000000, 400000000},  // 0.4 s, new
                                      {50, 31, "reused", 0, 50000000}};       // another pid: new
  const TaskCpuSpent s = SpentBetween(before, after);
  EXPECT_NEAR(s.seconds, 0.3 + 0.1 + 0.4 + 0.05, 1e-9);
  EXPECT_EQ(s.threads, 4);
  EXPECT_EQ(s.busiest, "new (tid 41)");
  EXPECT_NEAR(s.busiest_seconds, 0.4, 1e-9);
  EXPECT_NEAR(s.busiest_system_seconds, 0.4, 1e-9);
  EXPECT_EQ(ReadProcessTreeTaskCpu(0).size(), 0u);
  // The busiest of those with a name: "a" (0.3 s), though "new" spent more.
  const TaskCpuSpent a =
      SpentBetween(before, after, [](const TaskCpu& t) { return t.name.rfind("a", 0) == 0; });
  EXPECT_EQ(a.busiest, "a (tid 11)");
  EXPECT_NEAR(a.seconds, s.seconds, 1e-9);
  EXPECT_TRUE(SpentBetween(before, after, [](const TaskCpu&) { return false; }).busiest.empty());
  // A tid another process took with a larger count: a new thread, counted
  // from zero.
  const TaskCpuSpent reused =
      SpentBetween({{70, 71, "old", 0, 100000000}}, {{80, 71, "other", 0, 150000000}});
  EXPECT_NEAR(reused.seconds, 0.15, 1e-9);
}

// Work shorter than a clock tick counts: the scheduler's ns move when the
// ticks do not. The system share is the ticks', never more than the ns.
TEST(TaskCpuTest, TheSchedulersNanosecondsCountWhatNoTickSaw) {
  const TaskCpu before = {10, 11, "smbd", 10000000, 41000000};
  const TaskCpuSpent s = SpentBetween({before}, {{10, 11, "smbd", 10000000, 44500000}});
  EXPECT_NEAR(s.seconds, 0.0035, 1e-12);
  EXPECT_EQ(s.busiest, "smbd (tid 11)");
  EXPECT_EQ(s.busiest_system_seconds, 0);  // no stime tick came
  const TaskCpuSpent cut = SpentBetween({before}, {{10, 11, "smbd", 20000000, 44500000}});
  EXPECT_NEAR(cut.busiest_system_seconds, 0.0035, 1e-12);  // a tick of 10 ms, cut to 3.5 ms
  const TaskCpuSpent still = SpentBetween({before}, {{10, 11, "smbd", 20000000, 41000000}});
  EXPECT_EQ(still.threads, 0);  // a tick without ns: nothing ran in between
}

// Read from /proc: a thread that spins 3 ms of CPU between two readings,
// asleep at both (so the scheduler's count is up to date), is read as
// 3 ms and a little (waking, signalling), not as 0 or a 10 ms tick.
TEST(TaskCpuTest, AThreadsThreeMillisecondsReadAsThreeMilliseconds) {
  if (!ThreadSchedStatNow().known) GTEST_SKIP() << "this kernel keeps no schedstat";
  constexpr uint64_t kSpinNs = 3000000;
  std::mutex mu;
  std::condition_variable cv;
  // Set under `mu`. 0: started; 1: asleep; 2: spin; 3: spun, asleep; 4: end.
  int phase = 0;
  int tid = 0;
  std::thread spinner([&] {
    std::unique_lock<std::mutex> lock(mu);
    tid = gettid();
    phase = 1;
    cv.notify_all();
    cv.wait(lock, [&] { return phase == 2; });
    const uint64_t start = ThreadCpuNs();
    volatile uint64_t x = 0;
    while (ThreadCpuNs() - start < kSpinNs) x = x + 1;
    phase = 3;
    cv.notify_all();
    cv.wait(lock, [&] { return phase == 4; });
  });
  std::vector<TaskCpu> before, after;
  {
    // The spinner gives `mu` up only by waiting on `cv`: while this thread
    // holds it, the spinner sleeps.
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return phase == 1; });
    before = ReadProcessTreeTaskCpu(getpid());
    phase = 2;
    cv.notify_all();
    cv.wait(lock, [&] { return phase == 3; });
    after = ReadProcessTreeTaskCpu(getpid());
    phase = 4;
    cv.notify_all();
  }
  spinner.join();
  const TaskCpuSpent s =
      SpentBetween(before, after, [&](const TaskCpu& t) { return t.tid == tid; });
  ASSERT_NE(s.busiest.find("(tid " + std::to_string(tid) + ")"), std::string::npos)
      << "the spinner was not read: '" << s.busiest << "'";
  EXPECT_GE(s.busiest_seconds, kSpinNs / 1e9);
  EXPECT_LT(s.busiest_seconds, kSpinNs / 1e9 + 0.002);
}

}  // namespace
}  // namespace secmode::common
