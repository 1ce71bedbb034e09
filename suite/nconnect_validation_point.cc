// One point of the nconnect validation on real sockets and in the simulator,
// and why it disagrees (suite/nconnect_validation.h).
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>

#include "common/format.h"
#include "common/stats.h"
#include "harness/sched_probe.h"
#include "rpc/tcp_server.h"
#include "sim/simulator.h"
#include "suite/nconnect_validation.h"
#include "suite/nconnect_validation_loopback.h"

namespace secmode::suite {

using common::Result;
using common::Status;
using loopback::Gss;
using loopback::MeasurePerCall;
using loopback::ParseGss;
using loopback::PerCall;
using loopback::RunAgain;
using loopback::StartServer;

namespace {

// The point's calibration, into out.calibration (the run's, with the
// point's scheduler probe): each figure of the point's own runs the median
// of its passes. The non-crypto CPU per call at its concurrency in sys mode
// (the model without threads), each end's CPU per call in the mode with no
// violation possible (the thread model), and the time slice of its thread
// count.
void CalibratePoint(const std::vector<PointPass>& passes, const ValidationOptions& options,
                    ValidationOutcome& out) {
  Calibration& pc = out.calibration;
  const sim::Scenario& s = out.point.scenario;
  auto median = [&passes](double PointPass::*figure) {
    std::vector<double> values;
    for (const PointPass& pass : passes) values.push_back(pass.*figure);
    return common::Median(values);
  };
  if ((!options.thread_model || options.ablation) && median(&PointPass::sys_ops_per_s) > 0) {
    pc.sys_ops_per_s = median(&PointPass::sys_ops_per_s);
    pc.sys_ns = static_cast<int64_t>(ServerThreads(options, s.nconnect) * 1e9 / pc.sys_ops_per_s);
    pc.service_ns = pc.sys_ns + pc.client_crypto_ns;
  }
  // The thread model: each end's CPU per call in this mode at this point's
  // connections, slots and contexts, with no violation possible; the crypto
  // the model adds for the call's sizes is taken off.
  pc.skew_sender_ns = static_cast<int64_t>(median(&PointPass::sender_ns));
  pc.client_cpu_ns = median(&PointPass::client_ns);
  pc.server_cpu_ns = median(&PointPass::server_ns);
  pc.no_violation_ops_per_s = median(&PointPass::ops_per_s);
  sim::Scenario costs = s;
  costs.cost_fixed_ns = pc.cost_fixed_ns;
  costs.cost_ns_per_byte = pc.cost_ns_per_byte;
  const double crypto =
      static_cast<double>(costs.CostNs(costs.RequestBytes()) + costs.CostNs(costs.ReplyBytes()));
  // Of the rest, the reads' CPU is the model's per read (client_read_ns,
  // server_read_ns), spent as often as the model's threads read.
  pc.client_reads_per_call = median(&PointPass::client_reads);
  pc.server_reads_per_call = median(&PointPass::server_reads);
  const double client_reads_cpu = static_cast<double>(pc.client_read_ns) * pc.client_reads_per_call;
  const double server_reads_cpu = static_cast<double>(pc.server_read_ns) * pc.server_reads_per_call;
  pc.client_call_ns =
      static_cast<int64_t>(std::max(0.0, pc.client_cpu_ns - crypto - client_reads_cpu));
  pc.server_call_ns =
      static_cast<int64_t>(std::max(0.0, pc.server_cpu_ns - crypto - server_reads_cpu));
  if (auto probe = pc.probes.find(2 * s.nconnect); probe != pc.probes.end()) {
    pc.slice_ns = harness::SliceNs(probe->second);
  }
}

// One real run as the simulator reports one: `before` and `after` are the
// server's counters around it, `stats` its threads' once it stopped.
sim::ScenarioResult MeasuredResult(const rpc::LoadReport& r, const rpc::ServerCounters& before,
                                   const rpc::ServerCounters& after,
                                   const rpc::TcpServerStats& stats) {
  sim::ScenarioResult m;
  m.seed = 0;
  m.completed = static_cast<int64_t>(r.ops);
  m.elapsed_ns = static_cast<int64_t>(r.seconds * 1e9);
  m.ops_per_s = r.ops_per_second;
  m.mb_per_s = r.mb_per_second;
  m.violations = static_cast<int64_t>(after.below_window - before.below_window);
  m.drops = m.violations + static_cast<int64_t>(after.duplicates - before.duplicates);
  m.disconnects = static_cast<int64_t>(r.disconnects);
  m.context_recreations = static_cast<int64_t>(r.context_recreations);
  m.retransmissions = static_cast<int64_t>(r.retransmits);
  m.reencodes = static_cast<int64_t>(r.reencodes);
  m.p50_ns = static_cast<int64_t>(r.p50_us * 1e3);
  m.p99_ns = static_cast<int64_t>(r.p99_us * 1e3);
  m.p999_ns = static_cast<int64_t>(r.p999_us * 1e3);
  m.idle_fraction = r.idle_fraction;
  m.client_reads = static_cast<int64_t>(r.receiver_reads);
  m.server_reads = static_cast<int64_t>(stats.reads);
  m.client_sleeps = static_cast<int64_t>(r.receivers.sleeps);
  m.server_sleeps = static_cast<int64_t>(stats.threads.sleeps);
  m.client_runs = static_cast<int64_t>(r.receivers.runs);
  m.server_runs = static_cast<int64_t>(stats.threads.runs);
  m.client_wait_ns = static_cast<int64_t>(r.receivers.run_queue_wait_ns);
  m.server_wait_ns = static_cast<int64_t>(stats.threads.run_queue_wait_ns);
  m.steal_fraction = r.steal_fraction;
  return m;
}

}  // namespace

Status MeasurePointPass(harness::ModeEnvironment& env, const ValidationOptions& options,
                        PendingPoint& p) {
  const sim::Scenario& s = p.out.point.scenario;
  SECMODE_ASSIGN_OR_RETURN(Gss g, ParseGss(options));
  const int slots = static_cast<int>(s.slots);
  PointPass pass;
  if (!options.thread_model || options.ablation) {
    SECMODE_ASSIGN_OR_RETURN(PerCall sys,
                             MeasurePerCall(env, g, rpc::Security::kSys, s.nconnect, slots, false,
                                            p.load.op, p.load.size, 0.15));
    p.out.rerun_calibration += sys.reruns;
    pass.sys_ops_per_s = sys.ops_per_s;
  }
  SECMODE_ASSIGN_OR_RETURN(
      PerCall krb, MeasurePerCall(env, g, g.family, s.nconnect, slots, s.per_connection_context,
                                  p.load.op, p.load.size, 0.3, s.skew_ns));
  p.out.rerun_calibration += krb.reruns;
  pass.client_ns = krb.client_ns;
  pass.server_ns = krb.server_ns;
  pass.ops_per_s = krb.ops_per_s;
  pass.client_reads = krb.client_reads;
  pass.server_reads = krb.server_reads;
  pass.sender_ns = krb.sender_ns;
  p.passes.push_back(pass);
  return Status::Ok();
}

// One real run of the point (`p.load` against a fresh server: a new window
// and contexts) into p.runs; the point's first is traced at both ends (its
// attribution, reconnects, re-creations, resumes). A run made again for the
// hypervisor's share (kCalmSteal) is counted in p.out.rerun_measured.
Status RunPointOnce(harness::ModeEnvironment& env, const ValidationOptions& options,
                    PendingPoint& p) {
  const ValidationPoint& point = p.out.point;
  const sim::Scenario& s = point.scenario;
  SECMODE_ASSIGN_OR_RETURN(Gss g, ParseGss(options));
  rpc::LoadOptions lo = p.load;
  for (int attempt = 1;; ++attempt) {
    // Room for every transmission of the run, retransmissions included.
    std::unique_ptr<rpc::CallTrace> trace;
    if (options.trace && p.runs.empty()) {
      trace = std::make_unique<rpc::CallTrace>(static_cast<size_t>(s.ops) * 64 + 4096);
    }
    SECMODE_ASSIGN_OR_RETURN(auto server, StartServer(env, g, s.window, s.reaction,
                                                      options.server_workers, trace.get()));
    server.Aim(lo);
    lo.trace = trace.get();
    const rpc::ServerCounters before = server.server->counters();
    SECMODE_ASSIGN_OR_RETURN(rpc::LoadReport r, rpc::RunLoad(lo));
    server.server->Stop();
    const rpc::ServerCounters after = server.server->counters();
    if (trace) {
      p.out.attribution = AttributeViolations(*trace);
      p.out.reconnects = AttributeReconnects(*trace);
      p.out.recreations = AttributeRecreations(*trace);
      p.out.resumes = AttributeResumes(*trace);
    }
    if (r.errors > 0) {
      return Status::Internal("validation point " + point.name + ": " + std::to_string(r.errors) +
                              " replies failed a check, first: " + r.first_error);
    }
    if (RunAgain(r, attempt)) {
      ++p.out.rerun_measured;
      continue;
    }
    p.runs.emplace_back(r, MeasuredResult(r, before, after, server.server->stats()));
    return Status::Ok();
  }
}

namespace {

// A simulator failure is the model's, and this point's evidence: it is
// kept in the row (the scenario is there to rerun it) and the other points
// still run.
void NoteFailure(ValidationOutcome& out, const std::string& what, const Status& st) {
  out.simulation_error += (out.simulation_error.empty() ? "" : "; ") + what + ": " + st.ToString();
}

// The model of the point, once per seed (ValidationOptions::model_seeds)
// into out.simulated_seeds, row.simulated the first's; false when the
// simulator failed (out.simulation_error says on what).
bool SimulateSeeds(const ValidationOptions& options, ValidationOutcome& out) {
  bool simulated = true;
  for (int i = 0; i < std::max(1, options.model_seeds) && simulated; ++i) {
    sim::Scenario seeded = out.row.scenario;
    seeded.seed += static_cast<uint64_t>(i);
    if (auto sim_result = sim::Simulate(seeded); sim_result.ok()) {
      out.simulated_seeds.push_back(*sim_result);
    } else {
      NoteFailure(out,
                  i == 0 ? std::string("the scenario")
                         : "the scenario with seed " + std::to_string(seeded.seed),
                  sim_result.status());
      simulated = false;
    }
  }
  if (!out.simulated_seeds.empty()) out.row.simulated = out.simulated_seeds.front();
  return simulated;
}

// The ablation: the point's model again with one mechanism off or changed
// at a time (out.ablation), and the model without threads.
void Ablate(const sim::Scenario& s, const ValidationOptions& options, ValidationOutcome& out) {
  const Calibration& pc = out.calibration;
  struct Variant {
    const char* name;
    std::function<void(sim::Scenario&)> change;
  };
  const Variant variants[] = {
      {"no batching", [](sim::Scenario& v) { v.batching = false; }},
      {"whole socket per wakeup", [](sim::Scenario& v) { v.read_bytes = 0; }},
      {"no wakeup preemption", [](sim::Scenario& v) { v.wakeup_preempt_ns = 0; }},
      {"idle cores wake at once",
       [](sim::Scenario& v) {
         v.idle_wake_ns = 0;
         v.idle_wake_after_ns.clear();
         v.idle_wake_curve_ns.clear();
       }},
      {"idle cores wake as after a long idle",
       [](sim::Scenario& v) {
         v.idle_wake_after_ns.clear();
         v.idle_wake_curve_ns.clear();
       }},
      {"busy cores preempted at the wakeup", [](sim::Scenario& v) { v.busy_wake_ns.clear(); }},
      {"woken threads wait behind descheduled ones",
       [](sim::Scenario& v) { v.woken_first_share = 0; }},
      {"no core pauses", [](sim::Scenario& v) { v.pause_per_s = 0; }},
      {"pauses as the probe saw them (not the runs' steal)",
       [&pc](sim::Scenario& v) { v.pause_per_s = pc.pause_per_s; }},
      {"context creation off the cores", [](sim::Scenario& v) { v.gss_setup_cpu_ns = 0; }},
      {"a context's waiters wake together",
       [](sim::Scenario& v) { v.context_lock_wakes_one = false; }},
      {"context creation as on a quiet machine",
       [&pc](sim::Scenario& v) {
         if (pc.gss_setup_quiet_ns <= 0) return;
         v.gss_setup_ns = pc.gss_setup_quiet_ns;
         v.gss_setup_cpu_ns = std::min(pc.gss_setup_quiet_cpu_ns, pc.gss_setup_quiet_ns);
       }},
      {"reconnects off the cores",
       [](sim::Scenario& v) { v.reconnect_cpu_ns = v.reconnect_server_cpu_ns = 0; }},
      {"one run queue for all cores", [](sim::Scenario& v) { v.per_core_queues = false; }},
      {"the waker is preempted",
       [](sim::Scenario& v) { v.preempt_victim = sim::PreemptVictim::kWaker; }},
      {"no descheduling", [](sim::Scenario& v) { v.cores = 0; }},
      // The reads' CPU folded into each call as the no-violation run
      // spent it: what the model did before it had a cost per read.
      {"every cost per call",
       [&pc](sim::Scenario& v) {
         v.client_call_ns +=
             static_cast<int64_t>(static_cast<double>(v.client_read_ns) * pc.client_reads_per_call);
         v.service_ns +=
             static_cast<int64_t>(static_cast<double>(v.server_read_ns) * pc.server_reads_per_call);
         v.client_read_ns = v.server_read_ns = 0;
       }},
  };
  for (const Variant& v : variants) {
    sim::Scenario changed = out.row.scenario;
    v.change(changed);
    auto r = sim::Simulate(changed);
    if (r.ok()) {
      out.ablation.push_back({v.name, *r});
    } else {
      NoteFailure(out, std::string("ablation '") + v.name + "'", r.status());
    }
  }
  ValidationOptions without = options;
  without.thread_model = false;
  auto r = sim::Simulate(CalibratedScenario(s, pc, without));
  if (r.ok()) {
    out.ablation.push_back({"no thread model", *r});
  } else {
    NoteFailure(out, "ablation 'no thread model'", r.status());
  }
}

}  // namespace

Result<PendingPoint> PreparePoint(harness::ModeEnvironment& env, const ValidationPoint& point,
                                  const Calibration& c, const ValidationOptions& options) {
  const sim::Scenario& s = point.scenario;
  SECMODE_RETURN_IF_ERROR(s.Validate().Annotate("validation point " + point.name));
  if (s.skew_ns > 0 && s.skew_where != sim::SkewWhere::kClient) {
    return Status::InvalidArgument("validation point " + point.name +
                                   ": the real client can only hold sends (skew_where client)");
  }
  if (s.spread_cap > 0) {
    return Status::InvalidArgument("validation point " + point.name +
                                   ": the real client has no spread cap");
  }
  SECMODE_ASSIGN_OR_RETURN(Gss g, ParseGss(options));
  PendingPoint p;
  ValidationOutcome& out = p.out;
  out.point = point;
  rpc::LoadOptions& lo = p.load;
  lo.reconnect_backoff = false;  // the simulator's client reconnects at once
  lo.connections = s.nconnect;
  lo.slots = static_cast<int>(s.slots);
  lo.op = s.op == sim::Op::kRead ? rpc::NfsOp::kRead : rpc::NfsOp::kWrite;
  lo.size = static_cast<uint32_t>(s.io_size);
  out.calibration = c;
  if (options.thread_model && !c.probes.count(2 * s.nconnect)) {
    SECMODE_ASSIGN_OR_RETURN(harness::SchedProbe probe, harness::ProbeSchedulerFor(2 * s.nconnect));
    out.calibration.probes.emplace(2 * s.nconnect, probe);
  }
  SECMODE_RETURN_IF_ERROR(MeasurePointPass(env, options, p));
  lo.security = g.family;
  lo.engine = g.engine;
  lo.enctype = g.enctype;
  lo.context_per_connection = s.per_connection_context;
  lo.reencode = s.reencode;
  lo.timeout_ms = 1000;
  lo.warmup_seconds = 0;  // count from the first call, as the simulator does
  lo.max_ops = static_cast<uint64_t>(s.ops);
  lo.seconds = 10;  // stops at max_ops long before
  if (s.skew_ns > 0) {
    lo.skew_connection = s.skew_conn;
    lo.skew_delay_us = static_cast<uint32_t>(s.skew_ns / 1000);
  }
  return p;
}

ValidationOutcome FinishPoint(PendingPoint p, const Calibration& c,
                              const ValidationOptions& options) {
  ValidationOutcome& out = p.out;
  const sim::Scenario& s = out.point.scenario;
  // The run's calibration as it stands now (its waits the median of its
  // passes), with the probe the point measured itself, and the point's own
  // figures from its passes.
  std::map<int, harness::SchedProbe> probes = std::move(out.calibration.probes);
  out.calibration = c;
  out.calibration.probes.merge(probes);
  CalibratePoint(p.passes, options, out);
  const auto& runs = p.runs;
  std::vector<sim::ScenarioResult> measured;
  // Over all the runs, added up before one division: each is a few clock
  // ticks, and one tick of rounding is a large share of one.
  common::CpuShare others, steal;
  for (const auto& run : runs) {
    measured.push_back(run.second);
    others.Add(run.first.others);
    steal.Add(run.first.steal);
  }
  Calibration& pc = out.calibration;
  if (steal.all_s > 0) pc.runs_steal_fraction = steal.Fraction();
  // The model of the point, fed the runs' steal (Calibration).
  out.row.scenario = CalibratedScenario(s, pc, options);
  const bool simulated = SimulateSeeds(options, out);
  if (simulated && options.ablation && out.row.scenario.thread_model) Ablate(s, options, out);
  out.comparison = sim::CompareToRuns(out.simulated_seeds, measured);
  out.verdict = JudgePoint(out.comparison, measured);
  // Other processes' share is not remade like the hypervisor's: a busy
  // machine mostly stays busy for longer than a run (kCalmSteal).
  HoldShared(out.verdict, others.Fraction(), kCalmSteal);
  out.measured_runs = measured;
  if (!runs.empty()) {
    // The run of median goodput stands for the point in tables.
    std::vector<size_t> order(runs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      return runs[x].second.ops_per_s < runs[y].second.ops_per_s;
    });
    out.load = runs[order[order.size() / 2]].first;
    out.row.measured = runs[order[order.size() / 2]].second;
  }
  if (!simulated) {
    out.comparison.violations_agree = out.comparison.goodput_agree = false;
    out.comparison.detail = "the simulator failed: DISAGREE";
    out.verdict = PointVerdict();  // disagrees
    out.diagnosis = "the simulator failed on this scenario (" + out.simulation_error +
                    "): a model bug; the scenario is in this row to rerun";
  } else {
    out.diagnosis = Diagnose(out);
  }
  return std::move(p.out);
}

