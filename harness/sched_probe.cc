#include "harness/sched_probe.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <system_error>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/latency.h"
#include "common/machine.h"
#include "sim/scenario.h"

namespace secmode::harness {

using common::Status;

namespace {

// How many times the calling thread has been switched off its core.
long ContextSwitches() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_nvcsw + ru.ru_nivcsw;
}

// Which gaps between two clock reads a spinning thread records.
enum class Gaps {
  kAll,       // every gap: a deschedule, an interrupt, the hypervisor
  kSwitches,  // only those in which the kernel switched the thread out
};

// Spins reading the clock until done(now); a gap between two reads longer
// than `threshold_ns` is time off the core: the run before it goes to
// `runs`, the gap to `gaps`. With Gaps::kSwitches a gap in which the thread
// was not switched out (the thread's context switch count did not move: an
// interrupt, or the hypervisor holding the vCPU) is neither a gap nor the
// end of a run. Returns the total time off the core, every gap counted.
template <typename Done>
uint64_t SpinRecordingGaps(uint64_t threshold_ns, Gaps which, common::LatencySamples& runs,
                           common::LatencySamples& gaps, Done done) {
  uint64_t last = common::NowNs(), run_start = last, off = 0;
  long switches = which == Gaps::kSwitches ? ContextSwitches() : 0;
  while (true) {
    uint64_t now = common::NowNs();
    if (done(now)) return off;
    if (now - last > threshold_ns) {
      off += now - last;
      bool counts = true;
      if (which == Gaps::kSwitches) {
        const long seen = ContextSwitches();
        counts = seen != switches;
        switches = seen;
        now = common::NowNs();  // the count's own cost is not a run's
      }
      if (counts) {
        runs.Add(last - run_start);
        gaps.Add(now - last);
        run_start = now;
      }
    }
    last = now;
  }
}

// The first two CPUs this process may run on; the second is -1 when it
// may run on one only.
common::Result<std::array<int, 2>> FirstTwoCpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    return Status::IoError(std::string("sched_getaffinity: ") + std::strerror(errno));
  }
  std::array<int, 2> cpus = {-1, -1};
  for (int c = 0, n = 0; c < CPU_SETSIZE && n < 2; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus[static_cast<size_t>(n++)] = c;
  }
  return cpus;
}

// Pins the calling thread to `cpu`; false if the kernel refused.
bool PinCallingThread(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

// The samples' quantiles at sim::kPauseProbs, in ns.
std::vector<int64_t> QuantilesNs(common::LatencySamples& s) {
  std::vector<int64_t> q;
  for (double p : sim::kPauseProbs) q.push_back(static_cast<int64_t>(s.Percentile(p)));
  return q;
}

double Us(common::LatencySamples& s, double q) {
  return static_cast<double>(s.Percentile(q)) / 1e3;
}

}  // namespace

nlohmann::json SchedProbe::ToJson() const {
  return {{"threads", threads},
          {"cores", cores},
          {"seconds", seconds},
          {"gaps", gaps},
          {"run_p50_us", run_p50_us},
          {"run_p90_us", run_p90_us},
          {"gap_p50_us", gap_p50_us},
          {"gap_p90_us", gap_p90_us},
          {"gap_p99_us", gap_p99_us},
          {"running_share", running_share},
          {"steal_fraction", steal_fraction},
          {"gaps_per_s", gaps_per_s},
          {"gap_quantiles_ns", gap_quantiles_ns},
          {"gap_threshold_ns", gap_threshold_ns},
          {"switches_only", switches_only},
          {"chosen_of", chosen_of}};
}

