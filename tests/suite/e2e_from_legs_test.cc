// PredictE2eFromLegs: a sys run's CPU per call (the sys row's median run,
// or the sys run just before each run) plus the mode's legs minus sys's,
// each leg at the payload of the message it protects; synthetic rows with
// known answers.
#include "suite/e2e_from_legs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/workload_inputs.h"

namespace secmode::suite {
namespace {

harness::MicroRow Leg(const std::string& mode, const std::string& engine, const std::string& leg,
                      size_t size, double ns, int threads = 1) {
  harness::MicroRow r;
  r.mode = mode;
  r.engine = engine;
  r.enctype = mode == "sys" ? "" : "aes256-cts-hmac-sha1-96";
  r.leg = leg;
  r.size = size;
  r.threads = threads;
  r.m.ns_per_op = ns;
  return r;
}

std::vector<harness::MicroRow> Legs() {
  std::vector<harness::MicroRow> rows;
  for (const char* leg : {"client-seal", "server-open", "server-seal", "client-open"}) {
    for (size_t size : {size_t{128}, size_t{4096}}) {
      rows.push_back(Leg("sys", "none", leg, size, 100));
      // krb5p costs 1 us more per leg at 128 B and 5 us more at 4 KiB.
      rows.push_back(Leg("krb5p", "native", leg, size, size == 128 ? 1100 : 5100));
    }
    // A scaling row (two threads) must not be taken for a one-thread leg.
    rows.push_back(Leg("krb5p", "native", leg, 128, 1e9, 2));
  }
  return rows;
}

nlohmann::json Row(const std::string& mode, const std::string& op, uint32_t size, double ops,
                   double idle, int connections = 4, int slots = 64,
                   const std::string& server = "secmode") {
  return {{"mode", mode},
          {"engine", mode == "sys" ? "none" : "native"},
          {"enctype", mode == "sys" ? "" : "aes256-cts-hmac-sha1-96"},
          {"op", op},
          {"size", size},
          {"connections", connections},
          {"slots", slots},
          {"server", server},
          {"seconds", 2.0},
          {"ops", ops * 2},
          {"ops_per_second", ops},
          {"idle_fraction", idle},
          {"steal_fraction", 0.0}};
}

TEST(E2eFromLegsTest, AddsEachLegsExtraCostAtTheSizeOfItsMessage) {
  nlohmann::json e2e = nlohmann::json::array();
  // sys GETATTR: 2 CPUs fully busy, 100 k calls/s -> 20 us per call.
  e2e.push_back(Row("sys", "getattr", 0, 100000, 0.0));
  // krb5p GETATTR: legs add 4 x 1 us -> 24 us predicted, 83 333 calls/s;
  // measured 50 k calls/s at 0% idle -> 40 us per call, 0.6 of predicted.
  e2e.push_back(Row("krb5p", "getattr", 0, 50000, 0.0));
  // sys READ 4 KiB: 40 k calls/s with 20% idle -> 40 us per call.
  e2e.push_back(Row("sys", "read", 4096, 40000, 0.2));
  // krb5p READ: call legs at 128 B (+2 us), reply legs at 4 KiB (+10 us) ->
  // 52 us; measured 30 k calls/s at 20% idle -> 53.3 us, within 15%.
  e2e.push_back(Row("krb5p", "read", 4096, 30000, 0.2));
  const LegsPrediction p = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(p.rows.size(), 2u) << p.rows.dump(1);
  EXPECT_TRUE(p.skipped.empty()) << p.skipped.dump(1);

  const nlohmann::json& getattr = p.rows[0];
  EXPECT_EQ(getattr["op"], "getattr");
  EXPECT_EQ(getattr["call_payload"], 0u);
  EXPECT_EQ(getattr["reply_payload"], 0u);
  EXPECT_DOUBLE_EQ(getattr["sys_cpu_ns_per_call"].get<double>(), 20000);
  EXPECT_DOUBLE_EQ(getattr["legs_extra_ns"].get<double>(), 4000);
  EXPECT_DOUBLE_EQ(getattr["measured_cpu_ns_per_call"].get<double>(), 40000);
  EXPECT_NEAR(getattr["predicted_ops_per_second"].get<double>(), 2e9 / 24000, 1e-6);
  EXPECT_NEAR(getattr["measured_over_predicted"].get<double>(), 0.6, 1e-9);
  EXPECT_FALSE(getattr["within"].get<bool>());

  const nlohmann::json& read = p.rows[1];
  EXPECT_EQ(read["call_payload"], 0u);
  EXPECT_EQ(read["reply_payload"], 4096u);
  EXPECT_DOUBLE_EQ(read["legs_extra_ns"].get<double>(), 12000);
  EXPECT_NEAR(read["predicted_cpu_ns_per_call"].get<double>(), 52000, 1e-6);
  EXPECT_NEAR(read["measured_over_predicted"].get<double>(), 52000.0 / (1.6e9 / 30000), 1e-9);
  EXPECT_TRUE(read["within"].get<bool>());
}

TEST(E2eFromLegsTest, WriteProtectsItsDataOnTheCallLegs) {
  nlohmann::json e2e = nlohmann::json::array();
  e2e.push_back(Row("sys", "write", 4096, 50000, 0.0));
  e2e.push_back(Row("krb5p", "write", 4096, 25000, 0.0));
  const LegsPrediction p = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(p.rows.size(), 1u);
  EXPECT_EQ(p.rows[0]["call_payload"], 4096u);
  EXPECT_EQ(p.rows[0]["reply_payload"], 0u);
  EXPECT_DOUBLE_EQ(p.rows[0]["legs_extra_ns"].get<double>(), 12000);
}

TEST(E2eFromLegsTest, ChecksTheCallPathOnTheRunWhoseWindowDroppedNothing) {
  nlohmann::json e2e = nlohmann::json::array();
  e2e.push_back(Row("sys", "getattr", 0, 100000, 0.0));
  // Window 128: 40 drops, 40 timeouts, 50 k calls/s (0.6 of the predicted
  // 83 333). The same load with a window of 65536: 80 k calls/s at 0% idle
  // -> 25 us per call, 0.96 of predicted: the call path holds, the window
  // costs the rest.
  nlohmann::json krb5p = Row("krb5p", "getattr", 0, 50000, 0.0);
  krb5p["window"] = 128;
  krb5p["server_window_drops"] = 40;
  krb5p["timeouts"] = 40;
  krb5p["wide_window"] = Row("krb5p", "getattr", 0, 80000, 0.0);
  krb5p["wide_window"]["window"] = 65536;
  krb5p["wide_window"]["server_window_drops"] = 0;
  e2e.push_back(krb5p);
  // A row that dropped nothing has no second run; its own run is checked.
  e2e.push_back(Row("sys", "read", 4096, 40000, 0.2));
  e2e.push_back(Row("krb5p", "read", 4096, 20000, 0.2));
  const LegsPrediction p = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(p.rows.size(), 2u) << p.rows.dump(1);
  const nlohmann::json& g = p.rows[0];
  EXPECT_FALSE(g["within"].get<bool>());
  EXPECT_EQ(g["server_window_drops"], 40u);
  EXPECT_EQ(g["timeouts"], 40u);
  ASSERT_TRUE(g.contains("wide_window")) << g.dump(1);
  EXPECT_EQ(g["wide_window"]["window"], 65536u);
  EXPECT_DOUBLE_EQ(g["wide_window"]["measured_cpu_ns_per_call"].get<double>(), 25000);
  EXPECT_NEAR(g["wide_window"]["measured_over_predicted"].get<double>(), 24000.0 / 25000, 1e-9);
  EXPECT_TRUE(g["wide_window"]["within"].get<bool>());
  EXPECT_TRUE(g["call_path_within"].get<bool>());
  // READ: 40 us per call measured in sys, 52 predicted, 80 measured: 0.65.
  const nlohmann::json& r = p.rows[1];
  EXPECT_FALSE(r.contains("wide_window"));
  EXPECT_FALSE(r["within"].get<bool>());
  EXPECT_FALSE(r["call_path_within"].get<bool>());
}

TEST(E2eFromLegsTest, PredictsTheRunWithAContextPerConnectionOnItsOwnBusyTime) {
  nlohmann::json e2e = nlohmann::json::array();
  e2e.push_back(Row("sys", "getattr", 0, 100000, 0.0));
  // One shared context: 50 k calls/s, 0.6 of the predicted 83 333. With a
  // context per connection: 72 k calls/s at 10% idle -> 25 us per call, 0.96
  // of the 75 000 its busy time predicts at 24 us; the shared context's
  // verdict stays its own.
  nlohmann::json krb5p = Row("krb5p", "getattr", 0, 50000, 0.0);
  krb5p["crypto_threads"] = "serialised";
  krb5p["context_per_connection"] = Row("krb5p", "getattr", 0, 72000, 0.1);
  krb5p["context_per_connection"]["window"] = 65536;
  krb5p["context_per_connection"]["server_window_drops"] = 0;
  e2e.push_back(krb5p);
  const LegsPrediction p = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(p.rows.size(), 1u) << p.rows.dump(1);
  const nlohmann::json& g = p.rows[0];
  EXPECT_FALSE(g["within"].get<bool>());
  EXPECT_FALSE(g["call_path_within"].get<bool>());
  EXPECT_FALSE(g.contains("wide_window"));
  EXPECT_EQ(g["crypto_threads"], "serialised");
  ASSERT_TRUE(g.contains("context_per_connection")) << g.dump(1);
  const nlohmann::json& c = g["context_per_connection"];
  EXPECT_EQ(c["window"], 65536u);
  EXPECT_DOUBLE_EQ(c["measured_cpu_ns_per_call"].get<double>(), 25000);
  EXPECT_NEAR(c["predicted_ops_per_second"].get<double>(), 75000, 1e-6);
  EXPECT_NEAR(c["measured_over_predicted"].get<double>(), 0.96, 1e-9);
  EXPECT_TRUE(c["within"].get<bool>());
}

TEST(E2eFromLegsTest, TheSysBaselineIsTheMedianOfTheSysRunsOfTheLoad) {
  nlohmann::json e2e = nlohmann::json::array();
  // The sys row at 20 us per call, run again at 40 and at 25 us: the
  // baseline is 25 us, the range 20-40.
  nlohmann::json sys = Row("sys", "getattr", 0, 100000, 0.0);
  sys["repeats"] = nlohmann::json::array(
      {Row("sys", "getattr", 0, 50000, 0.0), Row("sys", "getattr", 0, 80000, 0.0)});
  e2e.push_back(sys);
  e2e.push_back(Row("krb5p", "getattr", 0, 50000, 0.0));
  const LegsPrediction p = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(p.rows.size(), 1u) << p.rows.dump(1);
  const nlohmann::json& g = p.rows[0];
  EXPECT_EQ(g["sys_runs"], 3u);
  EXPECT_DOUBLE_EQ(g["sys_cpu_ns_per_call"].get<double>(), 25000);
  EXPECT_DOUBLE_EQ(g["sys_cpu_ns_per_call_range"][0].get<double>(), 20000);
  EXPECT_DOUBLE_EQ(g["sys_cpu_ns_per_call_range"][1].get<double>(), 40000);
  EXPECT_DOUBLE_EQ(g["predicted_cpu_ns_per_call"].get<double>(), 29000);
  EXPECT_NEAR(g["measured_over_predicted"].get<double>(), 29000.0 / 40000, 1e-9);
  // Two runs (20 and 25 us): the median run is the lower middle, a run's own figure.
  e2e[0]["repeats"].erase(0);
  const LegsPrediction two = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(two.rows.size(), 1u);
  EXPECT_EQ(two.rows[0]["sys_runs"], 2u);
  EXPECT_DOUBLE_EQ(two.rows[0]["sys_cpu_ns_per_call"].get<double>(), 20000);
}

// A mode row that ran in rounds is predicted on its own figure (the
// section made it its median run's) and shows how many runs and their range;
// so does a control that ran in rounds.
TEST(E2eFromLegsTest, AModeRowInRoundsShowsItsRunsAndTheirRange) {
  nlohmann::json e2e = nlohmann::json::array();
  e2e.push_back(Row("sys", "getattr", 0, 100000, 0.0));                 // 20 us
  nlohmann::json krb5p = Row("krb5p", "getattr", 0, 50000, 0.0);        // 40 us
  krb5p["repeats"] = nlohmann::json::array({Row("krb5p", "getattr", 0, 40000, 0.0),    // 50 us
                                            Row("krb5p", "getattr", 0, 80000, 0.0)});  // 25 us
  krb5p["wide_window"] = Row("krb5p", "getattr", 0, 62500, 0.0);        // 32 us
  krb5p["wide_window"]["window"] = 65536;
  krb5p["wide_window"]["repeats"] = nlohmann::json::array({Row("krb5p", "getattr", 0, 50000, 0.0)});
  e2e.push_back(krb5p);
  const LegsPrediction p = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(p.rows.size(), 1u) << p.rows.dump(1);
  const nlohmann::json& g = p.rows[0];
  EXPECT_EQ(g["runs"], 3u);
  EXPECT_DOUBLE_EQ(g["measured_cpu_ns_per_call"].get<double>(), 40000);
  EXPECT_DOUBLE_EQ(g["measured_cpu_ns_per_call_range"][0].get<double>(), 25000);
  EXPECT_DOUBLE_EQ(g["measured_cpu_ns_per_call_range"][1].get<double>(), 50000);
  EXPECT_NEAR(g["measured_over_predicted"].get<double>(), 24000.0 / 40000, 1e-9);
  const nlohmann::json& w = g["wide_window"];
  EXPECT_EQ(w["runs"], 2u);
  EXPECT_DOUBLE_EQ(w["measured_cpu_ns_per_call"].get<double>(), 32000);
  EXPECT_DOUBLE_EQ(w["measured_cpu_ns_per_call_range"][0].get<double>(), 32000);
  EXPECT_DOUBLE_EQ(w["measured_cpu_ns_per_call_range"][1].get<double>(), 40000);
  EXPECT_NEAR(w["measured_over_predicted"].get<double>(), 24000.0 / 32000, 1e-9);
}

// Rows as the section leaves them (their median run put first) of two
// rounds each: the baseline and the measured figure are both a real run's,
// by the same rule, the cheaper of two.
TEST(E2eFromLegsTest, TwoRoundsPutFirstArePredictedOnTheSameRule) {
  nlohmann::json e2e = nlohmann::json::array();
  nlohmann::json sys = Row("sys", "getattr", 0, 80000, 0.0);  // 25 us
  sys["repeats"] = nlohmann::json::array({Row("sys", "getattr", 0, 100000, 0.0)});  // 20 us
  nlohmann::json krb5p = Row("krb5p", "getattr", 0, 40000, 0.0);  // 50 us
  krb5p["repeats"] = nlohmann::json::array({Row("krb5p", "getattr", 0, 50000, 0.0)});  // 40 us
  e2e.push_back(sys);
  e2e.push_back(krb5p);
  for (auto& row : e2e) harness::PutMedianRunFirst(row, 2);
  const LegsPrediction p = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(p.rows.size(), 1u) << p.rows.dump(1);
  const nlohmann::json& g = p.rows[0];
  EXPECT_DOUBLE_EQ(g["sys_cpu_ns_per_call"].get<double>(), 20000);
  EXPECT_DOUBLE_EQ(g["measured_cpu_ns_per_call"].get<double>(), 40000);
  EXPECT_NEAR(g["measured_over_predicted"].get<double>(), 24000.0 / 40000, 1e-9);
  EXPECT_EQ(g["runs"], 2u);
  EXPECT_DOUBLE_EQ(g["measured_cpu_ns_per_call_range"][1].get<double>(), 50000);
}

// A run with `round` at `us` per call (2 CPUs fully busy over 2 s).
nlohmann::json RunAt(const std::string& mode, double us, int round) {
  nlohmann::json run = Row(mode, "getattr", 0, 2e6 / us, 0.0);
  run["round"] = round;
  return run;
}

// Where each run of a mode had a sys run just before it, each run is
// predicted from that sys run: the machine's costly stretches (here rounds 1
// and 2, every call 50% dearer) cancel, while the sys row's median (costly
// in most of its runs) would not. The controls pair by round too.
TEST(E2eFromLegsTest, EachRunIsPredictedFromTheSysRunJustBeforeIt) {
  nlohmann::json e2e = nlohmann::json::array();
  // The sys row: costly in 2 of 3 runs (its median 30 us).
  nlohmann::json sys = RunAt("sys", 20, 0);
  sys["repeats"] = nlohmann::json::array({RunAt("sys", 30, 1), RunAt("sys", 30, 2)});
  e2e.push_back(sys);
  // krb5p: legs add 4 us; 24 us in the cheap round, 36 in the costly ones.
  nlohmann::json krb5p = RunAt("krb5p", 24, 0);
  krb5p["repeats"] = nlohmann::json::array({RunAt("krb5p", 36, 1), RunAt("krb5p", 37, 2)});
  // Each run's own timeouts and drops, to see whose the row shows.
  for (int i = 0; i < 2; ++i) {
    krb5p["repeats"][i]["timeouts"] = 10 + i;
    krb5p["repeats"][i]["server_window_drops"] = 20 + i;
  }
  // Its sys runs just before: 20, 30 and 31 us (round 1's listed last), and
  // one whose round is not a number (not paired, not an error).
  nlohmann::json odd = RunAt("sys", 1, 0);
  odd["round"] = "0";
  krb5p["sys_just_before"] = nlohmann::json::array(
      {RunAt("sys", 20, 0), RunAt("sys", 31, 2), RunAt("sys", 30, 1), odd});
  // The wide window: rounds 0 and 2 only (its round 1 failed).
  krb5p["wide_window"] = RunAt("krb5p", 22, 0);
  krb5p["wide_window"]["window"] = 65536;
  krb5p["wide_window"]["repeats"] = nlohmann::json::array({RunAt("krb5p", 35, 2)});
  e2e.push_back(krb5p);
  const LegsPrediction p = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(p.rows.size(), 1u) << p.rows.dump(1);
  const nlohmann::json& g = p.rows[0];
  EXPECT_EQ(g["sys_baseline"], "the sys run just before each run");
  EXPECT_EQ(g["pairs"], 3u);
  // Ratios: 24/24 = 1, 34/36, 35/37 -> the median pair is round 2's (0.946).
  EXPECT_NEAR(g["measured_over_predicted"].get<double>(), 35.0 / 37, 1e-9);
  EXPECT_NEAR(g["measured_over_predicted_range"][0].get<double>(), 34.0 / 36, 1e-9);
  EXPECT_NEAR(g["measured_over_predicted_range"][1].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(g["sys_cpu_ns_per_call"].get<double>(), 31000, 1e-6);
  EXPECT_NEAR(g["sys_cpu_ns_per_call_range"][0].get<double>(), 20000, 1e-6);
  EXPECT_NEAR(g["sys_cpu_ns_per_call_range"][1].get<double>(), 31000, 1e-6);
  EXPECT_NEAR(g["predicted_cpu_ns_per_call"].get<double>(), 35000, 1e-6);
  EXPECT_NEAR(g["measured_cpu_ns_per_call"].get<double>(), 37000, 1e-6);
  EXPECT_NEAR(g["measured_ops_per_second"].get<double>(), 2e6 / 37, 1e-6);
  EXPECT_NEAR(g["predicted_ops_per_second"].get<double>(), 2e6 / 35, 1e-6);
  EXPECT_TRUE(g["within"].get<bool>());
  EXPECT_EQ(g["runs"], 3u);
  // Its window drops and timeouts are the median pair's run's (round 2).
  EXPECT_EQ(g["round"], 2);
  EXPECT_EQ(g["timeouts"], 11u);
  EXPECT_EQ(g["server_window_drops"], 21u);
  // The wide window: 24/22 and 35/35 -> the lower middle, 1.0 (round 2).
  const nlohmann::json& w = g["wide_window"];
  EXPECT_EQ(w["pairs"], 2u);
  EXPECT_EQ(w["runs"], 2u);
  EXPECT_NEAR(w["measured_over_predicted"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(w["sys_cpu_ns_per_call"].get<double>(), 31000, 1e-6);
  EXPECT_TRUE(g["call_path_within"].get<bool>());

  // A control none of whose runs has a sys run of its round is set against
  // the row's median pair's prediction (35 us), and says so.
  e2e[1]["context_per_connection"] = RunAt("krb5p", 28, 7);
  const LegsPrediction other_round = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(other_round.rows.size(), 1u);
  const nlohmann::json& c = other_round.rows[0]["context_per_connection"];
  EXPECT_EQ(c["sys_baseline"], "the row's median pair's prediction");
  EXPECT_FALSE(c.contains("pairs"));
  EXPECT_NEAR(c["measured_over_predicted"].get<double>(), 35.0 / 28, 1e-9);
  e2e[1].erase("context_per_connection");

  // Unpaired, the same runs miss: the sys row's median (30 us) + 4 against
  // the row's own run (24 us) is 1.42.
  e2e[1].erase("sys_just_before");
  const LegsPrediction unpaired = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(unpaired.rows.size(), 1u);
  EXPECT_EQ(unpaired.rows[0]["sys_baseline"], "the sys row's median run");
  EXPECT_NEAR(unpaired.rows[0]["measured_over_predicted"].get<double>(), 34.0 / 24, 1e-9);
  EXPECT_FALSE(unpaired.rows[0]["within"].get<bool>());
}

// A row whose sys runs just before all failed (an empty list) is predicted
// from the sys row, as before there were any.
TEST(E2eFromLegsTest, NoSysRunJustBeforeFallsBackToTheSysRow) {
  nlohmann::json e2e = nlohmann::json::array();
  e2e.push_back(RunAt("sys", 20, 0));
  nlohmann::json krb5p = RunAt("krb5p", 24, 0);
  krb5p["sys_just_before"] = nlohmann::json::array();
  e2e.push_back(krb5p);
  const LegsPrediction p = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(p.rows.size(), 1u) << p.rows.dump(1);
  EXPECT_EQ(p.rows[0]["sys_baseline"], "the sys row's median run");
  EXPECT_FALSE(p.rows[0].contains("pairs"));
  EXPECT_NEAR(p.rows[0]["measured_over_predicted"].get<double>(), 1.0, 1e-9);
  // A run whose round has no sys run is not paired: only round 0's is.
  e2e[1]["repeats"] = nlohmann::json::array({RunAt("krb5p", 36, 1)});
  e2e[1]["sys_just_before"] = nlohmann::json::array({RunAt("sys", 20, 0)});
  const LegsPrediction one = PredictE2eFromLegs(Legs(), e2e, 2);
  ASSERT_EQ(one.rows.size(), 1u);
  EXPECT_EQ(one.rows[0]["pairs"], 1u);
  EXPECT_EQ(one.rows[0]["runs"], 2u);
  EXPECT_NEAR(one.rows[0]["measured_over_predicted"].get<double>(), 1.0, 1e-9);
}

TEST(E2eFromLegsTest, LeavesOutWhatItCannotPredictAndSaysWhy) {
  nlohmann::json e2e = nlohmann::json::array();
  e2e.push_back(Row("sys", "getattr", 0, 100000, 0.0));
  // Another server's row and a row one call at a time: not predicted, silently.
  e2e.push_back(Row("krb5p", "getattr", 0, 10000, 0.0, 4, 64, "nfs-ganesha 4.3"));
  e2e.push_back(Row("krb5p", "read", 4096, 10000, 0.5, 1, 1));
  // No sys row for this load; no idle measurement; no legs of the mode.
  e2e.push_back(Row("krb5p", "getattr", 0, 10000, 0.0, 2, 8));
  e2e.push_back(Row("krb5p", "getattr", 0, 10000, -1.0));
  e2e.push_back(Row("krb5i", "getattr", 0, 10000, 0.0));
  const LegsPrediction p = PredictE2eFromLegs(Legs(), e2e, 2);
  EXPECT_TRUE(p.rows.empty()) << p.rows.dump(1);
  ASSERT_EQ(p.skipped.size(), 3u) << p.skipped.dump(1);
  EXPECT_NE(p.skipped[0]["reason"].get<std::string>().find("no sys row"), std::string::npos);
  EXPECT_NE(p.skipped[1]["reason"].get<std::string>().find("idle"), std::string::npos);
  EXPECT_NE(p.skipped[2]["reason"].get<std::string>().find("no micro rows of krb5i"),
            std::string::npos)
      << p.skipped[2].dump();
}

}  // namespace
}  // namespace secmode::suite
