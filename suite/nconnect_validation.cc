#include "suite/nconnect_validation.h"

#include <algorithm>
#include <chrono>

#include "common/format.h"
#include "harness/sched_probe.h"

namespace secmode::suite {

using common::Status;

namespace {

// How many calibration passes come just before round `round` of `rounds`:
// pass j of `passes` (the first, j = 0, before every round, in
// Calibrate and PreparePoint) comes before round j * rounds / passes.
int PassesBeforeRound(int round, int rounds, int passes) {
  int n = 0;
  for (int j = 1; j < passes; ++j) n += j * rounds / passes == round;
  return n;
}

}  // namespace

ValidationRun RunValidation(harness::ModeEnvironment& env, const std::vector<ValidationPoint>& grid,
                            const ValidationOptions& options, std::ostream& log) {
  const auto t0 = std::chrono::steady_clock::now();
  ValidationRun run;
  run.options = options;
  auto calibration = Calibrate(env, options);
  if (!calibration.ok()) {
    run.status = calibration.status().Annotate("nconnect validation calibration");
    return run;
  }
  run.calibration = *calibration;
  // The scheduler probe, once per thread count of the grid (a receiver and
  // a server thread per connection).
  for (const ValidationPoint& p : grid) {
    const int threads = 2 * p.scenario.nconnect;
    if (!options.thread_model || run.calibration.probes.count(threads)) continue;
    auto probe = harness::ProbeSchedulerFor(threads);
    if (!probe.ok()) {
      run.status = probe.status().Annotate("scheduler probe");
      return run;
    }
    run.calibration.probes.emplace(threads, *probe);
  }
  // Each point checked and calibrated; then its real runs, one round of
  // every point at a time; then each simulated and judged.
  std::vector<PendingPoint> pending;
  for (const ValidationPoint& p : grid) {
    auto prepared = PreparePoint(env, p, run.calibration, options);
    if (!prepared.ok()) {
      // The other points still run; the first failure is the run's.
      log << "\n  validation " << p.name << " failed: " << prepared.status().ToString();
      if (run.status.ok()) run.status = prepared.status();
      continue;
    }
    pending.push_back(std::move(prepared).value());
  }
  std::vector<bool> failed(pending.size(), false);
  auto fail = [&](size_t i, const Status& st) {
    failed[i] = true;
    log << "\n  validation " << pending[i].out.point.name << " failed: " << st.ToString();
    if (run.status.ok()) run.status = st;
  };
  // The calibration's further passes, spread over the rounds: its waits
  // and every point's own runs, each figure the median of the passes. A
  // pass that fails ends the passes, not the runs: the model takes the
  // passes made, and the run's status says what failed.
  const int rounds = std::max(1, options.runs), passes = std::max(1, options.calibration_passes);
  std::vector<Calibration> wait_passes = {run.calibration};
  bool passes_failed = false;
  for (int round = 0; round < rounds; ++round) {
    for (int k = PassesBeforeRound(round, rounds, passes);
         k > 0 && !pending.empty() && !passes_failed; --k) {
      log << "\n  calibration pass " << wait_passes.size() + 1 << " of " << passes << " ..."
          << std::flush;
      Calibration again = run.calibration;
      if (Status st = MeasureWaits(env, options, again); !st.ok()) {
        st = st.Annotate("nconnect validation calibration pass " +
                         std::to_string(wait_passes.size() + 1));
        log << "\n  " << st.ToString() << "; the model takes the passes before it";
        if (run.status.ok()) run.status = st;
        passes_failed = true;
        break;
      }
      wait_passes.push_back(std::move(again));
      for (size_t i = 0; i < pending.size(); ++i) {
        if (failed[i]) continue;
        if (const Status st = MeasurePointPass(env, options, pending[i]); !st.ok()) fail(i, st);
      }
    }
    log << "\n  validation runs, round " << round + 1 << " of " << rounds << " ..." << std::flush;
    for (size_t i = 0; i < pending.size(); ++i) {
      if (failed[i]) continue;
      if (const Status st = RunPointOnce(env, options, pending[i]); !st.ok()) fail(i, st);
    }
  }
  if (const Status st = TakeMedianWaits(wait_passes, options, run.calibration); !st.ok()) {
    // Only the model's one-call check can fail here; the medians are taken.
    log << "\n  " << st.ToString();
    if (run.status.ok()) run.status = st.Annotate("nconnect validation calibration");
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    if (failed[i]) continue;
    ValidationOutcome o = FinishPoint(std::move(pending[i]), run.calibration, options);
    log << "\n  validation " << o.point.name << ": " << VerdictName(o.verdict.verdict)
        << (o.verdict.shared ? " (machine shared: other processes ran " +
                                   common::Fmt("%.0f%%", 100 * o.verdict.others_fraction) +
                                   " of the machine's CPU time in its runs)"
                             : std::string())
        << "; " << o.comparison.detail;
    run.outcomes.push_back(std::move(o));
  }
  run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

namespace {

nlohmann::json MeasuredRunsJson(const std::vector<sim::ScenarioResult>& runs) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : runs) rows.push_back(r.ToJson());
  return rows;
}

// The model's seeds: each one's violations and goodput, and what the
// comparison took from them (the means, the violations scaled as the
// measured ones are).
nlohmann::json SeedsJson(const ValidationOutcome& o) {
  nlohmann::json violations = nlohmann::json::array(), ops = nlohmann::json::array();
  for (const auto& r : o.simulated_seeds) {
    violations.push_back(r.violations);
    ops.push_back(r.ops_per_s);
  }
  return {{"seeds", o.simulated_seeds.size()},
          {"violations", violations},
          {"ops_per_s", ops},
          {"violations_mean", o.comparison.simulated_violations},
          {"violations_min", o.comparison.simulated_violations_min},
          {"violations_max", o.comparison.simulated_violations_max},
          {"ops_per_s_mean", o.comparison.simulated_ops_per_s}};
}

}  // namespace

