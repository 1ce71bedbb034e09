// `secmode nconnect`: run one simulated scenario, a sweep, a recommendation
// (sim/), or the validation on real sockets (suite/nconnect_validation.h).
// The scenario's flags are cli/scenario_flags.h.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/run_directory.h"
#include "cli/scenario_flags.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/format.h"
#include "common/machine.h"
#include "harness/modes.h"
#include "harness/results.h"
#include "harness/sim_speed.h"
#include "harness/thread_model_calibration.h"
#include "render/report_validation.h"
#include "render/run_dir.h"
#include "sim/recommend.h"
#include "sim/simulator.h"
#include "sim/sweep.h"
#include "suite/nconnect_sweep.h"
#include "suite/nconnect_validation.h"

namespace secmode::cli {

namespace {

struct NconnectOptions {
  ScenarioFlags scenario;
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

// Writes the run directory (render/run_dir.h) and says where it went.
void Write(const std::string& dir, harness::RunResults& results) {
  results.finished_at = common::UtcTimestamp();
  PrintWritten("results:", WriteRunDirectoryOrFail("nconnect", dir, results));
}

sim::Scenario Resolve(const NconnectOptions& o) {
  auto s = ResolveScenario(o.scenario);
  if (!s.ok()) Fail("nconnect", s.status());
  return *s;
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
  if (!speed.ok()) Fail("nconnect", speed.status());
  auto r = sim::Simulate(s);  // deterministic: the same result as the timed run
  if (!r.ok()) Fail("nconnect", r.status());
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
    if (!parsed.ok()) Fail("nconnect", parsed.status());
    shard = *parsed;
  }
  sim::SweepGrid grid = o.quick ? sim::SweepGrid::Quick() : sim::SweepGrid::Default();
  const int64_t grid_ops = grid.base.ops;
  grid.base = base;
  if (!o.scenario.s.ops || o.scenario.s.ops == sim::Scenario().ops) grid.base.ops = grid_ops;
  const std::string dir = o.out_dir.empty() ? render::DefaultOutDir() : o.out_dir;
  common::Status st = common::MakeDirectories(dir);
  if (!st.ok()) Fail("nconnect", st);
  harness::RunResults results = NewRunResults();
  std::cout << "nconnect sweep of " << grid.size() << " scenarios"
            << (!shard.Whole() ? ", shard " + o.shard : std::string()) << " ..." << std::flush;
  st = suite::RunNconnectSweep(grid, "flags of this command (default: sim/scenario.h)", o.threads,
                               results, std::cout, shard);
  std::cout << "\n";
  if (!st.ok()) Fail("nconnect", st);
  Write(dir, results);
}

// --validate: the simulator against the real client and server on loopback
// (suite/nconnect_validation.h); writes the run directory into --out.
void RunValidateCommand(NconnectOptions& o) {
  const suite::ValidationOptions options = suite::ValidationOptions::ForGrid(o.full);
  // The points first: a --points or --shard that holds none is refused
  // before anything is created.
  auto selection = suite::SelectValidationPoints(o.full, o.points, o.shard, options);
  if (!selection.ok()) Fail("nconnect", selection.status());
  const std::string dir = o.out_dir.empty() ? render::DefaultOutDir() : o.out_dir;
  common::Status st = common::MakeDirectories(dir);
  if (!st.ok()) Fail("nconnect", st);
  harness::RunResults results = NewRunResults();
  harness::ModeEnvironment env;
  std::cout << "nconnect validation of " << selection->points.size() << " point(s) on loopback ..."
            << std::flush;
  suite::ValidationRun run =
      suite::RunValidationSelection(env, *selection, options, results, std::cout);
  std::cout << "\n";
  Write(dir, results);
  if (o.full) {
    // The wide grid's report is hundreds of rows: the verdict here, the rest in the file.
    std::cout << "\n"
              << run.Verdicts().ToString() << " of " << run.outcomes.size()
              << " scenarios (every point, the diagnoses and the plots: " << dir << "/report.md)\n";
  } else if (auto md = render::ValidationMarkdown(results); md.ok() && !md->empty()) {
    std::cout << "\n" << *md;
  }
  if (!run.status.ok()) Fail("nconnect", run.status);
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
  if (!calibration.ok()) Fail("nconnect", calibration.status());
  calibration->ApplyTo(base);
  std::string measured = calibration->Description();
  if (!o.given_cores) measured += "  cores: this machine's (--cores for the client's own)\n";
  common::Status valid = base.Validate();
  if (!valid.ok()) Fail("nconnect", valid);
  auto rec = sim::Recommend(base, o.max_slots, o.seeds);
  if (!rec.ok()) Fail("nconnect", rec.status());
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
  AddScenarioFlags(cmd, o->scenario);
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
      Fail("nconnect",
           common::Status::InvalidArgument("--sweep, --recommend and --validate: choose one"));
    }
    if (!o->shard.empty() && !o->sweep && !o->validate) {
      Fail("nconnect", common::Status::InvalidArgument("--shard: only with --sweep or --validate"));
    }
    if ((o->full || !o->points.empty()) && !o->validate) {
      Fail("nconnect",
           common::Status::InvalidArgument("--full and --points: only with --validate"));
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
