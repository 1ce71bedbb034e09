// The nconnect validation's calibration: what the simulator is fed, measured
// on this machine (suite/nconnect_validation.h, Calibration).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/clock.h"
#include "common/latency.h"
#include "common/machine.h"
#include "common/socket.h"
#include "common/stats.h"
#include "harness/measure.h"
#include "harness/sched_probe.h"
#include "harness/thread_model_calibration.h"
#include "rpc/client_auth.h"
#include "rpc/record.h"
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
using loopback::RunSetupBurst;
using loopback::StartServer;

int ServerThreads(const ValidationOptions& options, int nconnect) {
  if (options.server_workers > 0) return options.server_workers;
  // A thread per connection, but no more running at once than there are cores.
  return std::min(nconnect, common::LogicalCpus());
}

nlohmann::json Calibration::ReadProbeJson() const {
  nlohmann::json points = nlohmann::json::array();
  for (const ReadProbePoint& p : read_probe) {
    points.push_back({{"slots", p.slots},
                      {"client_reads_per_call", p.client_reads},
                      {"server_reads_per_call", p.server_reads},
                      {"client_cpu_ns", p.client_cpu_ns},
                      {"server_cpu_ns", p.server_cpu_ns}});
  }
  auto fit = [](const common::LineFit& f) {
    return nlohmann::json{{"ok", f.ok},
                          {"points", f.n},
                          {"slope_ns", f.slope},
                          {"intercept_ns", f.intercept},
                          {"slope_se_ns", f.slope_se}};
  };
  return {{"connections", kReadProbeConnections}, {"runs_per_point", kReadProbeRuns},
          {"seconds", kReadProbeSeconds},         {"points", points},
          {"client_fit", fit(client_read_fit)},   {"server_fit", fit(server_read_fit)}};
}

nlohmann::json Calibration::ToJson() const {
  nlohmann::json probe_rows = nlohmann::json::array();
  for (const auto& [threads, p] : probes) probe_rows.push_back(p.ToJson());
  return {{"cost_fixed_ns", cost_fixed_ns},
          {"cost_ns_per_byte", cost_ns_per_byte},
          {"leg_ns_small", leg_ns_small},
          {"leg_ns_4k", leg_ns_4k},
          {"client_crypto_ns", client_crypto_ns},
          {"cores", cores},
          {"probes", probe_rows},
          {"wakeup_probe", wakeup.ToJson()},
          {"wakeup_preempt_ns", wakeup_preempt_ns},
          {"idle_wake_probe", idle_wake.ToJson()},
          {"idle_wake_ns", idle_wake_ns},
          {"busy_wake_probe", busy_wake.ToJson()},
          {"wake_order_probe", wake_order.ToJson()},
          {"pause_probe", pauses.ToJson()},
          {"pause_per_s", pause_per_s},
          {"runs_steal_fraction", runs_steal_fraction},
          {"pause_ns", pause_ns},
          {"skew_sender_ns", skew_sender_ns},
          {"net_rtt_ns", net_rtt_ns},
          {"net_rtt_idle_ns", net_rtt_idle_ns},
          {"cores_awake", cores_awake},
          {"cores_awake_error", cores_awake_error},
          {"one_call_p50_ns", one_call_p50_ns},
          {"one_call_awake_p50_ns", one_call_awake_p50_ns},
          {"one_call_client_ns", one_call_client_ns},
          {"one_call_server_ns", one_call_server_ns},
          {"one_call_model_p50_ns", one_call_model_p50_ns},
          {"reconnect_ns", reconnect_ns},
          {"reconnect_idle_ns", reconnect_idle_ns},
          {"reconnect_cpu_ns", reconnect_cpu_ns},
          {"reconnect_client_cpu_ns", reconnect_client_cpu_ns},
          {"gss_setup_ns", gss_setup_ns},
          {"gss_setup_idle_ns", gss_setup_idle_ns},
          {"gss_setup_cpu_ns", gss_setup_cpu_ns},
          {"gss_setup_rounds", kGssSetupRounds},
          {"gss_setup_burst_seconds", kGssSetupBurstSeconds},
          {"gss_setup_quiet_ns", gss_setup_quiet_ns},
          {"gss_setup_quiet_cpu_ns", gss_setup_quiet_cpu_ns},
          {"wait_passes", wait_passes},
          {"client_cpu_ns", client_cpu_ns},
          {"server_cpu_ns", server_cpu_ns},
          {"no_violation_ops_per_s", no_violation_ops_per_s},
          {"client_call_ns", client_call_ns},
          {"server_call_ns", server_call_ns},
          {"client_reads_per_call", client_reads_per_call},
          {"server_reads_per_call", server_reads_per_call},
          {"client_read_ns", client_read_ns},
          {"server_read_ns", server_read_ns},
          {"read_probe", ReadProbeJson()},
          {"slice_ns", slice_ns},
          {"rtt_ns", rtt_ns},
          {"sys_ops_per_s", sys_ops_per_s},
          {"service_ns", service_ns},
          {"sys_ns", sys_ns}};
}