common::Result<SchedProbe> ProbeScheduler(int threads, double seconds, int64_t gap_threshold_ns,
                                          bool switches_only) {
  if (threads < 1 || threads > 4096) {
    return Status::InvalidArgument("probe threads: " + std::to_string(threads) +
                                   ", must be in [1, 4096]");
  }
  if (!(seconds > 0 && seconds <= 60)) {
    return Status::InvalidArgument("probe seconds: must be in (0, 60]");
  }
  struct PerThread {
    common::LatencySamples runs, gaps;
    uint64_t gap_total = 0;
  };
  std::vector<PerThread> per(static_cast<size_t>(threads));
  std::atomic<bool> go{false};
  std::atomic<int> ready{0};
  const uint64_t span = static_cast<uint64_t>(seconds * 1e9);
  const uint64_t threshold = static_cast<uint64_t>(gap_threshold_ns);
  std::vector<std::thread> pool;
  try {
    for (int i = 0; i < threads; ++i) {
      pool.emplace_back([&, i] {
        PerThread& me = per[static_cast<size_t>(i)];
        me.runs.Reserve(4096);
        me.gaps.Reserve(4096);
        ready++;
        while (!go.load(std::memory_order_acquire)) {
        }
        const uint64_t start = common::NowNs();
        me.gap_total =
            SpinRecordingGaps(threshold, switches_only ? Gaps::kSwitches : Gaps::kAll, me.runs,
                              me.gaps, [&](uint64_t now) { return now - start >= span; });
      });
    }
  } catch (const std::system_error& e) {
    go = true;
    for (auto& t : pool) t.join();
    return Status::Unavailable(std::string("probe thread: ") + e.what());
  }
  while (ready.load() < threads) usleep(100);
  const common::CpuTimes cpu0 = common::ReadCpuTimes();
  const uint64_t t0 = common::NowNs();
  go.store(true, std::memory_order_release);
  for (auto& t : pool) t.join();
  SchedProbe p;
  p.steal_fraction = common::StealFraction(cpu0, common::ReadCpuTimes());
  p.threads = threads;
  p.cores = common::LogicalCpus();
  p.seconds = static_cast<double>(common::NowNs() - t0) / 1e9;
  common::LatencySamples runs, gaps;
  double share = 0;
  for (auto& t : per) {
    runs.Merge(t.runs);
    gaps.Merge(t.gaps);
    share += 1.0 - static_cast<double>(t.gap_total) / static_cast<double>(span);
  }
  p.gaps = static_cast<int64_t>(gaps.count());
  p.run_p50_us = Us(runs, 0.5);
  p.run_p90_us = Us(runs, 0.9);
  p.gap_p50_us = Us(gaps, 0.5);
  p.gap_p90_us = Us(gaps, 0.9);
  p.gap_p99_us = Us(gaps, 0.99);
  p.running_share = share / threads;
  p.gap_threshold_ns = gap_threshold_ns;
  p.switches_only = switches_only;
  p.gaps_per_s = static_cast<double>(p.gaps) / (static_cast<double>(span) / 1e9 * threads);
  if (p.gaps > 0) p.gap_quantiles_ns = QuantilesNs(gaps);
  return p;
}

double PausePerS(const SchedProbe& p) { return p.gap_quantiles_ns.empty() ? 0 : p.gaps_per_s; }

double PausePerSWithSteal(const SchedProbe& p, double steal) {
  const double paused = 1.0 - p.running_share;
  if (steal < 0 || p.gap_quantiles_ns.empty() || paused <= 0) return PausePerS(p);
  const double not_hypervisor = std::max(0.0, paused - std::max(0.0, p.steal_fraction));
  return p.gaps_per_s * (not_hypervisor + steal) / paused;
}

std::vector<int64_t> PauseNs(const SchedProbe& p) { return p.gap_quantiles_ns; }

common::Result<SchedProbe> ProbePauses(double seconds) {
  return ProbeScheduler(common::LogicalCpus(), seconds, kPauseThresholdNs, /*switches_only=*/false);
}

