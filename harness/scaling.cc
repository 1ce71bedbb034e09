#include "harness/scaling.h"

#include <atomic>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

#include "common/clock.h"
#include "common/stats.h"

namespace secmode::harness {

using common::Bytes;
using common::Status;

std::vector<size_t> ScalingThreadCounts(size_t cpus) {
  cpus = std::max<size_t>(1, cpus);
  std::vector<size_t> out;
  for (size_t t = 1; t <= cpus; t *= 2) out.push_back(t);
  if (out.back() != cpus) out.push_back(cpus);
  out.push_back(cpus + 1);
  return out;
}

namespace {

// One round trip on `a`; the first one of a thread also checks what was opened.
Status RoundTrip(common::Association& a, const Bytes& payload, bool check, Bytes* wire,
                 Bytes* opened) {
  SECMODE_RETURN_IF_ERROR(a.client_seal->Seal(payload, wire).Annotate("client-seal"));
  SECMODE_RETURN_IF_ERROR(a.server_open->Open(*wire, opened).Annotate("server-open"));
  if (check && *opened != payload) return Status::Internal("server-open: payload differs");
  SECMODE_RETURN_IF_ERROR(a.server_seal->Seal(payload, wire).Annotate("server-seal"));
  SECMODE_RETURN_IF_ERROR(a.client_open->Open(*wire, opened).Annotate("client-open"));
  if (check && *opened != payload) return Status::Internal("client-open: payload differs");
  return Status::Ok();
}

}  // namespace

common::Result<ScalingMeasurement> MeasureScaling(
    const std::vector<common::Association*>& associations, size_t size,
    const ScalingOptions& options) {
  if (associations.empty()) return Status::InvalidArgument("scaling: no associations");
  if (options.repetitions == 0) return Status::InvalidArgument("scaling: 0 repetitions");
  if (!(options.seconds > 0)) return Status::InvalidArgument("scaling: seconds must be > 0");
  for (const common::Association* a : associations) {
    if (a == nullptr || !a->client_seal || !a->server_open || !a->server_seal || !a->client_open) {
      return Status::InvalidArgument("scaling: an association lacks a leg");
    }
  }
  const Bytes payload = common::PatternBytes(size, static_cast<uint32_t>(size) + 11);
  ScalingMeasurement m;
  m.threads = associations.size();
  for (size_t rep = 0; rep < options.repetitions; ++rep) {
    std::atomic<size_t> ready{0};
    std::atomic<bool> go{false}, stop{false};
    std::atomic<uint64_t> done{0};
    std::mutex failed_mu;
    Status failed;
    std::vector<std::thread> threads;
    threads.reserve(associations.size());
    // A thread that cannot be started (EAGAIN) ends the repetition: the
    // started ones are stopped and joined, never left joinable.
    auto start = [&](auto&& body) -> bool {
      try {
        threads.emplace_back(std::forward<decltype(body)>(body));
        return true;
      } catch (const std::system_error& e) {
        std::lock_guard<std::mutex> lock(failed_mu);
        failed = Status::Internal(std::string("scaling: cannot start a thread: ") + e.what());
        go.store(true);
        stop.store(true);
        return false;
      }
    };
    for (common::Association* a : associations) {
      const bool started = start([&, a] {
        Bytes wire, opened;
        // Untimed: one round trip that checks the payload and warms up.
        Status s = RoundTrip(*a, payload, /*check=*/true, &wire, &opened);
        ready.fetch_add(1);
        while (s.ok() && !go.load(std::memory_order_acquire)) std::this_thread::yield();
        uint64_t n = 0;
        while (s.ok() && !stop.load(std::memory_order_relaxed)) {
          s = RoundTrip(*a, payload, /*check=*/false, &wire, &opened);
          // Counted only when it ended before the stop.
          if (s.ok() && !stop.load(std::memory_order_relaxed)) ++n;
        }
        done.fetch_add(n);
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(failed_mu);
          if (failed.ok()) failed = s;
          go.store(true);
          stop.store(true);
        }
      });
      if (!started) break;
    }
    while (ready.load() < threads.size() && !stop.load()) std::this_thread::yield();
    const uint64_t t0 = common::NowNs();
    go.store(true, std::memory_order_release);
    while (!stop.load() && common::NowNs() - t0 < static_cast<uint64_t>(options.seconds * 1e9)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    stop.store(true);
    const uint64_t t1 = common::NowNs();
    for (auto& t : threads) t.join();
    if (!failed.ok()) return failed.Annotate("scaling, " + std::to_string(m.threads) + " threads");
    m.round_trips_per_second.push_back(static_cast<double>(done.load()) * 1e9 /
                                       static_cast<double>(t1 - t0));
  }
  const common::Spread s = common::Summarize(m.round_trips_per_second);
  m.median = s.median;
  m.cv = s.cv;
  return m;
}

}  // namespace secmode::harness