namespace {

// The read probe's CPU per read: the line's slope, 0 where it cannot tell.
int64_t ReadNs(const common::LineFit& f) {
  return f.ok && f.slope > 0 ? static_cast<int64_t>(f.slope) : 0;
}

// What a reconnect costs beyond one round trip: a NULL call on a fresh
// connection (connect, the server's accept and its new connection thread,
// the call, and the old connection's end) against the same call on an
// established connection, `rounds` of each in a row: wall time medians
// (the model's Scenario::reconnect_ns), and this process's CPU time over
// the fresh calls (every connection's end included) less that over the
// established ones, per call (reconnect_cpu_ns), and of it the calling
// thread's own, the client's part (the rest is the in-process server's).
struct ReconnectCost {
  int64_t wall_ns = 0, cpu_ns = 0, client_cpu_ns = 0;
};
Result<ReconnectCost> MeasureReconnect(harness::ModeEnvironment& env, const Gss& g, int rounds) {
  SECMODE_ASSIGN_OR_RETURN(auto server, StartServer(env, g, 128, rpc::WindowPolicy::kDrop, 0));
  rpc::LoadOptions aim;
  server.Aim(aim);
  auto auth = rpc::NewSysAuth(rpc::kNfsProgram, rpc::kNfsVersion);
  common::Bytes call;
  uint32_t seq = 0;
  SECMODE_RETURN_IF_ERROR(auth->EncodeCall(1, 0, {}, &call, &seq));
  SECMODE_ASSIGN_OR_RETURN(common::Fd established, common::Connect(aim.host, aim.port));
  common::LatencySamples fresh, kept;
  const uint64_t c0 = common::ProcessCpuNs(), t0_cpu = common::ThreadCpuNs();
  for (int i = 0; i < rounds; ++i) {
    const uint64_t t0 = common::NowNs();
    SECMODE_RETURN_IF_ERROR(rpc::BlockingRoundTrip(aim.host, aim.port, call).status());
    fresh.Add(common::NowNs() - t0);
  }
  const uint64_t t1_cpu = common::ThreadCpuNs();
  usleep(2000);  // the last connection's thread ends
  const uint64_t c1 = common::ProcessCpuNs(), t1b_cpu = common::ThreadCpuNs();
  for (int i = 0; i < rounds; ++i) {
    const uint64_t t0 = common::NowNs();
    SECMODE_RETURN_IF_ERROR(rpc::BlockingCall(established.get(), call).status());
    kept.Add(common::NowNs() - t0);
  }
  const uint64_t c2 = common::ProcessCpuNs(), t2_cpu = common::ThreadCpuNs();
  server.server->Stop();
  ReconnectCost cost;
  cost.wall_ns = std::max<int64_t>(
      0, static_cast<int64_t>(fresh.Percentile(0.5)) - static_cast<int64_t>(kept.Percentile(0.5)));
  const int64_t cpu = (static_cast<int64_t>(c1 - c0) - static_cast<int64_t>(c2 - c1)) / rounds;
  cost.cpu_ns = std::max<int64_t>(cpu, 0);
  const int64_t client =
      (static_cast<int64_t>(t1_cpu - t0_cpu) - static_cast<int64_t>(t2_cpu - t1b_cpu)) / rounds;
  cost.client_cpu_ns = std::clamp<int64_t>(client, 0, cost.cpu_ns);
  return cost;
}

// Re-creating a context: the load generator's own path (a short
// connection, the INIT exchange) timed `rounds` times; its wall time beyond
// the loopback's round trip and the CPU both ends spend on it (medians):
// the model's Scenario::gss_setup_ns and gss_setup_cpu_ns. `after_load`:
// each one right after a burst of the mode's load on the same server
// (Calibration::kGssSetupBurstSeconds), else back to back.
Result<rpc::ContextCreationTime> MeasureContextCreation(harness::ModeEnvironment& env, const Gss& g,
                                                        rpc::Security mode, int64_t net_rtt_ns,
                                                        int rounds, bool after_load) {
  SECMODE_ASSIGN_OR_RETURN(auto server, StartServer(env, g, 4096, rpc::WindowPolicy::kDrop, 0));
  rpc::LoadOptions lo;
  server.Aim(lo);
  lo.security = mode;
  lo.engine = g.engine;
  lo.enctype = g.enctype;
  rpc::ContextCreationTime t;
  if (!after_load) {
    SECMODE_ASSIGN_OR_RETURN(t, rpc::TimeContextCreation(lo, rounds));
  } else {
    std::vector<double> wall, cpu;
    for (int i = 0; i < rounds; ++i) {
      SECMODE_RETURN_IF_ERROR(RunSetupBurst(lo).status());
      // The burst's connections end on the server's threads meanwhile; the
      // creation is timed once they have, so that it competes with nothing.
      std::this_thread::sleep_for(std::chrono::milliseconds(Calibration::kGssSetupSettleMs));
      SECMODE_ASSIGN_OR_RETURN(rpc::ContextCreationTime one, rpc::TimeContextCreation(lo, 1));
      wall.push_back(static_cast<double>(one.wall_ns));
      cpu.push_back(static_cast<double>(one.cpu_ns));
    }
    t.wall_ns = static_cast<int64_t>(common::Median(wall));
    t.cpu_ns = static_cast<int64_t>(common::Median(cpu));
  }
  server.server->Stop();
  t.wall_ns = std::max<int64_t>(0, t.wall_ns - net_rtt_ns);
  return t;
}

// The crypto cost per message: the mode's four legs (whole RPC calls and
// replies, the same work the TCP client and server do) at 0 and 4 KiB, each
// at its typical cost (harness::TypicalNsPerOp): the load it predicts runs
// through the same minutes.
Status MeasureLegCosts(harness::ModeEnvironment& env, const ValidationOptions& options,
                       Calibration& c) {
  SECMODE_ASSIGN_OR_RETURN(harness::ModeName name, harness::ParseModeName(options.mode));
  SECMODE_ASSIGN_OR_RETURN(common::Association assoc, harness::MakeAssociation(name, env));
  harness::MeasureOptions mo;
  mo.min_seconds = 0.04;
  double mean[2] = {0, 0};
  double leg_ns[2][4] = {};
  const size_t sizes[2] = {0, 4096};
  for (int i = 0; i < 2; ++i) {
    int k = 0;
    for (common::Leg leg : common::kAllLegs) {
      SECMODE_ASSIGN_OR_RETURN(harness::LegMeasurement m,
                               harness::MeasureLeg(assoc, leg, sizes[i], mo));
      const double typical = harness::TypicalNsPerOp(m);
      leg_ns[i][k++] = typical;
      mean[i] += typical / 4;
    }
  }
  c.leg_ns_small = mean[0];
  c.leg_ns_4k = mean[1];
  c.cost_fixed_ns = mean[0];
  c.cost_ns_per_byte = std::max(0.0, (mean[1] - mean[0]) / 4096.0);
  // A 4 KiB READ: the client seals a small call and opens a 4 KiB reply.
  c.client_crypto_ns = static_cast<int64_t>(leg_ns[0][0] + leg_ns[1][3]);
  return Status::Ok();
}

// The waits the model is given, timed on idle cores and then, for the
// thread model, again with every core awake (harness::CoresAwake): the
// thread model adds the wakeup of an idle core itself wherever its cores
// are idle, so it takes the awake figures; the model without threads has
// no idle cores and takes the idle machine's. The unloaded round trip is
// one sys call at a time: what is not CPU at either end is the loopback's
// own delay (the stack, wakeups). CPU figures come from the idle pass.
struct Waits {
  ReconnectCost reconnect;
  PerCall one;
  int64_t net_rtt_ns = 0;
  rpc::ContextCreationTime setup, quiet;
};

Result<Waits> TimeWaits(harness::ModeEnvironment& env, const Gss& g,
                        const ValidationOptions& options) {
  Waits w;
  if (options.thread_model) {
    SECMODE_ASSIGN_OR_RETURN(w.reconnect, MeasureReconnect(env, g, 30));
  }
  SECMODE_ASSIGN_OR_RETURN(w.one, MeasurePerCall(env, g, rpc::Security::kSys, 1, 1, false,
                                                 rpc::NfsOp::kRead, 4096, 0.2));
  w.net_rtt_ns = std::max<int64_t>(
      1000, static_cast<int64_t>(w.one.p50_ns - w.one.client_ns - w.one.server_ns));
  SECMODE_ASSIGN_OR_RETURN(w.setup, MeasureContextCreation(env, g, g.family, w.net_rtt_ns,
                                                           Calibration::kGssSetupRounds, true));
  SECMODE_ASSIGN_OR_RETURN(w.quiet, MeasureContextCreation(env, g, g.family, w.net_rtt_ns,
                                                           Calibration::kGssSetupRounds, false));
  return w;
}

}  // namespace