const SchedProbe& MedianPausedShare(std::vector<SchedProbe>& tries) {
  std::sort(tries.begin(), tries.end(), [](const SchedProbe& a, const SchedProbe& b) {
    return a.running_share > b.running_share;  // least paused first
  });
  return tries[(tries.size() - 1) / 2];
}

common::Result<SchedProbe> ProbeMachinePauses() {
  std::vector<SchedProbe> tries;
  for (int i = 0; i < 3; ++i) {
    SECMODE_ASSIGN_OR_RETURN(SchedProbe p, ProbePauses(1.0));
    tries.push_back(std::move(p));
  }
  SchedProbe kept = MedianPausedShare(tries);
  kept.chosen_of = static_cast<int>(tries.size());
  return kept;
}

nlohmann::json WakeupProbe::ToJson() const {
  return {{"cores", cores},
          {"wakers", wakers},
          {"seconds", seconds},
          {"runs", runs},
          {"run_p10_us", run_p10_us},
          {"run_p50_us", run_p50_us},
          {"run_p90_us", run_p90_us},
          {"gap_p50_us", gap_p50_us},
          {"gap_p90_us", gap_p90_us},
          {"gap_p99_us", gap_p99_us},
          {"late_p50_us", late_p50_us},
          {"late_p99_us", late_p99_us}};
}

common::Result<WakeupProbe> ProbeWakeupPreemption(int wakers, double seconds, int sleep_us,
                                                  int burst_us) {
  if (wakers < 1 || wakers > 4096) {
    return Status::InvalidArgument("probe wakers: " + std::to_string(wakers) +
                                   ", must be in [1, 4096]");
  }
  if (!(seconds > 0 && seconds <= 60) || sleep_us < 1 || sleep_us > 1000000 || burst_us < 0) {
    return Status::InvalidArgument(
        "probe: seconds in (0, 60], sleep in [1 us, 1 s], burst >= 0 us");
  }
  const int cores = common::LogicalCpus();
  std::atomic<bool> stop{false};
  std::vector<common::LatencySamples> runs(static_cast<size_t>(cores)),
      gaps(static_cast<size_t>(cores)), late(static_cast<size_t>(wakers));
  std::vector<std::thread> pool;
  try {
    for (int i = 0; i < cores; ++i) {
      pool.emplace_back([&, i] {
        SpinRecordingGaps(kGapThresholdNs, Gaps::kSwitches, runs[static_cast<size_t>(i)],
                          gaps[static_cast<size_t>(i)],
                          [&](uint64_t) { return stop.load(std::memory_order_relaxed); });
      });
    }
    for (int i = 0; i < wakers; ++i) {
      pool.emplace_back([&, i] {
        common::LatencySamples& me = late[static_cast<size_t>(i)];
        // Each waker draws its sleeps from [sleep/2, 3 sleep/2]: with equal
        // sleeps the kernel's timer slack lets the wakers' timers fire in
        // step, and the busy threads' runs then measure the wakers' period
        // instead of how soon a wakeup takes a core.
        std::mt19937 rng(static_cast<uint32_t>(i) + 1);
        std::uniform_int_distribution<int> pick(std::max(1, sleep_us / 2), sleep_us * 3 / 2);
        while (!stop.load(std::memory_order_relaxed)) {
          const int sleep = pick(rng);
          const uint64_t t0 = common::NowNs();
          usleep(static_cast<useconds_t>(sleep));
          const uint64_t woke = common::NowNs();
          const uint64_t due = t0 + uint64_t(sleep) * 1000;
          me.Add(woke > due ? woke - due : 0);
          while (common::NowNs() - woke < uint64_t(burst_us) * 1000) {
          }
        }
      });
    }
  } catch (const std::system_error& e) {
    stop = true;
    for (auto& t : pool) t.join();
    return Status::Unavailable(std::string("probe thread: ") + e.what());
  }
  const uint64_t t0 = common::NowNs();
  usleep(static_cast<useconds_t>(seconds * 1e6));
  stop = true;
  for (auto& t : pool) t.join();
  WakeupProbe p;
  p.cores = cores;
  p.wakers = wakers;
  p.seconds = static_cast<double>(common::NowNs() - t0) / 1e9;
  common::LatencySamples all_runs, all_gaps, all_late;
  for (auto& r : runs) all_runs.Merge(r);
  for (auto& g : gaps) all_gaps.Merge(g);
  for (auto& l : late) all_late.Merge(l);
  p.runs = static_cast<int64_t>(all_runs.count());
  p.run_p10_us = Us(all_runs, 0.1);
  p.run_p50_us = Us(all_runs, 0.5);
  p.run_p90_us = Us(all_runs, 0.9);
  p.gap_p50_us = Us(all_gaps, 0.5);
  p.gap_p90_us = Us(all_gaps, 0.9);
  p.gap_p99_us = Us(all_gaps, 0.99);
  p.late_p50_us = Us(all_late, 0.5);
  p.late_p99_us = Us(all_late, 0.99);
  return p;
}

