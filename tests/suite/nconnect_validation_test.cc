// The nconnect simulator against real sockets: runs the validation grid
// (suite/nconnect_validation.h) on the real krb5p RPCSEC_GSS client and
// server over loopback and asserts the simulator agrees on the grid points
// marked `asserted`, under sim::CompareToRuns' rule:
//  - where the model says zero violations, the median real run must count
//    zero: most runs' violations refute the model, one run's does not;
//  - elsewhere the simulated count lies in the measured range, widened by
//    the rule's factor or a few events;
//  - goodput agrees within the rule's factor of the runs' median: the
//    model's CPU per call is measured by a run that cannot violate the
//    window, not fitted to these rows.
// Which points are asserted, and why the others are reported only, is in
// the grid's notes (DefaultValidationGrid). The skewed shared-context row
// must also show many violations on both sides, so the comparison there is
// not zero against zero, and the collapse point must collapse in both.
#include "suite/nconnect_validation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "common/format.h"
#include "common/machine.h"
#include "common/stats.h"
#include "harness/local_rpc.h"
#include "harness/modes.h"
#include "harness/results.h"
#include "harness/sched_probe.h"
#include "rpc/record.h"
#include "sim/simulator.h"
#include "suite/nconnect_validation_loopback.h"

namespace secmode::suite {
namespace {

// A point of the default grid by its name (the grid's order may change).
ValidationPoint PointNamed(const std::string& name) {
  for (const auto& p : DefaultValidationGrid(100))
    if (p.name == name) return p;
  ADD_FAILURE() << "no point " << name;
  return {};
}

TEST(NconnectValidateTest, GridPointsAreValidScenarios) {
  auto grid = DefaultValidationGrid(2000);
  ASSERT_GE(grid.size(), 4u);
  bool zero = false, many = false;
  for (const auto& p : grid) {
    EXPECT_TRUE(p.scenario.Validate().ok()) << p.name;
    EXPECT_EQ(p.scenario.ops, 2000) << p.name;
    if (p.asserted && p.scenario.skew_ns == 0) zero = true;
    if (p.asserted && p.scenario.skew_ns > 0 && !p.scenario.per_connection_context) many = true;
  }
  EXPECT_TRUE(zero && many) << "the asserted grid must cover both sides of the rule";
}

TEST(NconnectValidateTest, DiagnosisNamesTheMissAndTheEvidence) {
  ValidationOutcome o;
  o.row.simulated.violations = 10;
  o.row.simulated.violation_stage[3] = 7;  // check
  o.row.simulated.violation_stage[1] = 3;  // hold
  o.row.simulated.disconnects = 10;
  o.row.simulated.p99_ns = 2000000;
  o.row.measured.disconnects = 40;
  o.row.measured.p99_ns = 9000000;
  o.comparison.violations_agree = false;
  o.comparison.goodput_agree = true;
  o.comparison.seeds = 1;
  o.comparison.simulated_violations = 10;
  o.comparison.measured_violations_min = 40;
  o.comparison.measured_violations_max = 55;
  o.attribution.violations = 50;
  o.attribution.causes.push_back({"hold", "client receiver", 30, 1300, 4000, 40});
  std::string d = Diagnose(o);
  EXPECT_NE(d.find("model under-counts violations (10 vs 40..55)"), std::string::npos) << d;
  EXPECT_NE(d.find("hold, client receiver (30 of 50 traced, median excess 1300 us)"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("the model's at check (7 of 10)"), std::string::npos) << d;
  EXPECT_EQ(d.find("goodput"), std::string::npos) << d;
  // Goodput too: the ratio, disconnects and p99 of both.
  o.comparison.goodput_agree = false;
  o.comparison.goodput_ratio = 0.5;
  d = Diagnose(o);
  EXPECT_NE(d.find("goodput measured/sim 0.50 (disconnects sim 10 vs real 40, p99 2.0 vs 9.0 ms)"),
            std::string::npos)
      << d;
  // More than measured: over-counts; zero against 0..2: says so.
  o.comparison.simulated_violations = 500;
  EXPECT_NE(Diagnose(o).find("model over-counts"), std::string::npos);
  o.comparison.simulated_violations = 0;
  o.comparison.measured_violations_min = 0;
  o.comparison.measured_violations_max = 2;
  EXPECT_NE(Diagnose(o).find("model says zero, real runs lost calls (0 vs 0..2)"),
            std::string::npos)
      << Diagnose(o);
  // With several seeds: their mean, said to be one, and the first seed's stages.
  o.comparison.seeds = 5;
  o.comparison.simulated_violations = 0.4;
  o.comparison.measured_violations_min = 3;
  o.comparison.measured_violations_max = 9;
  o.row.simulated.violations = 2;
  o.row.simulated.violation_stage[1] = 2;
  o.row.simulated.violation_stage[3] = 0;
  EXPECT_NE(Diagnose(o).find("model under-counts violations (0.4 in 5 seeds' mean vs 3..9)"),
            std::string::npos)
      << Diagnose(o);
  EXPECT_NE(Diagnose(o).find("the first seed's at hold (2 of 2)"), std::string::npos)
      << Diagnose(o);
  o.comparison.seeds = 0;
  // No completed runs to compare: the comparison's own words.
  o.comparison.measured_violations_max = 0;
  o.comparison.goodput_ratio = 0;
  o.comparison.detail = "no completed operations in a measured run";
  EXPECT_EQ(Diagnose(o), o.comparison.detail);
  // Agreement: nothing to say.
  o.comparison.violations_agree = o.comparison.goodput_agree = true;
  EXPECT_EQ(Diagnose(o), "");
}

TEST(NconnectValidateTest, TheWideGridIsTheWholeProduct) {
  const auto grid = WideValidationGrid(500);
  EXPECT_EQ(grid.size(), 3u * 6 * 2 * 3 * 3 * 2);
  std::set<std::string> names, combos;
  for (const auto& p : grid) {
    EXPECT_TRUE(p.scenario.Validate().ok()) << p.name;
    EXPECT_FALSE(p.asserted) << p.name;
    EXPECT_EQ(p.scenario.ops, 500);
    names.insert(p.name);
    const sim::Scenario& s = p.scenario;
    combos.insert(std::to_string(s.nconnect) + "/" + std::to_string(s.slots) + "/" +
                  std::to_string(s.window) + "/" + std::to_string(s.skew_ns) + "/" +
                  rpc::WindowPolicyName(s.reaction) + "/" + (s.per_connection_context ? "p" : "s"));
  }
  EXPECT_EQ(names.size(), grid.size()) << "names must tell the points apart (--points)";
  EXPECT_EQ(combos.size(), grid.size());
  EXPECT_TRUE(names.count("shared-n4-s128-w32-skew0-drop-disconnect"));
  EXPECT_TRUE(names.count("perconn-n8-s256-w128-skew10ms-discard-context"));
}

TEST(NconnectValidateTest, CalibratedScenarioKeepsThePointAndTakesTheMeasurements) {
  Calibration c;
  c.cost_fixed_ns = 1234;
  c.cost_ns_per_byte = 0.5;
  c.rtt_ns = 40000;
  c.service_ns = 9000;
  ValidationOptions o;
  o.server_workers = 3;
  sim::Scenario p = PointNamed("shared-s16-skew10ms").scenario;
  sim::Scenario s = CalibratedScenario(p, c, o);
  EXPECT_EQ(s.slots, p.slots);
  EXPECT_EQ(s.window, p.window);
  EXPECT_EQ(s.skew_ns, p.skew_ns);
  EXPECT_EQ(s.cost_fixed_ns, 1234);
  EXPECT_EQ(s.cost_ns_per_byte, 0.5);
  EXPECT_EQ(s.rtt_ns, 40000);
  EXPECT_EQ(s.service_ns, 9000);
  EXPECT_EQ(s.server_threads, 3);
  EXPECT_TRUE(s.Validate().ok());
  // The thread model takes the pause probe's rate, or, once the point's
  // real runs said what the hypervisor took, the rate for that share.
  o.server_workers = 0;
  o.thread_model = true;
  c.cores = 2;
  c.slice_ns = 3000000;
  c.pauses.running_share = 0.95;
  c.pauses.steal_fraction = 0;
  c.pauses.gaps_per_s = 400;
  c.pauses.gap_quantiles_ns = {5000,  6000,  8000,   20000,  30000,
                               50000, 80000, 100000, 200000, 400000};
  c.pause_per_s = harness::PausePerS(c.pauses);
  c.pause_ns = c.pauses.gap_quantiles_ns;
  EXPECT_DOUBLE_EQ(CalibratedScenario(p, c, o).pause_per_s, 400);
  c.runs_steal_fraction = 0.2;
  s = CalibratedScenario(p, c, o);
  EXPECT_NEAR(s.pause_per_s, 400 * 5, 1e-9);
  EXPECT_EQ(s.pause_ns, c.pause_ns);
  EXPECT_TRUE(s.Validate().ok()) << s.Validate().ToString();
}

TEST(NconnectValidateTest, RejectsWhatTheRealClientCannotDo) {
  harness::ModeEnvironment env;  // never started: every check comes before the realm
  auto expect_error = [&](const ValidationPoint& p, const ValidationOptions& o,
                          const std::string& what) {
    auto r = RunValidationPoint(env, p, Calibration(), o);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_NE(r.status().ToString().find(what), std::string::npos) << r.status().ToString();
  };
  ValidationPoint p = PointNamed("shared-s16-skew10ms");
  ValidationOptions sys;
  sys.mode = "sys";
  expect_error(p, sys, "RPCSEC_GSS mode");
  p.scenario.skew_where = sim::SkewWhere::kNetwork;
  expect_error(p, ValidationOptions(), "skew_where client");
  p.scenario.skew_where = sim::SkewWhere::kClient;
  p.scenario.spread_cap = 8;
  expect_error(p, ValidationOptions(), "spread cap");
  p.scenario.spread_cap = 0;
  p.scenario.window = 0;
  expect_error(p, ValidationOptions(), "window");
  EXPECT_FALSE(env.has_realm());
}

TEST(NconnectValidateTest, SelectionFiltersNumbersAndShardsTheGrid) {
  const ValidationOptions options;
  auto all = SelectValidationPoints(false, "", "", options);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->points.size(), DefaultValidationGrid(options.ops).size());
  EXPECT_EQ(all->grid_points, all->points.size());
  EXPECT_TRUE(all->shard.Whole());
  // The filter's points are the grid a shard is a slice of, numbered anew.
  auto skewed = SelectValidationPoints(false, "skew10ms$", "1/2", options);
  ASSERT_TRUE(skewed.ok()) << skewed.status().ToString();
  ASSERT_EQ(skewed->grid_points, 5u);
  ASSERT_EQ(skewed->points.size(), 2u);
  EXPECT_EQ(skewed->points[0].grid_index, 1u);
  EXPECT_EQ(skewed->points[1].grid_index, 3u);
  for (const auto& p : skewed->points) EXPECT_NE(p.name.find("skew10ms"), std::string::npos);
  const nlohmann::json grid = skewed->GridJson(options);
  EXPECT_EQ(grid["name"], "default");
  EXPECT_EQ(grid["points"], 5);
  EXPECT_EQ(grid["filter"], "skew10ms$");
  EXPECT_EQ(grid["ops"], options.ops);
  EXPECT_EQ(grid["runs"], options.runs);
  auto wide = SelectValidationPoints(true, "", "0/648", options);
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  EXPECT_EQ(wide->points.size(), 1u);
  EXPECT_EQ(wide->GridJson(options)["name"], "wide");
  // Refused by name, before anything runs.
  auto error = [&](const std::string& filter, const std::string& shard) {
    auto r = SelectValidationPoints(false, filter, shard, options);
    return r.ok() ? std::string("ok") : r.status().ToString();
  };
  EXPECT_NE(error("(", "").find("--points: not a regular expression"), std::string::npos);
  EXPECT_NE(error("nomatch", "").find("--points: no point of the grid matches"), std::string::npos);
  EXPECT_NE(error("", "2/2").find("--shard 2/2"), std::string::npos);
  EXPECT_NE(error("^shared-s8-skew0$", "1/2").find("holds no point of the 1 chosen"),
            std::string::npos);
}

TEST(NconnectValidateTest, PutValidationWritesTheRowsAndTheSectionOfWhatRan) {
  harness::RunResults results;
  ValidationRun nothing;
  nothing.status = common::Status::Internal("calibration failed");
  PutValidation(nothing, results);
  EXPECT_TRUE(results.nconnect.empty());
  EXPECT_FALSE(results.sections.contains("nconnect-validation"));
  ValidationRun run;
  for (Verdict v : {Verdict::kAgrees, Verdict::kUndecided, Verdict::kAgrees}) {
    ValidationOutcome o;
    o.point = PointNamed("shared-s8-skew0");
    o.verdict.verdict = v;
    run.outcomes.push_back(o);
  }
  EXPECT_EQ(run.Verdicts().ToString(), "2 agree, 0 disagree, 1 undecided");
  PutValidation(run, results);
  ASSERT_EQ(results.nconnect.size(), 3u);
  EXPECT_EQ(results.nconnect[0]["kind"], "validation");
  EXPECT_EQ(results.nconnect[1]["verdict"], "undecided");
  ASSERT_TRUE(results.sections.contains("nconnect-validation"));
  EXPECT_EQ(results.sections["nconnect-validation"], run.SectionJson());
  EXPECT_EQ(results.sections["nconnect-validation"]["verdicts"]["undecided"], 1);
  EXPECT_FALSE(results.sections["nconnect-validation"].contains("grid"))
      << "a run's section has no grid: only a selection's (a shard's) has";
}

// The burst before a timed context creation is load, not a deadline: a
// server whose every reply takes longer than the burst is long (as a loaded
// machine's can) lengthens the burst instead of failing the calibration.
TEST(NconnectValidateTest, SetupBurstOutlastsAServerSlowerThanTheBurst) {
  harness::ModeEnvironment env;
  rpc::TcpServerOptions tcp;
  tcp.reply_delay_us = static_cast<uint32_t>(3 * Calibration::kGssSetupBurstSeconds * 1e6);
  auto server = harness::StartLocalRpcServer(env, false, rpc::ServerOptions(), tcp);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  rpc::LoadOptions lo;
  server->Aim(lo);
  lo.security = rpc::Security::kSys;
  auto burst = loopback::RunSetupBurst(lo);
  ASSERT_TRUE(burst.ok()) << burst.status().ToString();
  EXPECT_GE(burst->ops, static_cast<uint64_t>(Calibration::kGssSetupBurstSlots));
  EXPECT_GE(burst->seconds, 3 * Calibration::kGssSetupBurstSeconds);
}

// Likewise a calibration run (MeasurePerCall's): its length is how long it
// measures, and a server answering later than that lengthens it.
TEST(NconnectValidateTest, AShortRunOutlastsAServerSlowerThanTheRun) {
  harness::ModeEnvironment env;
  rpc::TcpServerOptions tcp;
  tcp.reply_delay_us = 60000;
  auto server = harness::StartLocalRpcServer(env, false, rpc::ServerOptions(), tcp);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  rpc::LoadOptions lo;
  server->Aim(lo);
  lo.security = rpc::Security::kSys;
  lo.connections = 1;
  lo.slots = 4;
  lo.seconds = 0.02;
  lo.warmup_seconds = 0.005;
  loopback::AtLeastCalls(lo, 8);
  auto r = rpc::RunLoad(lo);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GE(r->ops, 8u);
}

TEST(NconnectValidateTest, SimulatorAgreesWithRealSocketsOnTheAssertedGrid) {
  harness::ModeEnvironment env;
  ValidationOptions options;
  const double own_before = common::OwnCpuSeconds();
  const common::CpuTimes before = common::ReadCpuTimes();
  auto run = RunValidation(env, DefaultValidationGrid(options.ops), options, std::cerr);
  // The model is calibrated and compared on the premise that the machine's
  // CPUs are the run's (the validation remakes a run the hypervisor took
  // kCalmSteal of). A point whose runs other processes took as much of is
  // undecided (HoldShared): its agreement is not asserted; the rest is.
  const double others =
      common::OthersFraction(before, common::ReadCpuTimes(), common::OwnCpuSeconds() - own_before);
  std::cerr << "\nother processes took "
            << (others < 0 ? std::string("an unknown share") : common::Fmt("%.1f%%", others * 100))
            << " of the machine's CPU time\n";
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  for (const auto& o : run.outcomes)
    std::cerr << o.point.name << ": " << o.comparison.detail << "\n";
  // The machine's measurements, so that a failure here carries its evidence.
  std::cerr << "calibration: " << run.calibration.ToJson().dump() << "\n";
  ASSERT_EQ(run.outcomes.size(), DefaultValidationGrid(options.ops).size());
  std::vector<std::string> shared;  // points whose runs shared the machine
  for (const auto& o : run.outcomes) {
    EXPECT_GT(o.row.measured.completed, 0) << o.point.name;
    EXPECT_EQ(o.verdict.shared, o.verdict.others_fraction >= kCalmSteal) << o.point.name;
    if (o.verdict.shared) {
      EXPECT_EQ(o.verdict.verdict, Verdict::kUndecided) << o.point.name;
      shared.push_back(o.point.name);
    }
    if (!o.point.asserted) continue;
    if (!o.verdict.shared) {
      EXPECT_TRUE(o.comparison.violations_agree) << o.point.name << ": " << o.comparison.detail;
    }
    if (o.point.assert_goodput && !o.verdict.shared) {
      EXPECT_TRUE(o.comparison.goodput_agree) << o.point.name << ": " << o.comparison.detail;
    }
    if (o.point.scenario.skew_ns > 0 && !o.point.scenario.per_connection_context) {
      // Clearly many on both sides, so the comparison above is not 0 vs 0.
      EXPECT_GE(o.comparison.simulated_violations, 20) << o.point.name;  // the seeds' mean
      EXPECT_GE(o.row.measured.violations, 20) << o.point.name;
      // The trace finds the delay that was injected: most violations were
      // held in the skewed connection's delay line, for about the skew.
      const Attribution& a = o.attribution;
      ASSERT_FALSE(o.measured_runs.empty());
      EXPECT_EQ(a.violations, o.measured_runs.front().violations) << o.point.name;
      EXPECT_EQ(a.matched, a.violations) << o.point.name;
      ASSERT_FALSE(a.causes.empty()) << o.point.name;
      EXPECT_EQ(a.causes[0].stage, "hold") << o.point.name;
      EXPECT_EQ(a.causes[0].thread, "client sender") << o.point.name;
      EXPECT_GT(a.causes[0].count * 2, a.violations) << o.point.name;
      EXPECT_GT(a.causes[0].median_excess_us, 0.5 * o.point.scenario.skew_ns / 1e3) << o.point.name;
    }
  }
  // The collapse: many numbers in flight against a small window with one
  // shared context. Both the real run and the model lose many calls and
  // fall below half the goodput the same load has when no call can fall
  // out of the window (measured by the calibration run; simulated with a
  // wide window). The real side is the median of its runs, the model's the
  // median of the point's seeds, and its free run that of as many seeds.
  bool saw_collapse_point = false;
  for (const auto& o : run.outcomes) {
    if (o.point.name != "shared-n8-s256-skew0") continue;
    saw_collapse_point = true;
    std::vector<double> collapsed_ops, free_ops;
    for (const sim::ScenarioResult& r : o.simulated_seeds) collapsed_ops.push_back(r.ops_per_s);
    for (size_t i = 0; i < o.simulated_seeds.size(); ++i) {
      sim::Scenario s = o.row.scenario;
      s.window = 4096;
      s.seed += i;  // the seeds the point ran (RunValidationPoint)
      auto r = sim::Simulate(s);
      EXPECT_TRUE(r.ok());
      if (r.ok()) free_ops.push_back(r->ops_per_s);
    }
    const double collapsed = common::Median(collapsed_ops), free_run = common::Median(free_ops);
    std::cerr << "collapse: model " << collapsed << " of " << free_run << " ops/s ("
              << collapsed / free_run << "), real " << o.row.measured.ops_per_s << " of "
              << o.calibration.no_violation_ops_per_s << " ("
              << o.row.measured.ops_per_s / o.calibration.no_violation_ops_per_s << ")\n";
    EXPECT_GE(o.row.measured.violations, 50) << o.comparison.detail;
    EXPECT_GE(o.comparison.simulated_violations, 50) << o.comparison.detail;
    // Every reconnect of the traced run was recorded, and most were joined
    // through their first call to the server's new connection.
    ASSERT_FALSE(o.measured_runs.empty());
    EXPECT_EQ(o.reconnects.reconnects, o.measured_runs.front().disconnects);
    for (const auto& step : o.reconnects.steps) {
      if (step.name == "eof -> first checked") {
        EXPECT_GT(step.count * 2, o.reconnects.reconnects) << step.name;
      }
    }
    EXPECT_LT(o.row.measured.ops_per_s, 0.5 * o.calibration.no_violation_ops_per_s)
        << "real: " << o.row.measured.ops_per_s << " vs " << o.calibration.no_violation_ops_per_s;
    EXPECT_LT(collapsed, 0.5 * free_run) << "model: " << collapsed << " vs " << free_run
                                         << "; calibration: " << o.calibration.ToJson().dump();
  }
  EXPECT_TRUE(saw_collapse_point);
  // A call on a fresh connection waits for the server to accept it and
  // start its thread: a reconnect costs more than an established round
  // trip, and the model is fed that cost and the one-read batch bound.
  EXPECT_GT(run.calibration.reconnect_ns, 0);
  // A fresh connection costs CPU at both ends (connect, accept, a thread).
  EXPECT_GT(run.calibration.reconnect_cpu_ns, 0);
  EXPECT_GE(run.calibration.reconnect_client_cpu_ns, 0);
  EXPECT_LE(run.calibration.reconnect_client_cpu_ns, run.calibration.reconnect_cpu_ns);
  // Re-creating a context costs a GSS exchange beyond its round trip; the
  // idle-core wakeup is measured whenever there are two CPUs to pin to.
  EXPECT_GT(run.calibration.gss_setup_ns, 0);
  // Creating a context is GSS work at both ends: it costs CPU.
  EXPECT_GT(run.calibration.gss_setup_cpu_ns, 0);
  EXPECT_EQ(run.calibration.idle_wake_ns, harness::IdleWakeNs(run.calibration.idle_wake));
  EXPECT_TRUE(run.calibration.busy_wake.busy);
  // Both creation figures are measured, the one after load and the quiet one.
  EXPECT_GT(run.calibration.gss_setup_quiet_ns, 0);
  EXPECT_GT(run.calibration.gss_setup_quiet_cpu_ns, 0);
  // Core pauses come from the pause probe: its rate and quantiles, or none
  // when it saw no gap.
  EXPECT_EQ(run.calibration.pause_ns, harness::PauseNs(run.calibration.pauses));
  EXPECT_EQ(run.calibration.pause_per_s > 0, !run.calibration.pause_ns.empty());
  for (const auto& o : run.outcomes) {
    // ... paused for the share the hypervisor took in the point's runs.
    std::vector<double> steal;
    for (const auto& m : o.measured_runs) steal.push_back(m.steal_fraction);
    std::sort(steal.begin(), steal.end());
    ASSERT_EQ(steal.size(), static_cast<size_t>(options.runs)) << o.point.name;
    EXPECT_EQ(o.calibration.runs_steal_fraction, steal[0] >= 0 ? steal[steal.size() / 2] : -1)
        << o.point.name;
    // The waits the point's model took are the medians of every pass.
    EXPECT_EQ(o.calibration.wait_passes, options.calibration_passes) << o.point.name;
    EXPECT_EQ(
        o.row.scenario.pause_per_s,
        harness::PausePerSWithSteal(run.calibration.pauses, o.calibration.runs_steal_fraction))
        << o.point.name;
    EXPECT_EQ(o.row.scenario.pause_ns, run.calibration.pause_ns) << o.point.name;
    EXPECT_EQ(o.row.scenario.reconnect_ns, run.calibration.reconnect_ns) << o.point.name;
    EXPECT_EQ(o.row.scenario.gss_setup_ns, run.calibration.gss_setup_ns) << o.point.name;
    EXPECT_EQ(o.row.scenario.gss_setup_cpu_ns,
              std::min(run.calibration.gss_setup_cpu_ns, run.calibration.gss_setup_ns))
        << o.point.name;
    // A reconnect's CPU: the client's part on the reconnecting receiver, the
    // rest on the new connection's server thread.
    EXPECT_EQ(o.row.scenario.reconnect_cpu_ns,
              std::min(run.calibration.reconnect_client_cpu_ns, run.calibration.reconnect_ns))
        << o.point.name;
    EXPECT_EQ(o.row.scenario.reconnect_server_cpu_ns,
              run.calibration.reconnect_cpu_ns - run.calibration.reconnect_client_cpu_ns)
        << o.point.name;
    EXPECT_EQ(o.row.scenario.idle_wake_ns, run.calibration.idle_wake_ns) << o.point.name;
    EXPECT_EQ(o.row.scenario.busy_wake_ns, run.calibration.busy_wake.quantiles_ns) << o.point.name;
    EXPECT_EQ(o.row.scenario.woken_first_share, run.calibration.wake_order.woken_first_share)
        << o.point.name;
    EXPECT_EQ(o.row.scenario.idle_wake_curve_ns, run.calibration.idle_wake.wake_ns) << o.point.name;
    // A held connection's delay line is a thread whose CPU per call was
    // measured in the point's own no-violation run; without a hold, none.
    EXPECT_EQ(o.row.scenario.skew_sender_ns > 0, o.point.scenario.skew_ns > 0) << o.point.name;
    EXPECT_EQ(o.row.scenario.skew_sender_ns, o.calibration.skew_sender_ns) << o.point.name;
    EXPECT_EQ(o.row.scenario.read_bytes, static_cast<int64_t>(rpc::kReadChunk)) << o.point.name;
    // A point that disagrees says why; one that agrees has nothing to say.
    const bool agree = o.comparison.violations_agree && o.comparison.goodput_agree;
    EXPECT_EQ(o.diagnosis.empty(), agree) << o.point.name << ": " << o.diagnosis;
  }
  // Every row also lands in results.json with its verdict.
  auto rows = run.JsonRows();
  ASSERT_EQ(rows.size(), run.outcomes.size());
  EXPECT_EQ(rows[0]["kind"], "validation");
  EXPECT_TRUE(run.SectionJson().contains("calibration"));
  if (!shared.empty()) {
    std::string names;
    for (const auto& n : shared) names += (names.empty() ? "" : ", ") + n;
    GTEST_SKIP() << "other processes ran at least " << common::Fmt("%.0f%%", kCalmSteal * 100)
                 << " of this machine's CPU time during the runs of " << shared.size()
                 << " points (" << names
                 << "): they are undecided, and the model's agreement there was not asserted";
  }
}

}  // namespace
}  // namespace secmode::suite