// The waits on idle cores, and for the thread model again with the cores
// awake (Calibration: the model takes those when they could be timed).
Status MeasureWaits(harness::ModeEnvironment& env, const ValidationOptions& options,
                    Calibration& c) {
  SECMODE_ASSIGN_OR_RETURN(Gss g, ParseGss(options));
  SECMODE_ASSIGN_OR_RETURN(Waits idle, TimeWaits(env, g, options));
  const PerCall& one = idle.one;
  c.one_call_p50_ns = static_cast<int64_t>(one.p50_ns);
  c.one_call_client_ns = static_cast<int64_t>(one.client_ns);
  c.one_call_server_ns = static_cast<int64_t>(one.server_ns);
  c.reconnect_ns = c.reconnect_idle_ns = idle.reconnect.wall_ns;
  c.reconnect_cpu_ns = idle.reconnect.cpu_ns;
  c.reconnect_client_cpu_ns = idle.reconnect.client_cpu_ns;
  c.net_rtt_ns = c.net_rtt_idle_ns = idle.net_rtt_ns;
  c.gss_setup_ns = c.gss_setup_idle_ns = idle.setup.wall_ns;
  c.gss_setup_quiet_ns = idle.quiet.wall_ns;
  c.gss_setup_quiet_cpu_ns = idle.quiet.cpu_ns;
  c.gss_setup_cpu_ns = idle.setup.cpu_ns;
  if (options.thread_model) {
    auto awake = harness::CoresAwake::Start();
    if (awake.ok()) {
      SECMODE_ASSIGN_OR_RETURN(Waits w, TimeWaits(env, g, options));
      c.cores_awake = true;
      c.one_call_awake_p50_ns = static_cast<int64_t>(w.one.p50_ns);
      c.reconnect_ns = w.reconnect.wall_ns;
      c.net_rtt_ns = w.net_rtt_ns;
      c.gss_setup_ns = w.setup.wall_ns;
      c.gss_setup_quiet_ns = w.quiet.wall_ns;
      c.gss_setup_quiet_cpu_ns = w.quiet.cpu_ns;
    } else {
      c.cores_awake_error = awake.status().message();
    }
  }
  return Status::Ok();
}

