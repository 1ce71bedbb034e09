// Validation of the nconnect simulator against real sockets: each scenario of a grid runs
// ValidationOptions::runs times on the real RPCSEC_GSS krb5p TCP client (rpc::RunLoad) against
// the in-process server (rpc::LocalServer) on loopback with the scenario's window and reaction,
// its runs interleaved with the other scenarios' (round r makes run r of every point, so each
// point's runs are spread over the whole validation), and with ValidationOptions::model_seeds
// seeds in the simulator (sim::Simulate) fed with what this machine measured:
// the per-message crypto cost of the krb5p legs, the loopback round trip and
// the non-crypto CPU cost per call. sim::CompareToRuns takes the rule's figures, and
// the point's verdict (suite/nconnect_validation_verdict.h) is three-valued over the
// runs' spread: agrees, disagrees or undecided.
//
// Mapping (Scenario -> real run): nconnect -> connections, slots -> slots,
// per_connection_context -> context_per_connection, reencode -> reencode,
// skew_conn/skew_ns (SkewWhere::kClient) -> skew_connection/skew_delay_us
// (the client holds each of that connection's calls after encoding it),
// ops -> max_ops, window/reaction -> ServerOptions; the server runs a thread
// per connection (model: min(nconnect, cores) threads, ServerOrder::
// kRoundRobin) and the model resends a lost connection's calls round-robin
// (Scenario::resend_any_connection), as RunLoad does. The non-crypto cost per
// call comes from a sys-mode run of the same connections and slots just
// before each row; the crypto cost from the mode's four legs (MeasureLeg).
// Real run -> ScenarioResult: violations = the server's below_window count,
// drops = below_window + duplicates, disconnects and context re-creations as
// the client counted them, ops/s, MB/s and p50/p99 as RunLoad measured them.
//
// Results: rows for RunResults::nconnect (each with "kind": "validation") and
// the run's calibration and rule for sections["nconnect-validation"]; the
// report table is drawn from them by render/.
//
// Thread safety: one validation at a time per process (it uses the process's
// one Realm through the ModeEnvironment).
#ifndef SECMODE_SUITE_NCONNECT_VALIDATION_H_
#define SECMODE_SUITE_NCONNECT_VALIDATION_H_

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "common/stats.h"
#include "common/status.h"
#include "harness/modes.h"
#include "harness/results.h"
#include "harness/sched_probe.h"
#include "rpc/load.h"
#include "sim/compare.h"
#include "sim/scenario.h"
#include "suite/nconnect_attribution.h"
#include "suite/nconnect_validation_verdict.h"
#include "suite/shard.h"

