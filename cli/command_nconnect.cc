// `secmode nconnect`: run one simulated scenario, a sweep, or a
// recommendation (sim/). Flags map 1:1 onto sim::Scenario fields and carry
// the names Scenario::Validate uses in its messages.
#include <cstdio>
#include <iostream>
#include <memory>
#include <regex>

#include "cli/cli.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/format.h"
#include "common/machine.h"
#include "harness/modes.h"
#include "harness/results.h"
#include "harness/sim_speed.h"
#include "harness/thread_model_calibration.h"
#include "render/run_dir.h"
#include "sim/recommend.h"
#include "sim/simulator.h"
#include "sim/sweep.h"
#include "suite/nconnect_sweep.h"
#include "suite/nconnect_validation.h"

namespace secmode::cli {

namespace {

struct NconnectOptions {
  sim::Scenario s;
  std::string reaction = "drop-disconnect", op = "read", jitter_dist = "exponential",
              service_dist = "exponential", skew_where = "client", server_order = "arrival",
              preempt_victim = "longest";
  bool sweep = false, recommend = false, quick = false, json = false, validate = false,
       full = false;
  std::string points;  // --validate: a regular expression the point names must match
  std::string shard;   // --sweep, --validate: I/N
  std::string out_dir;
  int threads = 0;
  int64_t max_slots = 1024;
  int seeds = 3;
  bool given_cores = false, given_slice = false, given_preempt = false, given_idle_wake = false,
       given_busy_wake = false, given_wake_order = false, given_pauses = false;
};

[[noreturn]] void Fail(const common::Status& status) { cli::Fail("nconnect", status); }

// A run's results, started now on this machine by this command line.
harness::RunResults NewResults() {
  harness::RunResults results;
  results.machine = common::ReadMachineInfo();
  results.command = CommandLine();
  results.started_at = common::UtcTimestamp();
  return results;
}

// Writes the run directory (render/run_dir.h) and says where it went.
void Write(const std::string& dir, harness::RunResults& results) {
  results.finished_at = common::UtcTimestamp();
  auto files = render::WriteRunDirectory(dir, results);
  if (!files.ok()) Fail(files.status());
  for (const auto& w : files->warnings) {
    std::cerr << "secmode nconnect: " << common::TerminalText(w) << "\n";
  }
  std::cout << "results:";
  for (const auto& f : files->written) std::cout << " " << dir << "/" << f;
  std::cout << "\n";
}

// Fills the enum fields from their names; Validate() then checks the rest.
sim::Scenario Resolve(NconnectOptions& o) {
  sim::Scenario s = o.s;
  auto reaction = sim::ParseReaction(o.reaction);
  if (!reaction.ok()) Fail(reaction.status());
  s.reaction = *reaction;
  auto op = sim::ParseOp(o.op);
  if (!op.ok()) Fail(op.status());
  s.op = *op;
  auto jd = sim::ParseDist(o.jitter_dist);
  if (!jd.ok()) Fail(jd.status().Annotate("jitter-dist"));
  s.jitter_dist = *jd;
  auto sd = sim::ParseDist(o.service_dist);
  if (!sd.ok()) Fail(sd.status().Annotate("service-dist"));
  s.service_dist = *sd;
  auto so = sim::ParseServerOrder(o.server_order);
  if (!so.ok()) Fail(so.status());
  s.server_order = *so;
  auto pv = sim::ParsePreemptVictim(o.preempt_victim);
  if (!pv.ok()) Fail(pv.status());
  s.preempt_victim = *pv;
  auto sw = sim::ParseSkewWhere(o.skew_where);
  if (!sw.ok()) Fail(sw.status());
  s.skew_where = *sw;
  common::Status valid = s.Validate();
  if (!valid.ok()) Fail(valid);
  return s;
}

void PrintResult(const sim::ScenarioResult& r) {
  printf("completed           %lld ops in %.3f ms simulated%s\n",
         static_cast<long long>(r.completed), r.elapsed_ns / 1e6,
         r.truncated ? " (TRUNCATED: event budget ran out, the scenario thrashes)" : "");
  printf("goodput             %.0f ops/s, %.1f MB/s\n", r.ops_per_s, r.mb_per_s);
  printf("window violations   %lld (largest lag behind the highest number: %lld)\n",
         static_cast<long long>(r.violations), static_cast<long long>(r.max_spread));
  printf("drops               %lld\n", static_cast<long long>(r.drops));
  printf("disconnects         %lld\n", static_cast<long long>(r.disconnects));
  printf("context re-creations %lld (context-problem replies %lld)\n",
         static_cast<long long>(r.context_recreations), static_cast<long long>(r.error_replies));
  printf("retransmissions     %lld (%lld bytes)\n", static_cast<long long>(r.retransmissions),
         static_cast<long long>(r.retransmitted_bytes));
  printf("re-encodes          %lld\n", static_cast<long long>(r.reencodes));
  printf("preemptions         %lld\n", static_cast<long long>(r.preemptions));
  if (r.client_reads > 0 || r.server_reads > 0) {
    printf("socket reads        client %lld, server %lld\n", static_cast<long long>(r.client_reads),
           static_cast<long long>(r.server_reads));
  }
  printf("latency             p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms\n", r.p50_ns / 1e6,
         r.p99_ns / 1e6, r.p999_ns / 1e6);
  printf("stalled             %.4f of the time\n", r.stalled_fraction);
  printf("seed                %llu\n", static_cast<unsigned long long>(r.seed));
}

void RunOne(NconnectOptions& o) {
  sim::Scenario s = Resolve(o);
  auto speed = harness::MeasureSimSpeed(s);
  if (!speed.ok()) Fail(speed.status());
  auto r = sim::Simulate(s);  // deterministic: the same result as the timed run
  if (!r.ok()) Fail(r.status());
  if (o.json) {
    nlohmann::json j = s.ToJson();
    j.update(r->ToJson());
    std::cout << j.dump(2) << "\n";
    return;
  }
  PrintResult(*r);
  printf(
      "simulator speed     %lld simulated RPCs in %.3f s of CPU time (%.3f s wall) = %.2f M "
      "RPCs per CPU-second\n",
      static_cast<long long>(speed->rpcs), speed->cpu_seconds, speed->wall_seconds,
      speed->rpcs_per_second / 1e6);
}

void RunSweepCommand(NconnectOptions& o) {
  sim::Scenario base = Resolve(o);
  suite::Shard shard;  // refused before anything is created
  if (!o.shard.empty()) {
    auto parsed = suite::ParseShard(o.shard);
    if (!parsed.ok()) Fail(parsed.status());
    shard = *parsed;
  }
  sim::SweepGrid grid = o.quick ? sim::SweepGrid::Quick() : sim::SweepGrid::Default();
  const int64_t grid_ops = grid.base.ops;
  grid.base = base;
  if (!o.s.ops || o.s.ops == sim::Scenario().ops) grid.base.ops = grid_ops;
  const std::string dir = o.out_dir.empty() ? render::DefaultOutDir() : o.out_dir;
  common::Status st = common::MakeDirectories(dir);
  if (!st.ok()) Fail(st);
  harness::RunResults results = NewResults();
  std::cout << "nconnect sweep of " << grid.size() << " scenarios"
            << (!shard.Whole() ? ", shard " + o.shard : std::string()) << " ..." << std::flush;
  st = suite::RunNconnectSweep(grid, "flags of this command (default: sim/scenario.h)", o.threads,
                               results, std::cout, shard);
  std::cout << "\n";
  if (!st.ok()) Fail(st);
  Write(dir, results);
}

// --validate: the simulator against the real client and server on loopback
// (suite/nconnect_validation.h); writes the run directory into --out.
void RunValidateCommand(NconnectOptions& o) {
  suite::ValidationOptions options;
  // The grid first: a --points that matches nothing is refused before
  // anything is created.
  std::vector<suite::ValidationPoint> grid =
      o.full ? suite::WideValidationGrid(options.ops) : suite::DefaultValidationGrid(options.ops);
  if (!o.points.empty()) {
    std::regex re;
    try {
      re = std::regex(o.points, std::regex::extended);
    } catch (const std::regex_error& e) {
      Fail(common::Status::InvalidArgument("--points: not a regular expression: " + o.points));
    }
    std::erase_if(grid,
                  [&](const suite::ValidationPoint& p) { return !std::regex_search(p.name, re); });
    if (grid.empty()) {
      Fail(common::Status::InvalidArgument("--points: no point of the grid matches " + o.points));
    }
  }
  // The grid a shard is a slice of: the points chosen, numbered in order.
  const size_t grid_points = grid.size();
  for (size_t i = 0; i < grid.size(); ++i) grid[i].grid_index = i;
  suite::Shard shard;
  if (!o.shard.empty()) {
    auto parsed = suite::ParseShard(o.shard);
    if (!parsed.ok()) Fail(parsed.status());
    shard = *parsed;
    std::erase_if(grid,
                  [&](const suite::ValidationPoint& p) { return !shard.Holds(p.grid_index); });
    if (grid.empty()) {
      Fail(common::Status::InvalidArgument("--shard " + o.shard + ": holds no point of the " +
                                           std::to_string(grid_points) + " chosen"));
    }
  }
  const std::string dir = o.out_dir.empty() ? render::DefaultOutDir() : o.out_dir;
  common::Status st = common::MakeDirectories(dir);
  if (!st.ok()) Fail(st);
  harness::RunResults results = NewResults();
  harness::ModeEnvironment env;
  std::cout << "nconnect validation of " << grid.size() << " point(s) on loopback ..."
            << std::flush;
  suite::ValidationRun run = suite::RunValidation(env, grid, options, std::cout);
  std::cout << "\n";
  // What ran is written even when a point failed.
  for (auto& row : run.JsonRows()) results.nconnect.push_back(std::move(row));
  if (!run.outcomes.empty()) {
    nlohmann::json section = run.SectionJson();
    // Which grid: what a merge of shards checks they share.
    section["grid"] = {{"name", o.full ? "wide" : "default"},
                       {"points", grid_points},
                       {"filter", o.points},
                       {"ops", options.ops},
                       {"runs", options.runs}};
    if (!shard.Whole()) section["shard"] = shard.ToJson(grid_points);
    results.sections["nconnect-validation"] = std::move(section);
  }
  if (!run.status.ok()) {
    results.errors.push_back(
        {{"section", "nconnect-validation"}, {"error", run.status.ToString()}});
  }
  Write(dir, results);
  if (o.full) {
    // The wide grid's report is hundreds of rows: the verdict here, the rest in the file.
    size_t agree = 0;
    for (const auto& out : run.outcomes) agree += out.comparison.agree() ? 1 : 0;
    std::cout << "\n"
              << agree << " of " << run.outcomes.size()
              << " scenarios agree (every point, the diagnoses and the plots: " << dir
              << "/report.md)\n";
  } else if (auto report = common::ReadFile(dir + "/report.md"); report.ok()) {
    const size_t at = report->find("## nconnect simulator vs real sockets");
    if (at != std::string::npos) std::cout << "\n" << report->substr(at);
  }
  if (!run.status.ok()) Fail(run.status);
}

// --recommend: the model with its threads, cores and a run queue per core
// on, as the validation on real sockets runs it (the batch bound is
// --read-bytes: secmode's own client reads 64 KiB, other clients differ);
// the cores, time slice, wakeup preemption and idle-core wakeup measured on
// this machine by the scheduler probes unless given.
void RunRecommend(NconnectOptions& o) {
  sim::Scenario base = Resolve(o);
  base.thread_model = true;
  base.per_core_queues = true;
  if (!o.given_cores) base.cores = common::LogicalCpus();
  // No cores (one per thread): no scheduler to probe.
  const bool probe = base.cores > 0;
  harness::ThreadModelProbes probes;
  probes.slice_threads = probe && !o.given_slice ? 2 * base.nconnect : 0;
  probes.wakeup = probe && !o.given_preempt;
  probes.idle_wake = probe && !o.given_idle_wake;
  probes.busy_wake = probe && !o.given_busy_wake;
  probes.wake_order = probe && !o.given_wake_order;
  probes.pauses = probe && !o.given_pauses;
  auto calibration = harness::CalibrateThreadModel(probes);
  if (!calibration.ok()) Fail(calibration.status());
  calibration->ApplyTo(base);
  std::string measured = calibration->Description();
  if (!o.given_cores) measured += "  cores: this machine's (--cores for the client's own)\n";
  common::Status valid = base.Validate();
  if (!valid.ok()) Fail(valid);
  auto rec = sim::Recommend(base, o.max_slots, o.seeds);
  if (!rec.ok()) Fail(rec.status());
  std::cout << rec->ToText(base);
  if (!measured.empty()) std::cout << "measured on this machine, not given:\n" << measured;
}

}  // namespace

CLI::App* AddNconnectCommand(CLI::App& app) {
  auto o = std::make_shared<NconnectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "nconnect",
      "Simulate nconnect with a shared RPCSEC_GSS sequence window: one scenario (default), "
      "--sweep, or --recommend");
  sim::Scenario& s = o->s;
  cmd->add_option("--nconnect", s.nconnect, "TCP connections")->capture_default_str();
  cmd->add_option("--slots", s.slots, "Requests outstanding at once")->capture_default_str();
  cmd->add_option("--window", s.window, "Server's RPCSEC_GSS sequence window")
      ->capture_default_str();
  cmd->add_option("--reaction", o->reaction,
                  "Server reaction to a number below the window: drop, drop-disconnect, "
                  "discard-context")
      ->capture_default_str();
  cmd->add_option("--op", o->op, "read or write (which direction carries the I/O)")
      ->capture_default_str();
  cmd->add_option("--io-size", s.io_size, "I/O size in bytes")->capture_default_str();
  cmd->add_flag("--per-connection-context", s.per_connection_context,
                "One GSS context (sequence counter) per connection instead of one shared");
  cmd->add_flag("--resend-any-connection", s.resend_any_connection,
                "Resend a lost connection's calls round-robin over all connections (secmode's "
                "load generator) instead of on the reconnected one (Linux)");
  cmd->add_flag("--context-lock-wakes-one", s.context_lock_wakes_one,
                "With the thread model: the receivers waiting for a re-created context go on one "
                "after another, as a mutex's waiters (secmode's load generator), instead of all "
                "at once (Linux)");
  cmd->add_flag("--reencode", s.reencode,
                "Re-number calls that fell out of the window at transmit");
  cmd->add_option("--spread-cap", s.spread_cap,
                  "Cap on (number - lowest outstanding number); 0: none")
      ->capture_default_str();
  cmd->add_option("--cost-fixed-ns", s.cost_fixed_ns, "Crypto cost per message, fixed part")
      ->capture_default_str();
  cmd->add_option("--cost-ns-per-byte", s.cost_ns_per_byte, "Crypto cost per message byte")
      ->capture_default_str();
  cmd->add_option("--gss-setup-cpu-ns", s.gss_setup_cpu_ns,
                  "With --thread-model: the part of --gss-setup-ns that is CPU, spent on a core "
                  "by the thread that re-creates the context")
      ->capture_default_str();
  cmd->add_option("--reconnect-cpu-ns", s.reconnect_cpu_ns,
                  "With --thread-model: the part of --reconnect-ns that is CPU, spent on a core "
                  "by the receiver that reconnects")
      ->capture_default_str();
  cmd->add_option("--reconnect-server-cpu-ns", s.reconnect_server_cpu_ns,
                  "With --thread-model: the server's CPU per reconnect (accept, the new "
                  "connection's thread, the old one's end), spent by that connection's server "
                  "thread before it reads a call")
      ->capture_default_str();
  cmd->add_option("--gss-setup-ns", s.gss_setup_ns, "Cost of creating a new GSS context")
      ->capture_default_str();
  cmd->add_option("--retransmit-timeout-ns", s.retransmit_timeout_ns, "Client retransmit timeout")
      ->capture_default_str();
  cmd->add_option("--reconnect-ns", s.reconnect_ns, "Reconnect time beyond one RTT")
      ->capture_default_str();
  cmd->add_option("--bandwidth", s.bandwidth_bytes_per_s,
                  "Bytes per second per connection and direction")
      ->capture_default_str();
  cmd->add_option("--rtt-ns", s.rtt_ns, "Base round-trip time")->capture_default_str();
  cmd->add_option("--jitter-dist", o->jitter_dist, "constant, exponential or lognormal")
      ->capture_default_str();
  cmd->add_option("--jitter-ns", s.jitter_ns, "Mean one-way extra delay")->capture_default_str();
  cmd->add_option("--skew-conn", s.skew_conn, "The lagging connection")->capture_default_str();
  cmd->add_option("--skew-ns", s.skew_ns, "How much that connection lags")->capture_default_str();
  cmd->add_option("--skew-where", o->skew_where,
                  "client (held before the socket) or network (on the wire)")
      ->capture_default_str();
  cmd->add_option("--server-threads", s.server_threads, "Server worker threads")
      ->capture_default_str();
  cmd->add_option("--server-order", o->server_order,
                  "arrival (one FIFO) or round-robin (per-connection queues, checked at pickup)")
      ->capture_default_str();
  cmd->add_option("--service-dist", o->service_dist, "constant, exponential or lognormal")
      ->capture_default_str();
  cmd->add_option("--service-ns", s.service_ns, "Mean server service time besides crypto")
      ->capture_default_str();
  cmd->add_flag("--thread-model", s.thread_model,
                "Model threads and cores: a receiver thread per connection on the client, a "
                "thread per connection on the server, per-wakeup batches, a round-robin "
                "scheduler on --cores cores");
  cmd->add_option("--cores", s.cores,
                  "With --thread-model: cores shared by client and server "
                  "threads (0: one per thread)")
      ->capture_default_str();
  cmd->add_option("--slice-ns", s.slice_ns, "With --thread-model: the scheduler's time slice")
      ->capture_default_str();
  cmd->add_option("--wakeup-preempt-ns", s.wakeup_preempt_ns,
                  "With --thread-model: a woken thread takes the core of one that has run this "
                  "long (0: waits for a slice to end)")
      ->capture_default_str();
  cmd->add_option("--skew-sender-ns", s.skew_sender_ns,
                  "With --thread-model and a client-side skew: CPU per call of a delay-line "
                  "thread that writes the skewed connection's calls when due (0: no such thread)")
      ->capture_default_str();
  cmd->add_option("--idle-wake-ns", s.idle_wake_ns,
                  "With --thread-model and cores: a thread woken onto an idle core starts this "
                  "long after its wakeup (0: at once)")
      ->capture_default_str();
  cmd->add_option("--idle-wake-after-ns", s.idle_wake_after_ns,
                  "With --thread-model, cores and --per-core-queues: idle lengths in ns, rising, "
                  "comma-separated, after which a woken thread starts --idle-wake-curve-ns later "
                  "(linear in between; none: --idle-wake-ns whatever the idle time)")
      ->delimiter(',');
  cmd->add_option("--idle-wake-curve-ns", s.idle_wake_curve_ns,
                  "With --idle-wake-after-ns: the wakeup in ns after each of those idle lengths")
      ->delimiter(',');
  cmd->add_option("--woken-first-share", s.woken_first_share,
                  "With --thread-model and cores: the share of wakeups after which the woken "
                  "thread waits ahead of threads descheduled with work left (0: in order of "
                  "arrival)")
      ->capture_default_str();
  cmd->add_option("--busy-wake-ns", s.busy_wake_ns,
                  "With --thread-model, cores and wakeup preemption: a woken thread's "
                  "preemption of a busy core lands this long after its wakeup, the quantiles "
                  "in ns at 0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999 and 1, "
                  "comma-separated (none: at the wakeup)")
      ->delimiter(',');
  cmd->add_option("--pause-per-s", s.pause_per_s,
                  "With --thread-model and cores: pauses per second of a busy core that no "
                  "modelled thread causes (interrupts, the hypervisor); 0: none")
      ->capture_default_str();
  cmd->add_option("--pause-ns", s.pause_ns,
                  "With --pause-per-s: the pauses' durations in ns, the quantiles at 0, 0.1, "
                  "0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999 and 1, comma-separated")
      ->delimiter(',');
  cmd->add_option("--preempt-victim", o->preempt_victim,
                  "With --thread-model: whose core a waking thread takes: longest (the thread "
                  "that has run longest) or waker (the thread whose write woke it)")
      ->capture_default_str();
  cmd->add_flag("--per-core-queues", s.per_core_queues,
                "With --thread-model and --cores: a run queue per core; an idle core takes a "
                "thread waiting on another only once it has been off its core --migrate-ns");
  cmd->add_option("--migrate-ns", s.migrate_ns,
                  "With --per-core-queues: how long a thread's cache stays hot")
      ->capture_default_str();
  cmd->add_flag("!--no-batching", s.batching,
                "With --thread-model: handle and write each item on its own, not per wakeup");
  cmd->add_option("--read-bytes", s.read_bytes,
                  "With --thread-model: bytes a thread reads per wakeup, its batch (0: all "
                  "its socket holds)")
      ->capture_default_str();
  cmd->add_option("--client-call-ns", s.client_call_ns,
                  "With --thread-model: client CPU per call besides crypto")
      ->capture_default_str();
  cmd->add_option("--client-read-ns", s.client_read_ns,
                  "With --thread-model: a client receiver's CPU per read of its socket (per "
                  "batch, whatever it holds)")
      ->capture_default_str();
  cmd->add_option("--server-read-ns", s.server_read_ns,
                  "With --thread-model: a server thread's CPU per read of its socket (per batch)")
      ->capture_default_str();
  cmd->add_option("--seed", s.seed, "Random seed (same seed, same result)")->capture_default_str();
  cmd->add_option("--ops", s.ops, "Stop after this many completed operations")
      ->capture_default_str();
  cmd->add_option("--duration-ns", s.duration_ns, "Also stop at this simulated time (0: no)")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the scenario and result as JSON");
  cmd->add_flag("--sweep", o->sweep,
                "Run the sweep grid around these flags and write results.json, report.md and "
                "plots into --out");
  cmd->add_flag("--quick", o->quick, "With --sweep: the small grid");
  cmd->add_flag("--validate", o->validate,
                "Run the validation grid on real sockets (krb5p, throwaway realm, loopback) and "
                "compare with the simulator; writes results.json and report.md into --out");
  cmd->add_flag("--full", o->full, "With --validate: the " + suite::ValidationGridChoice());
  cmd->add_option("--points", o->points,
                  "With --validate: only the points whose names match this extended regular "
                  "expression (names such as shared-n4-s128-w32-skew0-drop-disconnect)");
  cmd->add_option("--out", o->out_dir,
                  "With --sweep or --validate: output directory (default: results/runs/<UTC "
                  "timestamp>-<host>)");
  cmd->add_option("--threads", o->threads, "With --sweep: threads (default: all)");
  cmd->add_option("--shard", o->shard,
                  "With --sweep or --validate: run only shard I of N (I/N, 0 <= I < N): the "
                  "scenarios (points, after --points) whose index in the grid leaves remainder I "
                  "when divided by N, e.g. one shard per host; `secmode merge` joins the shards' "
                  "directories into the whole sweep or validation (a validation's rows keep the "
                  "host that measured them)");
  cmd->add_flag("--recommend", o->recommend,
                "Print the largest slot count with no violations for these flags and its "
                "goodput, and the alternatives (per-connection contexts, spread cap, re-encode) "
                "at the slots given; always with the thread model, its --cores, --slice-ns, "
                "--wakeup-preempt-ns, --idle-wake-ns, --busy-wake-ns, --woken-first-share and "
                "--pause-per-s/--pause-ns "
                "measured on "
                "this machine unless given");
  cmd->add_option("--max-slots", o->max_slots, "With --recommend: largest slot count to try")
      ->capture_default_str();
  cmd->add_option("--seeds", o->seeds, "With --recommend: seeds that must all be clean")
      ->capture_default_str();
  cmd->callback([o, cmd] {
    o->given_cores = cmd->count("--cores") > 0;
    o->given_slice = cmd->count("--slice-ns") > 0;
    o->given_preempt = cmd->count("--wakeup-preempt-ns") > 0;
    o->given_idle_wake = cmd->count("--idle-wake-ns") > 0 || cmd->count("--idle-wake-after-ns") > 0;
    o->given_busy_wake = cmd->count("--busy-wake-ns") > 0;
    o->given_wake_order = cmd->count("--woken-first-share") > 0;
    o->given_pauses = cmd->count("--pause-per-s") > 0;
    if (o->sweep + o->recommend + o->validate > 1) {
      Fail(common::Status::InvalidArgument("--sweep, --recommend and --validate: choose one"));
    }
    if (!o->shard.empty() && !o->sweep && !o->validate) {
      Fail(common::Status::InvalidArgument("--shard: only with --sweep or --validate"));
    }
    if ((o->full || !o->points.empty()) && !o->validate) {
      Fail(common::Status::InvalidArgument("--full and --points: only with --validate"));
    }
    if (o->validate) {
      RunValidateCommand(*o);
    } else if (o->sweep) {
      RunSweepCommand(*o);
    } else if (o->recommend) {
      RunRecommend(*o);
    } else {
      RunOne(*o);
    }
  });
  return cmd;
}

}  // namespace secmode::cli