namespace {

// The figures MeasureWaits times, each a median over the calibration's
// passes (TakeMedianWaits).
constexpr int64_t Calibration::*kWaitFigures[] = {
    &Calibration::one_call_p50_ns,
    &Calibration::one_call_awake_p50_ns,
    &Calibration::one_call_client_ns,
    &Calibration::one_call_server_ns,
    &Calibration::reconnect_ns,
    &Calibration::reconnect_idle_ns,
    &Calibration::reconnect_cpu_ns,
    &Calibration::reconnect_client_cpu_ns,
    &Calibration::net_rtt_ns,
    &Calibration::net_rtt_idle_ns,
    &Calibration::gss_setup_ns,
    &Calibration::gss_setup_idle_ns,
    &Calibration::gss_setup_cpu_ns,
    &Calibration::gss_setup_quiet_ns,
    &Calibration::gss_setup_quiet_cpu_ns,
};

// What the figures of the waits give the model without threads: its round
// trip, the unloaded call's p50 less the sys-mode time per call.
void DeriveFromWaits(Calibration& c) {
  c.rtt_ns = std::max<int64_t>(5000, c.one_call_p50_ns - c.sys_ns);
}

// The CPU of one socket read, at each end (Calibration::read_probe).
Status MeasureReadProbe(harness::ModeEnvironment& env, const Gss& g, Calibration& c) {
  std::vector<double> reads[2], cpu[2];
  for (int slots : Calibration::kReadProbeSlots) {
    std::vector<double> run_reads[2], run_cpu[2];
    for (int run = 0; run < Calibration::kReadProbeRuns; ++run) {
      SECMODE_ASSIGN_OR_RETURN(
          PerCall p,
          MeasurePerCall(env, g, g.family, Calibration::kReadProbeConnections, slots, false,
                         rpc::NfsOp::kRead, 4096, Calibration::kReadProbeSeconds));
      run_reads[0].push_back(p.client_reads);
      run_reads[1].push_back(p.server_reads);
      run_cpu[0].push_back(p.client_ns);
      run_cpu[1].push_back(p.server_ns);
    }
    Calibration::ReadProbePoint point;
    point.slots = slots;
    point.client_reads = common::Median(run_reads[0]);
    point.server_reads = common::Median(run_reads[1]);
    point.client_cpu_ns = common::Median(run_cpu[0]);
    point.server_cpu_ns = common::Median(run_cpu[1]);
    c.read_probe.push_back(point);
    reads[0].push_back(point.client_reads);
    reads[1].push_back(point.server_reads);
    cpu[0].push_back(point.client_cpu_ns);
    cpu[1].push_back(point.server_cpu_ns);
  }
  c.client_read_fit = common::FitLine(reads[0], cpu[0]);
  c.server_read_fit = common::FitLine(reads[1], cpu[1]);
  c.client_read_ns = ReadNs(c.client_read_fit);
  c.server_read_ns = ReadNs(c.server_read_fit);
  return Status::Ok();
}

}  // namespace

