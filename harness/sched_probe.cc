#include "harness/sched_probe.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/latency.h"

namespace secmode::harness {

using common::Status;

nlohmann::json SchedProbe::ToJson() const {
  return {{"threads", threads},       {"cores", cores},
          {"seconds", seconds},       {"gaps", gaps},
          {"run_p50_us", run_p50_us}, {"run_p90_us", run_p90_us},
          {"gap_p50_us", gap_p50_us}, {"gap_p90_us", gap_p90_us},
          {"gap_p99_us", gap_p99_us}, {"running_share", running_share}};
}

common::Result<SchedProbe> ProbeScheduler(int threads, double seconds, int64_t gap_threshold_ns) {
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
        uint64_t last = start, run_start = start;
        while (last - start < span) {
          const uint64_t now = common::NowNs();
          if (now - last > threshold) {
            me.runs.Add(last - run_start);
            me.gaps.Add(now - last);
            me.gap_total += now - last;
            run_start = now;
          }
          last = now;
        }
      });
    }
  } catch (const std::system_error& e) {
    go = true;
    for (auto& t : pool) t.join();
    return Status::Unavailable(std::string("probe thread: ") + e.what());
  }
  while (ready.load() < threads) usleep(100);
  const uint64_t t0 = common::NowNs();
  go.store(true, std::memory_order_release);
  for (auto& t : pool) t.join();
  SchedProbe p;
  p.threads = threads;
  p.cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  p.seconds = static_cast<double>(common::NowNs() - t0) / 1e9;
  common::LatencySamples runs, gaps;
  double share = 0;
  for (auto& t : per) {
    runs.Merge(t.runs);
    gaps.Merge(t.gaps);
    share += 1.0 - static_cast<double>(t.gap_total) / static_cast<double>(span);
  }
  p.gaps = static_cast<int64_t>(gaps.count());
  p.run_p50_us = static_cast<double>(runs.Percentile(0.5)) / 1e3;
  p.run_p90_us = static_cast<double>(runs.Percentile(0.9)) / 1e3;
  p.gap_p50_us = static_cast<double>(gaps.Percentile(0.5)) / 1e3;
  p.gap_p90_us = static_cast<double>(gaps.Percentile(0.9)) / 1e3;
  p.gap_p99_us = static_cast<double>(gaps.Percentile(0.99)) / 1e3;
  p.running_share = share / threads;
  return p;
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
  if (!(seconds > 0 && seconds <= 60) || sleep_us < 1 || burst_us < 0) {
    return Status::InvalidArgument("probe: seconds in (0, 60], sleep >= 1 us, burst >= 0 us");
  }
  const int cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  std::atomic<bool> stop{false};
  std::vector<common::LatencySamples> runs(static_cast<size_t>(cores)),
      gaps(static_cast<size_t>(cores)), late(static_cast<size_t>(wakers));
  std::vector<std::thread> pool;
  const uint64_t threshold = 20000;
  try {
    for (int i = 0; i < cores; ++i) {
      pool.emplace_back([&, i] {
        common::LatencySamples& me = runs[static_cast<size_t>(i)];
        common::LatencySamples& off = gaps[static_cast<size_t>(i)];
        uint64_t last = common::NowNs(), run_start = last;
        while (!stop.load(std::memory_order_relaxed)) {
          const uint64_t now = common::NowNs();
          if (now - last > threshold) {
            me.Add(last - run_start);
            off.Add(now - last);
            run_start = now;
          }
          last = now;
        }
      });
    }
    for (int i = 0; i < wakers; ++i) {
      pool.emplace_back([&, i] {
        common::LatencySamples& me = late[static_cast<size_t>(i)];
        while (!stop.load(std::memory_order_relaxed)) {
          const uint64_t t0 = common::NowNs();
          usleep(static_cast<useconds_t>(sleep_us));
          const uint64_t woke = common::NowNs();
          const uint64_t due = t0 + uint64_t(sleep_us) * 1000;
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
  p.run_p10_us = static_cast<double>(all_runs.Percentile(0.1)) / 1e3;
  p.run_p50_us = static_cast<double>(all_runs.Percentile(0.5)) / 1e3;
  p.run_p90_us = static_cast<double>(all_runs.Percentile(0.9)) / 1e3;
  p.gap_p50_us = static_cast<double>(all_gaps.Percentile(0.5)) / 1e3;
  p.gap_p90_us = static_cast<double>(all_gaps.Percentile(0.9)) / 1e3;
  p.gap_p99_us = static_cast<double>(all_gaps.Percentile(0.99)) / 1e3;
  p.late_p50_us = static_cast<double>(all_late.Percentile(0.5)) / 1e3;
  p.late_p99_us = static_cast<double>(all_late.Percentile(0.99)) / 1e3;
  return p;
}

}  // namespace secmode::harness
