// A fixed battery for the simulator (tools/sim_battery.sh builds and runs
// it): about 250 scenarios over the default model and the thread model with
// each mechanism varied, three seeds each, the two full-size scenarios
// sim_bench times, the --quick sweep (with `big`, the default sweep too), two
// recommendations, Validate's message for each bad parameter, and the JSON
// readers on old and bad documents. Every output on its own line, so that
// the outputs of two builds can be diffed byte for byte (a change that must
// leave the simulator's results as they are).
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "sim/recommend.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "sim/sweep.h"

using namespace secmode::sim;
using nlohmann::json;
using secmode::rpc::WindowPolicy;

namespace {

int n = 0;
void One(const std::string& name, const Scenario& s) {
  auto r = Simulate(s);
  json j = s.ToJson();
  if (r.ok()) {
    j.update(r->ToJson());
    // Round trips through the JSON readers.
    auto s2 = ScenarioFromJson(s.ToJson());
    auto r2 = ScenarioResultFromJson(r->ToJson());
    std::string rt = std::string(s2.ok() ? s2->ToJson().dump() : s2.status().ToString()) + "|" +
                     (r2.ok() ? r2->ToJson().dump() : r2.status().ToString());
    std::cout << "RT " << name << " " << rt << "\n";
  } else {
    j["error"] = r.status().ToString();
  }
  std::cout << "SIM " << name << " " << j.dump() << "\n";
  ++n;
}

}  // namespace