Result<Calibration> Calibrate(harness::ModeEnvironment& env, const ValidationOptions& options) {
  SECMODE_ASSIGN_OR_RETURN(Gss g, ParseGss(options));
  Calibration c;
  SECMODE_RETURN_IF_ERROR(MeasureLegCosts(env, options, c));
  c.cores = common::LogicalCpus();
  if (options.thread_model) {
    // Every scheduler probe but the time slice's, which RunValidation runs
    // per thread count of its grid.
    harness::ThreadModelProbes which;
    SECMODE_ASSIGN_OR_RETURN(harness::ThreadModelCalibration t,
                             harness::CalibrateThreadModel(which));
    c.wakeup = t.wakeup;
    c.wakeup_preempt_ns = t.wakeup_preempt_ns;
    c.idle_wake = t.idle_wake;
    c.idle_wake_ns = t.idle_wake_ns;
    c.busy_wake = t.busy_wake;
    c.wake_order = t.wake_order;
    c.pauses = t.pauses;
    c.pause_per_s = t.pause_per_s;
    c.pause_ns = t.pause_ns;
  }
  SECMODE_RETURN_IF_ERROR(MeasureWaits(env, options, c));
  // The model without threads: non-crypto time per call from sys-mode
  // throughput, folded into the server's service time (see CalibratedScenario).
  SECMODE_ASSIGN_OR_RETURN(PerCall many, MeasurePerCall(env, g, rpc::Security::kSys, 4, 128, false,
                                                        rpc::NfsOp::kRead, 4096, 0.3));
  c.sys_ops_per_s = many.ops_per_s;
  const double sys_ns = ServerThreads(options, 4) * 1e9 / many.ops_per_s;
  c.service_ns = static_cast<int64_t>(sys_ns) + c.client_crypto_ns;
  c.sys_ns = static_cast<int64_t>(sys_ns);
  DeriveFromWaits(c);
  if (options.thread_model) {
    SECMODE_ASSIGN_OR_RETURN(c.one_call_model_p50_ns, ModelOneCall(c, options));
    SECMODE_RETURN_IF_ERROR(MeasureReadProbe(env, g, c));
  }
  return c;
}