nlohmann::json CoreWakeProbe::ToJson() const {
  return {{"busy", busy},
          {"rounds", rounds},
          {"p10_us", p10_us},
          {"p50_us", p50_us},
          {"p90_us", p90_us},
          {"p99_us", p99_us},
          {"blocked_p50_us", blocked_p50_us},
          {"quantiles_ns", quantiles_ns}};
}

common::Result<CoreWakeProbe> ProbeCoreWake(int rounds, bool busy, int waker_busy_min_us,
                                            int waker_busy_max_us) {
  if (rounds < 1 || rounds > 1000000) {
    return Status::InvalidArgument("core wake probe rounds: " + std::to_string(rounds) +
                                   ", must be in [1, 1000000]");
  }
  if (waker_busy_min_us < 0 || waker_busy_max_us < waker_busy_min_us ||
      waker_busy_max_us > 1000000) {
    return Status::InvalidArgument(
        "core wake probe: the waker's busy time " + std::to_string(waker_busy_min_us) + ".." +
        std::to_string(waker_busy_max_us) + " us must be an interval within [0, 1000000]");
  }
  CoreWakeProbe p;
  p.busy = busy;
  std::array<int, 2> cpus{};
  SECMODE_ASSIGN_OR_RETURN(cpus, FirstTwoCpus());
  if (cpus[1] < 0) return p;  // one CPU: no second core to wake
  const int go = eventfd(0, EFD_CLOEXEC), back = eventfd(0, EFD_CLOEXEC);
  if (go < 0 || back < 0) {
    const std::string why = std::strerror(errno);
    if (go >= 0) close(go);
    if (back >= 0) close(back);
    return Status::IoError("eventfd: " + why);
  }
  auto pin = PinCallingThread;
  std::atomic<uint64_t> sent{0};
  std::atomic<bool> pinned{true}, failed{false};
  common::LatencySamples wake, blocked;
  wake.Reserve(static_cast<size_t>(rounds));  // no allocation between a wakeup and its answer
  blocked.Reserve(static_cast<size_t>(rounds));
  auto signal = [](int fd) {
    const uint64_t one = 1;
    return write(fd, &one, sizeof one) == static_cast<ssize_t>(sizeof one);
  };
  auto await = [](int fd) {
    uint64_t v = 0;
    while (true) {
      const ssize_t n = read(fd, &v, sizeof v);
      if (n == static_cast<ssize_t>(sizeof v)) return true;
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
  };
  std::atomic<bool> spin{busy};
  std::thread spinner, reader;
  try {
    if (busy) {
      spinner = std::thread([&] {
        if (!pin(cpus[1])) pinned = false;
        while (spin.load(std::memory_order_relaxed)) {
        }
      });
    }
    reader = std::thread([&] {
      if (!pin(cpus[1])) pinned = false;
      signal(back);  // pinned (or not): the writer may start
      // eventfd reads and writes of a counter this small do not fail; if
      // one did, the writer is told and stops.
      for (int i = 0; i < rounds; ++i) {
        const uint64_t waits_from = common::NowNs();
        if (!await(go)) {
          failed = true;
          signal(back);
          return;
        }
        const uint64_t at = sent.load(std::memory_order_acquire);
        wake.Add(common::NowNs() - at);
        blocked.Add(at > waits_from ? at - waits_from : 0);
        if (!signal(back)) {
          failed = true;
          return;
        }
      }
    });
  } catch (const std::system_error& e) {
    spin = false;
    if (spinner.joinable()) spinner.join();
    close(go);
    close(back);
    return Status::Unavailable(std::string("probe thread: ") + e.what());
  }
  // The writer: this thread, pinned for the probe, its own mask restored.
  cpu_set_t mine;
  CPU_ZERO(&mine);
  const bool had_mask = pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) == 0;
  if (!pin(cpus[0])) pinned = false;
  std::mt19937 rng(1);
  bool ok = await(back);
  for (int i = 0; ok && i < rounds; ++i) {
    const uint64_t span_ns = static_cast<uint64_t>(waker_busy_max_us - waker_busy_min_us) * 1000;
    const uint64_t busy_ns =
        static_cast<uint64_t>(waker_busy_min_us) * 1000 + (span_ns > 0 ? rng() % span_ns : 0);
    const uint64_t t0 = common::NowNs();
    while (common::NowNs() - t0 < busy_ns) {
    }
    sent.store(common::NowNs(), std::memory_order_release);
    ok = signal(go) && await(back) && !failed;
  }
  if (!ok) signal(go);  // the reader may still wait for its round
  reader.join();
  spin = false;
  if (spinner.joinable()) spinner.join();
  if (had_mask) pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
  close(go);
  close(back);
  if (!ok) return Status::IoError("core wake probe: an eventfd read or write failed");
  if (!pinned) return Status::Unavailable("core wake probe: cannot pin threads to two CPUs");
  p.rounds = rounds;
  p.p10_us = Us(wake, 0.1);
  p.p50_us = Us(wake, 0.5);
  p.p90_us = Us(wake, 0.9);
  p.p99_us = Us(wake, 0.99);
  p.blocked_p50_us = Us(blocked, 0.5);
  p.quantiles_ns = QuantilesNs(wake);
  return p;
}

