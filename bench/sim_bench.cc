// Google Benchmark of the nconnect simulator's speed: simulated RPCs per
// second on one core (items_per_second), for the default scenario and a
// lagging-connection scenario. Run: build/release/bench/sim_bench
#include <benchmark/benchmark.h>

#include "sim/simulator.h"

namespace {

void RunScenario(benchmark::State& state, const secmode::sim::Scenario& s) {
  int64_t rpcs = 0;
  for (auto _ : state) {
    auto r = secmode::sim::Simulate(s);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    rpcs += r->completed;
    benchmark::DoNotOptimize(r->ops_per_s);
  }
  state.SetItemsProcessed(rpcs);  // items/s = simulated RPCs per second
}

void BM_DefaultScenario(benchmark::State& state) {
  secmode::sim::Scenario s;
  s.ops = 100000;
  RunScenario(state, s);
}
BENCHMARK(BM_DefaultScenario)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// 8 connections, 512 slots over a window of 32, one connection 2 ms late,
// drop-disconnect: a run with violations, reconnects and resends.
void BM_LaggingConnection(benchmark::State& state) {
  secmode::sim::Scenario s;
  s.nconnect = 8;
  s.slots = 512;
  s.window = 32;
  s.skew_ns = 2000000;
  s.ops = 100000;
  RunScenario(state, s);
}
BENCHMARK(BM_LaggingConnection)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// The default scenario with the thread model and every mechanism on
// (sim::EveryMechanismScenario).
void BM_DefaultScenarioThreadModel(benchmark::State& state) {
  secmode::sim::Scenario s = secmode::sim::EveryMechanismScenario();
  s.ops = 100000;
  RunScenario(state, s);
}
BENCHMARK(BM_DefaultScenarioThreadModel)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