Status TakeMedianWaits(const std::vector<Calibration>& passes, const ValidationOptions& options,
                       Calibration& c) {
  if (passes.empty()) return Status::Ok();
  for (int64_t Calibration::*figure : kWaitFigures) {
    std::vector<double> values;
    for (const Calibration& pass : passes) values.push_back(static_cast<double>(pass.*figure));
    c.*figure = static_cast<int64_t>(common::Median(values));
  }
  // Medians of each apart: the client's part of a reconnect's CPU stays
  // within the whole.
  c.reconnect_client_cpu_ns = std::min(c.reconnect_client_cpu_ns, c.reconnect_cpu_ns);
  c.wait_passes = static_cast<int>(passes.size());
  DeriveFromWaits(c);
  if (options.thread_model) {
    SECMODE_ASSIGN_OR_RETURN(c.one_call_model_p50_ns, ModelOneCall(c, options));
  }
  return Status::Ok();
}

Result<int64_t> ModelOneCall(const Calibration& c, const ValidationOptions& options) {
  sim::Scenario one;
  one.nconnect = 1;
  one.slots = 1;
  one.window = 128;
  one.reaction = rpc::WindowPolicy::kDrop;
  one.op = sim::Op::kRead;
  one.io_size = 4096;
  one.ops = 2000;
  Calibration sys = c;
  sys.cost_fixed_ns = 0;
  sys.cost_ns_per_byte = 0;
  // one_call_*_ns hold every cost of the call, the reads' included.
  sys.client_read_ns = 0;
  sys.server_read_ns = 0;
  sys.client_call_ns = c.one_call_client_ns;
  sys.server_call_ns = c.one_call_server_ns;
  sys.skew_sender_ns = 0;
  if (sys.slice_ns <= 0) sys.slice_ns = one.slice_ns;  // two threads, two cores: never used up
  SECMODE_ASSIGN_OR_RETURN(sim::ScenarioResult r,
                           sim::Simulate(CalibratedScenario(one, sys, options)));
  return r.p50_ns;
}

