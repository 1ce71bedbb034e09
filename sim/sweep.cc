#include "sim/sweep.h"

#include <atomic>
#include <thread>
#include <utility>

#include "sim/simulator.h"

namespace secmode::sim {

SweepGrid SweepGrid::Default() {
  SweepGrid g;
  g.nconnect = {1, 2, 4, 8, 16};
  g.window = {32, 128, 256};  // MIT gssrpc; Linux nfsd and ONTAP; ganesha and Apple
  g.slots = {16, 64, 128, 256, 512};
  g.io_size = {4096, 65536, 1 << 20};
  g.skew_ns = {0, 200000, 2000000};  // none, one RTT, ten RTTs
  g.reactions = {rpc::WindowPolicy::kDropDisconnect, rpc::WindowPolicy::kDiscardContext};
  g.base.ops = 10000;
  return g;
}

SweepGrid SweepGrid::Quick() {
  SweepGrid g;
  g.nconnect = {1, 4, 16};
  g.window = {32, 128};
  g.slots = {16, 128, 512};
  g.io_size = {65536};
  g.skew_ns = {0, 2000000};
  g.reactions = {rpc::WindowPolicy::kDropDisconnect};
  g.base.ops = 5000;
  return g;
}

size_t SweepGrid::size() const {
  return nconnect.size() * window.size() * slots.size() * io_size.size() * skew_ns.size() *
         reactions.size();
}

std::vector<Scenario> SweepGrid::Expand() const {
  std::vector<Scenario> out;
  out.reserve(size());
  for (rpc::WindowPolicy reaction : reactions) {
    for (int64_t io : io_size) {
      for (int64_t skew : skew_ns) {
        for (int64_t w : window) {
          for (int64_t s : slots) {
            for (int n : nconnect) {
              Scenario sc = base;
              sc.reaction = reaction;
              sc.io_size = io;
              sc.skew_ns = skew;
              sc.window = w;
              sc.slots = s;
              sc.nconnect = n;
              if (sc.skew_conn >= n) sc.skew_conn = n - 1;
              out.push_back(sc);
            }
          }
        }
      }
    }
  }
  return out;
}

nlohmann::json SweepRow::ToJson() const {
  nlohmann::json j = scenario.ToJson();
  if (error.empty()) {
    j.update(result.ToJson());
  } else {
    j["error"] = error;
  }
  return j;
}

std::vector<SweepRow> RunSweep(const std::vector<Scenario>& scenarios, int threads) {
  std::vector<SweepRow> rows(scenarios.size());
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  if (threads <= 0) threads = 1;
  if (static_cast<size_t>(threads) > scenarios.size()) threads = static_cast<int>(scenarios.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < scenarios.size(); i = next++) {
      rows[i].scenario = scenarios[i];
      auto r = Simulate(scenarios[i]);
      if (r.ok()) {
        rows[i].result = std::move(*r);
        // A grid of thousands keeps no per-call lag histograms.
        rows[i].result.sent_lags = {};
        rows[i].result.checked_lags = {};
      } else {
        rows[i].error = r.status().ToString();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return rows;
}

}  // namespace secmode::sim