namespace secmode::suite {

// One grid point. `asserted` points are the ones whose prediction is
// clear-cut (zero by construction, or clearly many): the test requires
// agreement on them. The others are reported only, with `note` saying why.
struct ValidationPoint {
  std::string name;
  // Its place in the grid it was chosen from (after --points): a shard
  // (suite/shard.h) runs the points whose index it holds, and the row
  // carries it ("grid_index") for suite/merge.h.
  size_t grid_index = 0;
  sim::Scenario scenario;
  bool asserted = true;
  bool assert_goodput = true;  // only with `asserted`
  std::string note;
};

// The default grid: nconnect 4, window 32, drop-disconnect, 4 KiB READ,
// one shared context at slots {8, 16, 128} without skew and {16, 32, 128}
// with a 10 ms hold on one connection, and per-connection contexts at
// {16, 128} slots with the hold (model: zero); `ops` operations each.
std::vector<ValidationPoint> DefaultValidationGrid(int64_t ops = 2000);

// The wide grid (`secmode run --full`, `secmode nconnect --validate --full`):
// nconnect {2, 4, 8} x slots {8, 16, 32, 64, 128, 256} x window {32, 128} x
// skew {0, 1 ms, 10 ms} on connection 0 x reaction {drop, drop-disconnect,
// discard-context} x {shared, per-connection} contexts, 4 KiB READ, `ops`
// operations each: 648 points, none asserted. None is pruned: no
// combination is redundant by construction (even with one context per
// connection the real client can reorder a connection's calls, so every
// reaction can matter, and the skew changes the goodput everywhere).
std::vector<ValidationPoint> WideValidationGrid(int64_t ops = 2000);
// "wide grid (N points, R real runs each) instead of the default M points",
// from the grids themselves (for --help).
std::string ValidationGridChoice();

// What the simulator is fed, measured on this machine (none of it fitted to
// the validation points).
struct Calibration {
  // Crypto per message: the mode's four legs (one thread, tight loop),
  // which split a call's CPU between its request and reply sizes.
  double cost_fixed_ns = 0, cost_ns_per_byte = 0;  // mean of the 4 legs
  double leg_ns_small = 0, leg_ns_4k = 0;          // mean leg cost at 0 B and 4 KiB
  int64_t client_crypto_ns = 0;                    // client seal + open of one 4 KiB READ
  // Thread model. The machine: its cores, and per thread count the
  // scheduler probe (harness/sched_probe.h) whose median run between two
  // deschedulings is the model's time slice.
  int cores = 0;
  std::map<int, harness::SchedProbe> probes;  // key: threads (2 x nconnect)
  // Wakeup preemption: the wakeup probe's p10 run of a busy thread among
  // waking ones (harness/sched_probe.h).
  harness::WakeupProbe wakeup;
  int64_t wakeup_preempt_ns = 0;
  // Waking an idle core: the probe's curve by idle time (harness/sched_probe.h),
  // the model's Scenario::idle_wake_after_ns and idle_wake_curve_ns, and its
  // wakeup after the longest idle, Scenario::idle_wake_ns.
  harness::IdleWakeCurve idle_wake;
  int64_t idle_wake_ns = 0;
  // Waking a busy core: the probe (harness/sched_probe.h), whose quantiles
  // are the model's Scenario::busy_wake_ns.
  harness::CoreWakeProbe busy_wake;
  // Who waits first after a wakeup: the probe, whose share is the model's
  // Scenario::woken_first_share.
  harness::WakeOrderProbe wake_order;
  // Pauses of a busy core no modelled thread causes: the probe
  // (harness::ProbeMachinePauses) and what the model takes from it
  // (Scenario::pause_per_s, pause_ns).
  harness::SchedProbe pauses;
  double pause_per_s = 0;
  std::vector<int64_t> pause_ns;
  // Per point: of the machine's CPU time in its real runs, the hypervisor's
  // (its ticks over all the runs added up before one division, as
  // common::StealShare's; -1 unknown). The host this runs on
  // is shared, and what it takes differs from run to run and from the pause
  // probe's moment, so the point's model is paused for that share
  // (harness::PausePerSWithSteal): the simulation compares with runs made
  // on the machine as the runs had it, not as the probe did.
  double runs_steal_fraction = -1;
  // Waits the thread model is given are timed with every core kept awake
  // (harness::CoresAwake): the model adds the wakeup of an idle core
  // (idle_wake_ns) itself wherever its cores are idle, so a wait timed on
  // idle cores would count those wakeups twice. The same waits timed on
  // idle cores are kept beside them (`*_idle_ns`); the model without
  // threads has no idle cores and takes those.
  // The loopback's round trip: sys READ, 1 connection, 1 slot, p50 minus
  // both ends' CPU per call, cores awake (thread model; else idle).
  int64_t net_rtt_ns = 0;
  int64_t net_rtt_idle_ns = 0;
  // Whether the awake figures were measured (CoresAwake needs root); if
  // not, why, and the model takes the idle ones.
  bool cores_awake = false;
  std::string cores_awake_error;
  // That run: its p50 on idle and on awake cores, both ends' CPU per call
  // (idle pass), and the thread model's p50 of the same run
  // (ModelOneCall), a check of the model against its own calibration.
  int64_t one_call_p50_ns = 0, one_call_awake_p50_ns = 0;
  int64_t one_call_client_ns = 0, one_call_server_ns = 0;
  int64_t one_call_model_p50_ns = 0;
  // A NULL call on a fresh connection minus the same on an established one
  // (medians): what a reconnect costs beyond its round trip (the server
  // accepts and starts a connection thread); cores awake, and idle.
  int64_t reconnect_ns = 0;
  int64_t reconnect_idle_ns = 0;
  // The CPU this process (client and in-process server) spends per
  // reconnect beyond an established call, and of it the client's part (the
  // reconnecting thread's own CPU). The model's Scenario::reconnect_cpu_ns
  // takes the client's part up to reconnect_ns, and
  // Scenario::reconnect_server_cpu_ns the rest, the server's.
  int64_t reconnect_cpu_ns = 0;
  int64_t reconnect_client_cpu_ns = 0;
  // Re-creating a context as the load generator does (a short connection,
  // the INIT exchange), median wall time, less net_rtt_ns: what it costs
  // beyond one round trip. Each one is timed right after a burst of the
  // mode's own load (kGssSetupBurstSeconds), as a re-creation under load comes
  // right after the calls it interrupts: the load has left its own working
  // set in the caches, not the GSS exchange's (the traced real runs'
  // re-creations took longer than back-to-back ones on a quiet machine).
  int64_t gss_setup_ns = 0;
  int64_t gss_setup_idle_ns = 0;  // the same on idle cores
  // The CPU this process (client and in-process server) spent meanwhile,
  // median; the model's Scenario::gss_setup_cpu_ns takes it up to
  // gss_setup_ns.
  int64_t gss_setup_cpu_ns = 0;
  // The same creations back to back, no load between them, timed as
  // gss_setup_ns is (cores awake when they can be): the ablation's
  // "context creation as on a quiet machine".
  int64_t gss_setup_quiet_ns = 0;
  int64_t gss_setup_quiet_cpu_ns = 0;
  static constexpr int kGssSetupRounds = 20;  // contexts created for those medians
  // The waits above (MeasureWaits) are timed once per calibration pass,
  // spread over the validation's rounds, and each is the median of the
  // passes (TakeMedianWaits): how many passes that was.
  int wait_passes = 1;
  // The burst before each (loopback::RunSetupBurst): this many connections
  // and calls outstanding, a window no call can fall below, for at least
  // this long and until each call outstanding was answered once; it fails
  // only when no call is answered at all (loopback::kRunDeadlineSeconds),
  // never for a server slower than the burst is long.
  static constexpr int kGssSetupBurstConnections = 2;
  static constexpr int kGssSetupBurstSlots = 64;
  static constexpr double kGssSetupBurstSeconds = 0.02;
  // and then this long for the burst's connections to end.
  static constexpr int kGssSetupSettleMs = 5;
  // Per point: CPU per call of each end, measured per thread in a run of the
  // mode at the point's connections, slots, contexts and skew with a window
  // wider than the slots (so no violation can happen), and what remains of
  // it besides the crypto the model adds (the model's client_call_ns and
  // service_ns); with a skew, also the delay-line thread's CPU per call it
  // wrote (the model's skew_sender_ns; 0 without a skew).
  double client_cpu_ns = 0, server_cpu_ns = 0, no_violation_ops_per_s = 0;
  int64_t skew_sender_ns = 0;
  int64_t client_call_ns = 0, server_call_ns = 0, slice_ns = 0;
  // The same runs' socket reads per call (recv() calls that returned bytes,
  // client receivers and server threads).
  double client_reads_per_call = 0, server_reads_per_call = 0;
  // Thread model: the CPU of one socket read (the model's client_read_ns
  // and server_read_ns), the read probe: the mode on kReadProbeConnections
  // connections at each of kReadProbeSlots calls outstanding, no violation
  // possible, kReadProbeRuns runs each; per slot count the runs' median CPU
  // per call and reads per call at each end, and the least-squares line of
  // CPU per call against reads per call through them (common::FitLine):
  // its slope is the CPU a read costs. A point's CPU per call less its
  // reads' CPU is what the model spends per call. 0 where the line cannot
  // tell (no fit, or a slope that is not positive). Several loads, not two:
  // with one call outstanding per connection the CPU per call of one run
  // can be twice that of the next on the same machine (two cores that idle
  // between calls wake in very different ways), so a slope from two runs
  // moves with that luck.
  int64_t client_read_ns = 0, server_read_ns = 0;
  static constexpr int kReadProbeConnections = 2;
  static constexpr int kReadProbeSlots[] = {2, 4, 8, 16, 32, 64};
  static constexpr int kReadProbeRuns = 3;
  static constexpr double kReadProbeSeconds = 0.3;
  struct ReadProbePoint {
    int slots = 0;
    double client_reads = 0, server_reads = 0;    // per call, median of the runs
    double client_cpu_ns = 0, server_cpu_ns = 0;  // per call, median of the runs
  };
  std::vector<ReadProbePoint> read_probe;
  common::LineFit client_read_fit, server_read_fit;
  // The model without threads (ablation "no thread model"): sys-mode runs
  // give the non-crypto time per call, folded into the server's service time.
  int64_t rtt_ns = 0;        // sys-mode READ, 1 connection, 1 slot: p50 minus sys_ns
  double sys_ops_per_s = 0;  // sys-mode READ at the point's connections and slots
  int64_t sys_ns = 0;        // server threads / sys ops/s: non-crypto time per call
  int64_t service_ns = 0;    // sys_ns + client_crypto_ns
  nlohmann::json ToJson() const;
  nlohmann::json ReadProbeJson() const;
};

struct ValidationOptions {
  // The engine at both ends is secmode's native one: its crypto on one
  // shared context runs in parallel on the connections' threads, as the
  // Linux kernel's does (only the counter and the window are serialised).
  // MIT's contexts are not safe for concurrent use, so with mit every seal
  // and open of the shared context takes one lock; threads that sleep on it
  // leave cores idle, a cost of the tool the model rightly does not have.
  std::string mode = "krb5p:aes256-cts-hmac-sha1-96:native";
  // The LocalServer's worker threads; 0 = a thread per connection reads,
  // checks and answers its own calls (model: server_threads = nconnect,
  // ServerOrder::kRoundRobin). With workers, calls already queued from a
  // connection the server condemned are still checked (and counted), which
  // the model does not do; so the default is 0.
  int server_workers = 0;
  int64_t ops = 2000;
  // Trace every call at both ends and attribute each violation to the
  // delay that caused it (suite/nconnect_attribution.h).
  bool trace = true;
  // Simulate with threads and cores (sim::Scenario::thread_model); off: the
  // model without them.
  bool thread_model = true;
  // Also simulate each point with one mechanism off at a time.
  bool ablation = true;
  // Real runs per point, interleaved across the points: the model is held
  // against the confidence interval of their median (PointVerdict). Nine:
  // the second smallest to the second largest holds the median with 0.96,
  // and one run out of nine moves no verdict.
  int runs = 9;
  // The model runs each point with this many seeds (the point's seed and the
  // next ones); their mean is held against the real runs (sim::CompareToRuns).
  // The traces, stages and ablation are the first seed's.
  int model_seeds = 5;
  // What the model is fed is measured this many times, spread over the
  // rounds (the first before them), and each figure is the median of the
  // passes: the calibration's waits (MeasureWaits) and each point's own
  // runs (MeasurePointPass). Measured once, a reconnect's or a context's
  // cost moves from one validation to the next as much as the real runs
  // do, and the model's prediction with it. The scheduler probes, the leg
  // costs and the read probe are measured once.
  int calibration_passes = 3;
  // The options of the default grid, or of the wide one (`wide`): 3 runs a
  // point and one calibration pass there, as 648 points would take three
  // times as long; the range of 3 holds the median with 0.75, which each
  // row's verdict says.
  static ValidationOptions ForGrid(bool wide);
  static constexpr int kWideGridRuns = 3;
};

// One simulated variant of a point with a mechanism off.
struct AblationRow {
  std::string name;  // "no batching", "no descheduling", "no thread model"
  sim::ScenarioResult result;
};

// A real run of the validation (a point's runs and its no-violation run)
// during which the hypervisor took kCalmSteal or more of the machine's CPU
// time (StealFraction) is made again, up to kCalmAttempts times in all; the
// last attempt is kept whatever it saw. On a shared host such a run also
// spends more CPU per call than a calm one, which no pause in the model
// stands for; the model is still paused
// for the steal of the runs kept (Calibration::runs_steal_fraction). The
// criterion is the kernel's, never the outcome's. Where other processes
// ran kCalmSteal or more of the CPU time during a point's runs (all of them
// together), the point is undecided (HoldShared).
inline constexpr double kCalmSteal = 0.10;
inline constexpr int kCalmAttempts = 4;

struct ValidationOutcome {
  ValidationPoint point;
  sim::ValidationRow row;
  sim::Comparison comparison;
  rpc::LoadReport load;
  Attribution attribution;    // of the first real run, with ValidationOptions::trace
  ReconnectTimes reconnects;  // of the same run: how its closed connections were replaced
  SetupStep recreations;      // of the same run: how long its context re-creations took
  SetupStep resumes;          // and how soon its receivers numbered calls after each
  std::vector<AblationRow> ablation;
  std::vector<sim::ScenarioResult> measured_runs;  // every real run; row.measured is the median
  // The model's run per seed (ValidationOptions::model_seeds); row.simulated
  // is the first.
  std::vector<sim::ScenarioResult> simulated_seeds;
  // Real runs made again (kCalmSteal): of the point's runs, and of its
  // no-violation run.
  int rerun_measured = 0, rerun_calibration = 0;
  Calibration calibration;  // the run's, with this point's sys-mode run
  // The three-valued verdict over the real runs' spread
  // (suite/nconnect_validation_verdict.h); `comparison` holds the rule's
  // figures, and its two-valued *_agree the older reading (some run within
  // the limit).
  PointVerdict verdict;
  std::string diagnosis;  // empty when the point agrees; else Diagnose()
  // The simulator failed on this point's scenario (e.g. "no events left":
  // a model deadlock) or on one of its ablation variants: the point is kept,
  // with the error, instead of failing the whole section; with the main
  // scenario failed the point disagrees and its diagnosis says so.
  std::string simulation_error;
};

// Why a point disagrees, in words, from the evidence the point carries: how
// the simulated violations and goodput miss the measured ones, where the
// traced real violations were held (the attribution's largest causes) and
// where the model's were, and the disconnects and p99 of both.
std::string Diagnose(const ValidationOutcome& outcome);

struct ValidationRun {
  // The first failure (calibration or a point); the points that ran are in
  // `outcomes` either way.
  common::Status status;
  ValidationOptions options;
  Calibration calibration;
  std::vector<ValidationOutcome> outcomes;
  double wall_seconds = 0;
  // Rows for results.json `nconnect`, each with "kind": "validation".
  std::vector<nlohmann::json> JsonRows() const;
  // sections["nconnect-validation"]: mode, calibration, agreement rule, time.
  nlohmann::json SectionJson() const;
  // How many points agree, disagree and are undecided (PointVerdict).
  VerdictCounts Verdicts() const;
};

// The points `secmode nconnect --validate` runs: the default or the wide
// grid, of it the points whose names match `filter`, numbered in order
// (their grid_index: the grid a shard is a slice of), and of those the ones
// `shard` holds.
struct ValidationSelection {
  bool wide = false;
  std::string filter;  // an extended regular expression; "": every point
  Shard shard;         // the whole grid unless --shard
  size_t grid_points = 0;
  std::vector<ValidationPoint> points;  // the shard's, in grid order
  // sections["nconnect-validation"].grid: what the shards of one
  // validation share (suite/merge.h refuses shards of another grid).
  nlohmann::json GridJson(const ValidationOptions& options) const;
};

// `wide`, `filter` (--points) and `shard` ("I/N", --shard; "": the whole).
// Fails, naming the flag, on a filter that is not a regular expression or
// matches no point, a malformed shard, or a shard that holds no point.
common::Result<ValidationSelection> SelectValidationPoints(bool wide, const std::string& filter,
                                                           const std::string& shard,
                                                           const ValidationOptions& options);

// Server threads the model gets for `options` (workers, or one per connection).
int ServerThreads(const ValidationOptions& options, int nconnect);

// The run's calibration: its first pass, every figure measured.
common::Result<Calibration> Calibrate(harness::ModeEnvironment& env,
                                      const ValidationOptions& options);
// The waits of the calibration (the loopback's round trip, a reconnect, a
// context's re-creation after load and quiet: Calibration's one_call_*,
// net_rtt_*, reconnect_* and gss_setup_* figures) timed again into `c`.
common::Status MeasureWaits(harness::ModeEnvironment& env, const ValidationOptions& options,
                            Calibration& c);
// Each of those figures of `c` set to its median over `passes` (the
// figures they derive, and the model's one-call check, again from them).
common::Status TakeMedianWaits(const std::vector<Calibration>& passes,
                               const ValidationOptions& options, Calibration& c);

// The thread model's p50 of the calibration's one-call-at-a-time sys run
// (1 connection, 1 slot, 4 KiB READ, no crypto, each end's CPU per call as
// that run measured it): the model held against its own input. The
// measured p50s of that run on idle and on awake cores are beside it in
// the Calibration.
common::Result<int64_t> ModelOneCall(const Calibration& calibration,
                                     const ValidationOptions& options);

// The simulated scenario of a grid point: `point` with the calibration's
// costs, RTT, service time and the server's worker count.
sim::Scenario CalibratedScenario(const sim::Scenario& point, const Calibration& calibration,
                                 const ValidationOptions& options);

// One pass of a point's own calibration runs: each end's CPU per call,
// socket reads per call, the delay line's CPU per call and the rate of the
// mode at the point's connections, slots, contexts and skew with no
// violation possible; and the sys-mode rate at its connections and slots
// (the model without threads; 0 when not measured).
struct PointPass {
  double client_ns = 0, server_ns = 0, ops_per_s = 0;
  double client_reads = 0, server_reads = 0, sender_ns = 0;
  double sys_ops_per_s = 0;
};

// A point between the steps of its validation: checked and given its first
// calibration pass (PreparePoint), its real runs and further passes so far
// (RunPointOnce, MeasurePointPass), then calibrated from its passes,
// simulated and judged (FinishPoint). The steps let RunValidation
// interleave the points' real runs and passes, so that each point's runs
// and calibration are spread over the whole validation and their spread
// shows how the machine varied meanwhile.
struct PendingPoint {
  ValidationOutcome out;  // out.calibration: the run's, and the point's own scheduler probe
  rpc::LoadOptions load;  // what each real run runs, against its fresh server
  std::vector<PointPass> passes;
  std::vector<std::pair<rpc::LoadReport, sim::ScenarioResult>> runs;
};
common::Result<PendingPoint> PreparePoint(harness::ModeEnvironment& env,
                                          const ValidationPoint& point,
                                          const Calibration& calibration,
                                          const ValidationOptions& options);
// One real run of the point on real sockets (a fresh LocalServer with its
// window and reaction), made again while the hypervisor takes too much
// (kCalmSteal).
common::Status RunPointOnce(harness::ModeEnvironment& env, const ValidationOptions& options,
                            PendingPoint& point);
// One more pass of the point's calibration runs (PendingPoint::passes).
common::Status MeasurePointPass(harness::ModeEnvironment& env, const ValidationOptions& options,
                                PendingPoint& point);
// The point calibrated (the run's `calibration` with each of the point's
// figures the median of its passes), its model, the comparison and the
// verdict over its runs.
ValidationOutcome FinishPoint(PendingPoint point, const Calibration& calibration,
                              const ValidationOptions& options);

// All three steps for one point, its runs back to back.
common::Result<ValidationOutcome> RunValidationPoint(harness::ModeEnvironment& env,
                                                     const ValidationPoint& point,
                                                     const Calibration& calibration,
                                                     const ValidationOptions& options);

// Calibrates, then runs every point of `grid`; logs progress to `log`. The
// points' real runs are interleaved: round r makes run r of every point.
// A point that fails is logged and skipped; ValidationRun::status says so.
ValidationRun RunValidation(harness::ModeEnvironment& env, const std::vector<ValidationPoint>& grid,
                            const ValidationOptions& options, std::ostream& log);

// What `run` measured, into `results`: its rows (`nconnect`) and, when a
// point ran, its section (`sections["nconnect-validation"]`).
void PutValidation(const ValidationRun& run, harness::RunResults& results);

// `secmode nconnect --validate`: RunValidation of the selection's points,
// put into `results` (PutValidation) with the section's grid and shard
// ("grid", "shard": what suite/merge.h joins shards by) and the run's
// failure as an `errors` entry, as RunSuite records a section's.
ValidationRun RunValidationSelection(harness::ModeEnvironment& env,
                                     const ValidationSelection& selection,
                                     const ValidationOptions& options, harness::RunResults& results,
                                     std::ostream& log);

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_NCONNECT_VALIDATION_H_