nlohmann::json WakeOrderProbe::ToJson() const {
  return {
      {"rounds", rounds}, {"woken_first", woken_first}, {"woken_first_share", woken_first_share}};
}

common::Result<WakeOrderProbe> ProbeWakeOrder(int rounds) {
  if (rounds < 1 || rounds > 100000) {
    return Status::InvalidArgument("wake order probe rounds: " + std::to_string(rounds) +
                                   ", must be in [1, 100000]");
  }
  WakeOrderProbe p;
  std::array<int, 2> cpus{};
  SECMODE_ASSIGN_OR_RETURN(cpus, FirstTwoCpus());
  if (cpus[1] < 0) return p;
  // Semaphore eventfds: every wakeup written is one read, none merge.
  int fds[2] = {eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE), eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE)};
  if (fds[0] < 0 || fds[1] < 0) {
    const std::string why = std::strerror(errno);
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
    return Status::IoError("eventfd: " + why);
  }
  auto pin = PinCallingThread;
  constexpr uint64_t kBurstNs = 30000, kSecondAfterNs = 5000, kGapNs = 3000;
  struct Span {
    uint64_t from = 0, to = 0;
  };
  std::atomic<bool> stop{false}, pinned{true};
  // The busy thread's times off its core, in a buffer it never grows (an
  // allocation while it spins would be a gap of its own); once it is full
  // the rounds after are not counted.
  std::vector<Span> gaps(static_cast<size_t>(rounds) * 64);
  size_t gap_count = 0;
  std::vector<Span> ran[2];  // each sleeper's runs
  std::thread busy, sleepers[2];
  auto end_all = [&] {
    stop = true;
    const uint64_t one = static_cast<uint64_t>(rounds);  // releases a sleeper still waiting
    for (int fd : fds) {
      if (write(fd, &one, sizeof one) != static_cast<ssize_t>(sizeof one)) {
      }
    }
    if (busy.joinable()) busy.join();
    for (auto& t : sleepers) {
      if (t.joinable()) t.join();
    }
    for (int fd : fds) close(fd);
  };
  try {
    busy = std::thread([&] {
      if (!pin(cpus[1])) pinned = false;
      uint64_t last = common::NowNs();
      while (!stop.load(std::memory_order_relaxed)) {
        const uint64_t t = common::NowNs();
        if (t - last > kGapNs && gap_count < gaps.size()) gaps[gap_count++] = {last, t};
        last = t;
      }
    });
    for (int k = 0; k < 2; ++k) {
      ran[k].reserve(static_cast<size_t>(rounds));
      sleepers[k] = std::thread([&, k] {
        if (!pin(cpus[1])) pinned = false;
        for (int i = 0; i < rounds; ++i) {
          uint64_t v = 0;
          if (read(fds[k], &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return;
          if (stop) return;
          const uint64_t t = common::NowNs();
          while (common::NowNs() - t < kBurstNs) {
          }
          ran[k].push_back({t, common::NowNs()});
        }
      });
    }
  } catch (const std::system_error& e) {
    end_all();
    return Status::Unavailable(std::string("probe thread: ") + e.what());
  }
  cpu_set_t mine;
  CPU_ZERO(&mine);
  const bool had_mask = pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) == 0;
  if (!pin(cpus[0])) pinned = false;
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  bool ok = true;
  for (int i = 0; ok && i < rounds; ++i) {
    const uint64_t one = 1;
    ok = write(fds[0], &one, sizeof one) == static_cast<ssize_t>(sizeof one);
    const uint64_t t = common::NowNs();
    while (common::NowNs() - t < kSecondAfterNs) {
    }
    ok = ok && write(fds[1], &one, sizeof one) == static_cast<ssize_t>(sizeof one);
    std::this_thread::sleep_for(std::chrono::milliseconds(3));  // both done, the busy thread back
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  end_all();  // the sleepers have had their rounds, or are released
  const size_t done = std::min(ran[0].size(), ran[1].size());
  gaps.resize(gap_count);
  if (had_mask) pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
  if (!ok) return Status::IoError("wake order probe: an eventfd write failed");
  if (!pinned) return Status::Unavailable("wake order probe: cannot pin threads to two CPUs");
  size_t g = 0;
  for (size_t i = 0; i < done; ++i) {
    const uint64_t first = std::min(ran[0][i].from, ran[1][i].from);
    const uint64_t second = std::max(ran[0][i].from, ran[1][i].from);
    const uint64_t last = std::max(ran[0][i].to, ran[1][i].to);
    while (g < gaps.size() && gaps[g].to < first) ++g;
    if (g == gaps.size()) break;
    if (gaps[g].from > first) continue;  // the busy thread was not off when the first ran
    if (gaps[g].to >= last) {
      ++p.rounds;
      ++p.woken_first;  // off across both
    } else if (gaps[g].to < second) {
      ++p.rounds;  // it ran between them
    }
  }
  p.woken_first_share =
      p.rounds > 0 ? static_cast<double>(p.woken_first) / static_cast<double>(p.rounds) : 0;
  return p;
}

int64_t SliceNs(const SchedProbe& p) {
  return std::max<int64_t>(1000, static_cast<int64_t>(p.run_p50_us * 1e3));
}

int64_t WakeupPreemptNs(const WakeupProbe& p) { return static_cast<int64_t>(p.run_p10_us * 1e3); }

common::Result<SchedProbe> ProbeSchedulerFor(int threads) { return ProbeScheduler(threads, 0.3); }

nlohmann::json IdleWakeCurve::ToJson() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const CoreWakeProbe& p : points) rows.push_back(p.ToJson());
  return {{"points", rows}, {"idle_ns", idle_ns}, {"wake_ns", wake_ns}};
}