int main(int argc, char** argv) {
  bool big = argc > 1 && std::string(argv[1]) == "big";
  // Variations over the default model and the thread model.
  std::vector<std::pair<std::string, std::function<void(Scenario&)>>> knobs = {
      {"plain", [](Scenario&) {}},
      {"drop",
       [](Scenario& s) {
         s.reaction = WindowPolicy::kDrop;
         s.retransmit_timeout_ns = 5000000;
       }},
      {"discard", [](Scenario& s) { s.reaction = WindowPolicy::kDiscardContext; }},
      {"write", [](Scenario& s) { s.op = Op::kWrite; }},
      {"skew",
       [](Scenario& s) {
         s.skew_ns = 2000000;
         s.skew_conn = 1;
       }},
      {"skewnet",
       [](Scenario& s) {
         s.skew_ns = 2000000;
         s.skew_where = SkewWhere::kNetwork;
       }},
      {"reencode",
       [](Scenario& s) {
         s.reencode = true;
         s.skew_ns = 1000000;
       }},
      {"cap",
       [](Scenario& s) {
         s.spread_cap = 24;
         s.skew_ns = 1000000;
       }},
      {"perconn",
       [](Scenario& s) {
         s.per_connection_context = true;
         s.skew_ns = 1000000;
       }},
      {"rr",
       [](Scenario& s) {
         s.server_order = ServerOrder::kRoundRobin;
         s.server_threads = 2;
       }},
      {"const",
       [](Scenario& s) {
         s.jitter_dist = Dist::kConstant;
         s.service_dist = Dist::kConstant;
       }},
      {"lognormal",
       [](Scenario& s) {
         s.jitter_dist = Dist::kLogNormal;
         s.service_dist = Dist::kLogNormal;
         s.jitter_sigma = 1.5;
       }},
      {"slots256w32",
       [](Scenario& s) {
         s.slots = 256;
         s.window = 32;
         s.nconnect = 8;
       }},
      {"resendany",
       [](Scenario& s) {
         s.resend_any_connection = true;
         s.slots = 256;
         s.window = 32;
         s.nconnect = 8;
         s.reconnect_ns = 300000;
         s.reconnect_cpu_ns = 100000;
         s.reconnect_server_cpu_ns = 50000;
       }},
      {"gsscpu",
       [](Scenario& s) {
         s.reaction = WindowPolicy::kDiscardContext;
         s.slots = 256;
         s.window = 32;
         s.gss_setup_cpu_ns = 500000;
         s.context_lock_wakes_one = !s.context_lock_wakes_one;
       }},
      {"duration", [](Scenario& s) { s.duration_ns = 20000000; }},
      {"victim", [](Scenario& s) { s.preempt_victim = PreemptVictim::kWaker; }},
      {"onequeue", [](Scenario& s) { s.per_core_queues = false; }},
      {"nobatch", [](Scenario& s) { s.batching = false; }},
      {"readall", [](Scenario& s) { s.read_bytes = 0; }},
      {"cores1", [](Scenario& s) { s.cores = 1; }},
      {"cores3",
       [](Scenario& s) {
         s.cores = 3;
         s.nconnect = 6;
       }},
      {"skewsender",
       [](Scenario& s) {
         s.skew_ns = 1000000;
         s.skew_sender_ns = 3000;
       }},
      {"nopause",
       [](Scenario& s) {
         s.pause_per_s = 0;
         s.pause_ns.clear();
       }},
      {"slice",
       [](Scenario& s) {
         s.slice_ns = 100000;
         s.wakeup_preempt_ns = 0;
       }},
      {"migrate0",
       [](Scenario& s) {
         s.migrate_ns = 0;
         s.woken_first_share = 0.3;
       }},
      {"bigio",
       [](Scenario& s) {
         s.io_size = 1 << 20;
         s.slots = 32;
       }},
      {"thrash",
       [](Scenario& s) {
         s.reaction = WindowPolicy::kDiscardContext;
         s.slots = 1024;
         s.window = 16;
         s.nconnect = 16;
         s.skew_ns = 5000000;
       }},
  };
  std::vector<std::pair<std::string, Scenario>> bases;
  Scenario d;
  d.ops = 4000;
  bases.push_back({"default", d});
  Scenario t = EveryMechanismScenario();
  t.ops = 4000;
  bases.push_back({"every", t});
  Scenario tm;
  tm.thread_model = true;
  tm.ops = 4000;
  bases.push_back({"threads", tm});
  for (const auto& [bn, b] : bases) {
    for (const auto& [kn, k] : knobs) {
      for (uint64_t seed : {1, 2, 7}) {
        Scenario s = b;
        k(s);
        s.seed = seed;
        One(bn + "/" + kn + "/" + std::to_string(seed), s);
      }
    }
  }
  // Full-size defaults, as sim_bench and `secmode run` time them.
  One("default-full", Scenario());
  One("every-full", EveryMechanismScenario());
  // Sweeps.
  for (const auto& [gn, g] : std::vector<std::pair<std::string, SweepGrid>>{
           {"quick", SweepGrid::Quick()}, {"default", SweepGrid::Default()}}) {
    if (gn == "default" && !big) continue;
    auto rows = RunSweep(g.Expand(), 2);
    for (size_t i = 0; i < rows.size(); ++i) {
      std::cout << "SWEEP " << gn << " " << i << " " << rows[i].ToJson().dump() << "\n";
      ++n;
    }
  }
  // Recommendations.
  {
    Scenario s;
    s.nconnect = 8;
    s.window = 32;
    s.skew_ns = 500000;
    s.ops = 1000;
    auto rec = Recommend(s, 256, 1);
    std::cout << "REC1 " << (rec.ok() ? json(rec->ToText(s)).dump() : rec.status().ToString())
              << "\n";
    Scenario e = EveryMechanismScenario();
    e.ops = 1000;
    e.window = 32;
    auto rec2 = Recommend(e, 128, 2);
    std::cout << "REC2 " << (rec2.ok() ? json(rec2->ToText(e)).dump() : rec2.status().ToString())
              << "\n";
    std::cout << "ASSUME " << json(AssumptionsText(e)).dump() << "\n";
  }
  // Validation messages and JSON loading.
  std::vector<std::pair<std::string, std::function<void(Scenario&)>>> bad = {
      {"nconnect", [](Scenario& s) { s.nconnect = 0; }},
      {"slots", [](Scenario& s) { s.slots = 2000000; }},
      {"buffers",
       [](Scenario& s) {
         s.slots = 8192;
         s.io_size = 1 << 20;
       }},
      {"window", [](Scenario& s) { s.window = 0; }},
      {"io", [](Scenario& s) { s.io_size = -1; }},
      {"cap", [](Scenario& s) { s.spread_cap = -1; }},
      {"costf", [](Scenario& s) { s.cost_fixed_ns = -1; }},
      {"costb", [](Scenario& s) { s.cost_ns_per_byte = 1e9; }},
      {"rto", [](Scenario& s) { s.retransmit_timeout_ns = 0; }},
      {"bw", [](Scenario& s) { s.bandwidth_bytes_per_s = 1; }},
      {"rtt", [](Scenario& s) { s.rtt_ns = -5; }},
      {"jit", [](Scenario& s) { s.jitter_ns = -2; }},
      {"jsig", [](Scenario& s) { s.jitter_sigma = 5; }},
      {"skewconn", [](Scenario& s) { s.skew_conn = 4; }},
      {"skew", [](Scenario& s) { s.skew_ns = -1; }},
      {"sthreads", [](Scenario& s) { s.server_threads = 0; }},
      {"service", [](Scenario& s) { s.service_ns = -3; }},
      {"ssig", [](Scenario& s) { s.service_sigma = -1; }},
      {"gss", [](Scenario& s) { s.gss_setup_ns = -1; }},
      {"gsscpu", [](Scenario& s) { s.gss_setup_cpu_ns = s.gss_setup_ns + 1; }},
      {"rec", [](Scenario& s) { s.reconnect_ns = -1; }},
      {"reccpu", [](Scenario& s) { s.reconnect_cpu_ns = 1; }},
      {"recs", [](Scenario& s) { s.reconnect_server_cpu_ns = -1; }},
      {"cores", [](Scenario& s) { s.cores = -1; }},
      {"slice", [](Scenario& s) { s.slice_ns = 10; }},
      {"ccall", [](Scenario& s) { s.client_call_ns = -1; }},
      {"cread", [](Scenario& s) { s.client_read_ns = -1; }},
      {"sread", [](Scenario& s) { s.server_read_ns = -1; }},
      {"rbytes", [](Scenario& s) { s.read_bytes = -1; }},
      {"migr", [](Scenario& s) { s.migrate_ns = -1; }},
      {"wpre", [](Scenario& s) { s.wakeup_preempt_ns = -1; }},
      {"iwake", [](Scenario& s) { s.idle_wake_ns = -1; }},
      {"ssend", [](Scenario& s) { s.skew_sender_ns = -1; }},
      {"pps", [](Scenario& s) { s.pause_per_s = -1; }},
      {"pns",
       [](Scenario& s) {
         s.pause_ns = {1, 2};
       }},
      {"pnsdec", [](Scenario& s) { s.pause_ns = {5, 4, 4, 4, 4, 4, 4, 4, 4, 4}; }},
      {"bwake", [](Scenario& s) { s.busy_wake_ns = {1}; }},
      {"wfs", [](Scenario& s) { s.woken_first_share = 2; }},
      {"iwa", [](Scenario& s) { s.idle_wake_after_ns = {1}; }},
      {"iwarise",
       [](Scenario& s) {
         s.idle_wake_after_ns = {2, 1};
         s.idle_wake_curve_ns = {1, 1};
       }},
      {"iwc",
       [](Scenario& s) {
         s.idle_wake_after_ns = {1};
         s.idle_wake_curve_ns = {-1};
       }},
      {"ppsonly", [](Scenario& s) { s.pause_per_s = 5; }},
      {"ops", [](Scenario& s) { s.ops = 0; }},
      {"dur", [](Scenario& s) { s.duration_ns = -1; }},
  };
  for (const auto& [bn, f] : bad) {
    Scenario s;
    f(s);
    std::cout << "BAD " << bn << " " << s.Validate().ToString() << "\n";
  }
  for (const std::string& text : std::vector<std::string>{
           "{}", "[]", "{\"nconnect\": 8, \"reaction\": \"drop\"}", "{\"reaction\": \"reset\"}",
           "{\"reaction\": 3}", "{\"nconnect\": \"x\"}", "{\"thread_model\": 1}",
           "{\"pause_ns\": 3}", "{\"pause_ns\": [1.5]}", "{\"op\": \"write\", \"seed\": 9}",
           "{\"jitter_dist\": \"gamma\"}",
           "{\"server_order\": \"round-robin\", \"preempt_victim\": \"waker\", \"skew_where\": "
           "\"network\"}",
           "{\"cost_fixed_ns\": 3, \"bandwidth_bytes_per_s\": 1e9, \"unknown\": 1}"}) {
    auto s = ScenarioFromJson(json::parse(text));
    std::cout << "LOAD " << text << " " << (s.ok() ? s->ToJson().dump() : s.status().ToString())
              << "\n";
  }
  for (const std::string& text : std::vector<std::string>{
           "{}", "[]",
           "{\"violations\": 3, \"steps\": {\"close -> eof\": {\"count\": 2, \"p50_ns\": 5}}}",
           "{\"truncated\": 1}",
           "{\"stages\": {\"encode\": {\"p50_ns\": 4}}, \"ops_per_s\": 1.5}"}) {
    auto r = ScenarioResultFromJson(json::parse(text));
    std::cout << "RLOAD " << text << " " << (r.ok() ? r->ToJson().dump() : r.status().ToString())
              << "\n";
  }
  std::cerr << n << " simulated scenarios\n";
  return 0;
}