sim::Scenario CalibratedScenario(const sim::Scenario& point, const Calibration& c,
                                 const ValidationOptions& options) {
  sim::Scenario s = point;
  s.cost_fixed_ns = c.cost_fixed_ns;
  s.cost_ns_per_byte = c.cost_ns_per_byte;
  s.jitter_dist = sim::Dist::kExponential;
  s.bandwidth_bytes_per_s = 2e9;         // loopback memcpy rate, far above these loads
  s.retransmit_timeout_ns = 1000000000;  // LoadOptions::timeout_ms below
  s.reconnect_ns = c.reconnect_ns;       // measured with the thread model's probes, else 0
  s.gss_setup_ns = c.gss_setup_ns;
  s.resend_any_connection = true;   // what RunLoad's Reconnect does
  s.context_lock_wakes_one = true;  // RunLoad re-creates under the context's std::mutex
  s.skew_where = sim::SkewWhere::kClient;
  if (options.thread_model && options.server_workers == 0) {
    // Threads and cores as the real run has them: a receiver thread per
    // connection, a server thread per connection, the machine's cores, the
    // probe's time slice, and each end's measured CPU per call.
    s.thread_model = true;
    s.cores = c.cores;
    s.slice_ns = c.slice_ns;
    s.wakeup_preempt_ns = c.wakeup_preempt_ns;
    s.idle_wake_ns = c.idle_wake_ns;
    s.idle_wake_after_ns = c.idle_wake.idle_ns;
    s.idle_wake_curve_ns = c.idle_wake.wake_ns;
    s.busy_wake_ns = harness::BusyWakeNs(c.busy_wake);
    s.woken_first_share = c.wake_order.woken_first_share;
    // The pauses of the machine as its real runs had it, when they said.
    s.pause_per_s = c.runs_steal_fraction >= 0
                        ? harness::PausePerSWithSteal(c.pauses, c.runs_steal_fraction)
                        : c.pause_per_s;
    s.pause_ns = c.pause_ns;
    // A context's creation: the re-creating receiver spends at most the
    // whole wait as CPU, both ends' CPU counted as its own (the real ends
    // can spend more in parallel). A reconnect's CPU is split by end: the
    // client's part on the receiver, the server's on the connection's
    // server thread.
    s.gss_setup_cpu_ns = std::min(c.gss_setup_cpu_ns, c.gss_setup_ns);
    s.reconnect_cpu_ns = std::min(c.reconnect_client_cpu_ns, c.reconnect_ns);
    s.reconnect_server_cpu_ns = c.reconnect_cpu_ns - c.reconnect_client_cpu_ns;
    s.skew_sender_ns = c.skew_sender_ns;
    s.rtt_ns = c.net_rtt_ns;
    s.jitter_ns = std::max<int64_t>(1000, c.net_rtt_ns / 10);
    s.client_call_ns = c.client_call_ns;
    s.client_read_ns = c.client_read_ns;
    s.server_read_ns = c.server_read_ns;
    s.read_bytes = static_cast<int64_t>(rpc::kReadChunk);  // what one recv() asks for
    s.per_core_queues = true;  // a run queue per CPU, as Linux has (migrate_ns: its default)
    s.service_dist = sim::Dist::kExponential;
    s.service_ns = c.server_call_ns;
    return s;
  }
  s.rtt_ns = c.rtt_ns;
  s.jitter_ns = std::max<int64_t>(1000, c.rtt_ns / 10);
  if (options.server_workers > 0) {
    s.server_threads = options.server_workers;
    s.server_order = sim::ServerOrder::kArrival;  // one FIFO to the workers (tcp_server.cc)
  } else {
    // A thread per connection reads, checks and answers its calls in order.
    s.server_threads = ServerThreads(options, s.nconnect);
    s.server_order = sim::ServerOrder::kRoundRobin;
  }
  s.service_dist = sim::Dist::kExponential;
  s.service_ns = c.service_ns;
  return s;
}

}  // namespace secmode::suite