common::Result<IdleWakeCurve> ProbeIdleWakeCurve(int rounds) {
  IdleWakeCurve curve;
  for (int us : kIdleWakeAfterUs) {
    SECMODE_ASSIGN_OR_RETURN(CoreWakeProbe p, ProbeCoreWake(rounds, false, us, us));
    if (p.rounds == 0) return IdleWakeCurve{};  // one CPU: no idle core to wake
    const auto idle = static_cast<int64_t>(p.blocked_p50_us * 1e3);
    // Idle lengths must rise for the model; a point whose waiter was not
    // idle longer than the one before's adds nothing to the curve.
    if (curve.idle_ns.empty() || idle > curve.idle_ns.back()) {
      curve.idle_ns.push_back(idle);
      curve.wake_ns.push_back(p.quantiles_ns[sim::kPauseMedian]);
    }
    curve.points.push_back(p);
  }
  return curve;
}

int64_t IdleWakeNs(const IdleWakeCurve& c) { return c.wake_ns.empty() ? 0 : c.wake_ns.back(); }

common::Result<IdleWakeCurve> ProbeIdleWakes() { return ProbeIdleWakeCurve(200); }

std::vector<int64_t> BusyWakeNs(const CoreWakeProbe& p) { return p.quantiles_ns; }

common::Result<CoreWakeProbe> ProbeBusyWakes() { return ProbeCoreWake(500, true); }