Result<ValidationOutcome> RunValidationPoint(harness::ModeEnvironment& env,
                                             const ValidationPoint& point, const Calibration& c,
                                             const ValidationOptions& options) {
  SECMODE_ASSIGN_OR_RETURN(PendingPoint p, PreparePoint(env, point, c, options));
  for (int rep = 0; rep < std::max(1, options.runs); ++rep) {
    SECMODE_RETURN_IF_ERROR(RunPointOnce(env, options, p));
  }
  return FinishPoint(std::move(p), c, options);
}

std::string Diagnose(const ValidationOutcome& o) {
  const sim::Comparison& c = o.comparison;
  if (c.violations_agree && c.goodput_agree) return "";
  const sim::ScenarioResult& sim = o.row.simulated;
  const sim::ScenarioResult& real = o.row.measured;
  std::string out;
  if (c.measured_violations_max == 0 && c.goodput_ratio == 0) return c.detail;  // no runs
  if (!c.violations_agree) {
    const double sv = c.simulated_violations;  // the seeds' mean (sim::CompareToRuns)
    const std::string shown = common::Fmt(sv == std::floor(sv) ? "%.0f" : "%.1f", sv);
    out += std::string(sv == 0                          ? "model says zero, real runs lost calls"
                       : sv < c.measured_violations_min ? "model under-counts violations"
                       : sv > c.measured_violations_max ? "model over-counts violations"
                                                        : "violations outside the widened range") +
           " (" + shown + (c.seeds > 1 ? " in " + std::to_string(c.seeds) + " seeds' mean" : "") +
           " vs " + common::Fmt("%.0f", c.measured_violations_min) + ".." +
           common::Fmt("%.0f", c.measured_violations_max) + ")";
    if (o.attribution.violations > 0 && !o.attribution.causes.empty()) {
      const ViolationCause& top = o.attribution.causes.front();
      out += "; real ones held mostly at " + top.stage + ", " + top.thread + " (" +
             std::to_string(top.count) + " of " + std::to_string(o.attribution.violations) +
             " traced, median excess " + common::Fmt("%.0f", top.median_excess_us) + " us)";
    }
    static const char* const kStages[] = {"encode", "hold", "socket", "check"};
    int worst = -1;
    for (int i = 0; i < 4; ++i) {
      if (sim.violation_stage[i] > 0 &&
          (worst < 0 || sim.violation_stage[i] > sim.violation_stage[worst])) {
        worst = i;
      }
    }
    if (worst >= 0) {
      out += std::string(c.seeds > 1 ? "; the first seed's at " : "; the model's at ") +
             kStages[worst] + " (" + std::to_string(sim.violation_stage[worst]) + " of " +
             std::to_string(sim.violations) + ")";
    }
  }
  if (!c.goodput_agree) {
    out += std::string(out.empty() ? "" : "; ") + "goodput measured/sim " +
           common::Fmt("%.2f", c.goodput_ratio) +
           (c.seeds > 1 ? " (the first seed's disconnects " : " (disconnects sim ") +
           std::to_string(sim.disconnects) + " vs real " + std::to_string(real.disconnects) +
           ", p99 " + common::Fmt("%.1f", sim.p99_ns / 1e6) + " vs " +
           common::Fmt("%.1f", real.p99_ns / 1e6) + " ms";
    if (sim.idle_fraction >= 0 && real.idle_fraction >= 0) {
      out += ", cores idle " + common::Fmt("%.0f", 100 * sim.idle_fraction) + "% vs " +
             common::Fmt("%.0f", 100 * real.idle_fraction) + "%";
    }
    if (sim.client_reads > 0 && real.client_reads > 0 && sim.completed > 0 && real.completed > 0) {
      // How many calls one socket read held (each read costs its CPU once).
      auto per_read = [](int64_t reads, int64_t calls) {
        return common::Fmt("%.1f", static_cast<double>(calls) / static_cast<double>(reads));
      };
      out += ", calls per client read " + per_read(sim.client_reads, sim.completed) + " vs " +
             per_read(real.client_reads, real.completed);
      if (sim.server_reads > 0 && real.server_reads > 0) {
        out += ", per server read " + per_read(sim.server_reads, sim.completed) + " vs " +
               per_read(real.server_reads, real.completed);
      }
    }
    if (real.steal_fraction >= 0) {
      // Time the real run's vCPUs did not run at all: the model's cores
      // always do.
      out += ", the hypervisor took " + common::Fmt("%.0f", 100 * real.steal_fraction) +
             "% of the real run's CPU time";
    }
    out += ")";
  }
  return out;
}

}  // namespace secmode::suite