std::vector<nlohmann::json> ValidationRun::JsonRows() const {
  std::vector<nlohmann::json> rows;
  for (const auto& o : outcomes) {
    rows.push_back(
        {{"kind", "validation"},
         {"name", o.point.name},
         {"grid_index", o.point.grid_index},
         {"asserted", o.point.asserted},
         {"assert_goodput", o.point.assert_goodput},
         {"note", o.point.note},
         {"scenario", o.row.scenario.ToJson()},
         {"simulated", o.row.simulated.ToJson()},
         {"measured", o.row.measured.ToJson()},
         {"measured_runs", MeasuredRunsJson(o.measured_runs)},
         {"simulated_seeds", SeedsJson(o)},
         {"reruns", {{"measured", o.rerun_measured}, {"no_violation", o.rerun_calibration}}},
         {"violations_measured_min", o.comparison.measured_violations_min},
         {"violations_measured_max", o.comparison.measured_violations_max},
         {"transport", "tcp-loopback"},
         {"verdict", VerdictName(o.verdict.verdict)},
         {"verdict_intervals", o.verdict.ToJson()},
         {"violations_agree", o.comparison.violations_agree},
         {"goodput_agree", o.comparison.goodput_agree},
         {"goodput_ratio", o.comparison.goodput_ratio},
         {"detail", o.comparison.detail},
         {"diagnosis", o.diagnosis},
         {"simulation_error", o.simulation_error},
         {"calibration", o.calibration.ToJson()}});
    if (options.trace) {
      rows.back()["attribution"] = o.attribution.ToJson();
      if (o.reconnects.reconnects > 0) rows.back()["reconnects"] = o.reconnects.ToJson();
      if (o.recreations.count > 0) rows.back()["recreations"] = o.recreations.ToJson();
      if (o.resumes.count > 0) rows.back()["resumes"] = o.resumes.ToJson();
    }
    if (!o.ablation.empty()) {
      nlohmann::json ablation = nlohmann::json::array();
      for (const auto& a : o.ablation) {
        ablation.push_back({{"without", a.name}, {"simulated", a.result.ToJson()}});
      }
      rows.back()["ablation"] = ablation;
    }
  }
  return rows;
}

VerdictCounts ValidationRun::Verdicts() const {
  VerdictCounts counts;
  for (const auto& out : outcomes) counts.Add(out.verdict.verdict);
  return counts;
}

void PutValidation(const ValidationRun& run, harness::RunResults& results) {
  for (auto& row : run.JsonRows()) results.nconnect.push_back(std::move(row));
  if (!run.outcomes.empty()) results.sections["nconnect-validation"] = run.SectionJson();
}

ValidationRun RunValidationSelection(harness::ModeEnvironment& env,
                                     const ValidationSelection& selection,
                                     const ValidationOptions& options, harness::RunResults& results,
                                     std::ostream& log) {
  ValidationRun run = RunValidation(env, selection.points, options, log);
  // What ran is written even when a point failed.
  PutValidation(run, results);
  if (!run.outcomes.empty()) {
    nlohmann::json& section = results.sections["nconnect-validation"];
    section["grid"] = selection.GridJson(options);
    if (!selection.shard.Whole()) section["shard"] = selection.shard.ToJson(selection.grid_points);
  }
  if (!run.status.ok()) {
    results.errors.push_back(
        {{"section", "nconnect-validation"}, {"error", run.status.ToString()}});
  }
  return run;
}

nlohmann::json ValidationRun::SectionJson() const {
  const sim::Tolerance tol;
  int64_t measured = 0, no_violation = 0;
  for (const ValidationOutcome& o : outcomes) {
    measured += o.rerun_measured;
    no_violation += o.rerun_calibration;
  }
  return {{"mode", options.mode},
          {"calm_runs",
           {{"max_steal", kCalmSteal},
            {"max_others", kCalmSteal},
            {"attempts", kCalmAttempts},
            {"rerun_measured", measured},
            {"rerun_no_violation", no_violation}}},
          {"server_workers", options.server_workers},
          {"runs", options.runs},
          {"model_seeds", options.model_seeds},
          {"calibration_passes", options.calibration_passes},
          {"thread_model", options.thread_model},
          {"ops", options.ops},
          {"calibration", calibration.ToJson()},
          {"tolerance",
           {{"violation_factor", tol.violation_factor},
            {"violation_slack", tol.violation_slack},
            {"goodput_factor", tol.goodput_factor},
            // Where the model says zero (sim/compare.h); a results.json
            // without it took every run.
            {"model_zero", "median run"}}},
          {"verdicts", Verdicts().ToJson()},
          {"wall_seconds", wall_seconds}};
}

}  // namespace secmode::suite