common::Result<WakeupProbe> ProbeWakeups() {
  std::vector<WakeupProbe> tries;
  for (int i = 0; i < 3; ++i) {
    SECMODE_ASSIGN_OR_RETURN(WakeupProbe p, ProbeWakeupPreemption(4 * common::LogicalCpus(), 0.4));
    tries.push_back(p);
  }
  std::sort(tries.begin(), tries.end(),
            [](const WakeupProbe& a, const WakeupProbe& b) { return a.run_p10_us < b.run_p10_us; });
  return tries[1];
}

namespace {
constexpr const char* kCpuLatencyDevice = "/dev/cpu_dma_latency";
}  // namespace

common::Result<std::unique_ptr<CoresAwake>> CoresAwake::Start() {
  const int fd = open(kCpuLatencyDevice, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return Status::IoError(std::string("keeping the cores awake: open ") + kCpuLatencyDevice +
                           ": " + std::strerror(errno) + (errno == EACCES ? " (needs root)" : ""));
  }
  const int32_t zero = 0;
  if (write(fd, &zero, sizeof zero) != static_cast<ssize_t>(sizeof zero)) {
    const std::string why = std::strerror(errno);
    close(fd);
    return Status::IoError(std::string("keeping the cores awake: write ") + kCpuLatencyDevice +
                           ": " + why);
  }
  return std::unique_ptr<CoresAwake>(new CoresAwake(fd));
}

CoresAwake::~CoresAwake() {
  if (fd_ >= 0) close(fd_);  // the request ends with the file
}

common::Result<int32_t> CpuLatencyLimitUs() {
  const int fd = open(kCpuLatencyDevice, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Status::IoError(std::string("open ") + kCpuLatencyDevice + ": " + std::strerror(errno));
  }
  int32_t v = 0;
  const ssize_t n = read(fd, &v, sizeof v);
  const std::string why = n < 0 ? std::strerror(errno) : "short read";
  close(fd);
  if (n != static_cast<ssize_t>(sizeof v)) {
    return Status::IoError(std::string("read ") + kCpuLatencyDevice + ": " + why);
  }
  return v;
}

}  // namespace secmode::harness
