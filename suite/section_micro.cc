// Section "micro": every mode of the run, its four legs (client-seal,
// server-open, server-seal, client-open) at every size, into
// RunResults::micro. The repetitions are spread over the section: round r
// measures the r-th repetition of every figure (modes in turn, starting one
// mode further on each round), so the machine's state of any one minute
// reaches every mode alike and the ratios between modes hold from run to run.
// A mode that fails is recorded in "errors" with the leg and size where it
// failed, and the other modes go on. Interrupted (suite/suite.h), it measures
// no further round: the figures are what the rounds so far measured, and
// "errors" says how many rounds that was.
#include <iterator>
#include <memory>

#include "harness/measure.h"
#include "suite/section.h"

namespace secmode::suite {

size_t MicroRounds(const SectionContext& ctx) {
  return MicroMeasureOptions(ctx.options).repetitions;
}

double PlannedMicroSecondsPerRound(const SectionContext& ctx) {
  const harness::MeasureOptions o = MicroMeasureOptions(ctx.options);
  return static_cast<double>(ctx.modes.size() * ctx.sizes.size() * std::size(common::kAllLegs)) *
         o.min_seconds / static_cast<double>(o.repetitions);
}

namespace {

// Tells the run's progress that round `i` started, and that it finished when
// this goes out of scope.
struct RoundStep {
  RoundStep(const SectionContext& ctx, size_t i)
      : progress(ctx.progress), step(ctx.first_step + i) {
    if (progress) progress->Started(step);
  }
  ~RoundStep() {
    if (progress) progress->Finished(step);
  }
  ProgressListener* progress;
  size_t step;
};

// One mode's association and a meter per size and leg; `failed` once one of
// them failed (the mode is then left out of the rows).
struct ModeMeters {
  harness::ModeName name;
  std::unique_ptr<common::Association> association;  // the meters point into it
  std::vector<harness::LegMeter> meters;             // sizes x legs, in that order
  bool failed = false;
};

void RecordFailure(SectionContext& ctx, ModeMeters& mode, const harness::LegMeter* meter,
                   common::Leg leg, size_t size, const common::Status& s) {
  mode.failed = true;
  ctx.log << " " << mode.name.ToString() << " failed";
  nlohmann::json e = {{"mode", mode.name.ToString()}};
  if (meter) {
    ctx.log << " at " << common::LegName(leg) << " size " << size;
    e["leg"] = common::LegName(leg);
    e["size"] = size;
  }
  ctx.log << ": " << s.ToString() << ";";
  e["error"] = s.ToString();
  ctx.results.errors.push_back(std::move(e));
}

// The associations and their meters; a mode that cannot be set up is an error.
std::vector<ModeMeters> SetUp(SectionContext& ctx, const harness::MeasureOptions& mopts) {
  std::vector<ModeMeters> modes;
  for (const auto& name : ctx.modes) {
    ModeMeters& mode = modes.emplace_back();
    mode.name = name;
    auto made = harness::MakeAssociation(name, ctx.env);
    if (!made.ok()) {
      ctx.log << "setting up";
      RecordFailure(ctx, mode, nullptr, common::Leg::kClientSeal, 0, made.status());
      ctx.log << "\n";
      continue;
    }
    mode.association = std::make_unique<common::Association>(std::move(made).value());
    for (size_t size : ctx.sizes) {
      for (common::Leg leg : common::kAllLegs) {
        auto meter = harness::LegMeter::Make(*mode.association, leg, size, mopts);
        if (!meter.ok()) {
          RecordFailure(ctx, mode, nullptr, leg, size, meter.status());
          break;
        }
        mode.meters.push_back(std::move(meter).value());
      }
      if (mode.failed) break;
    }
  }
  return modes;
}

// The r-th repetition of every figure of every mode still standing.
void Round(SectionContext& ctx, std::vector<ModeMeters>& modes, size_t r) {
  for (size_t k = 0; k < modes.size(); ++k) {
    ModeMeters& mode = modes[(k + r) % modes.size()];
    if (mode.failed) continue;
    for (size_t j = 0; j < mode.meters.size(); ++j) {
      const size_t size = ctx.sizes[j / std::size(common::kAllLegs)];
      const common::Leg leg = common::kAllLegs[j % std::size(common::kAllLegs)];
      if (common::Status s = mode.meters[j].Repetition(); !s.ok()) {
        RecordFailure(ctx, mode, &mode.meters[j], leg, size, s);
        break;
      }
    }
  }
}

}  // namespace

common::Status RunMicroSection(SectionContext& ctx) {
  const harness::MeasureOptions mopts = MicroMeasureOptions(ctx.options);
  if (const int sig = InterruptSignal(ctx.options)) {
    for (const auto& name : ctx.modes) {
      ctx.results.errors.push_back(InterruptedError("mode", name.ToString(), sig, "not measured"));
    }
    return common::Status::Ok();
  }
  ctx.log << "measuring " << ctx.modes.size() << " modes, their repetitions in "
          << mopts.repetitions << " rounds\n";
  std::vector<ModeMeters> modes = SetUp(ctx, mopts);
  size_t rounds = 0;
  for (; rounds < mopts.repetitions; ++rounds) {
    if (InterruptSignal(ctx.options)) break;
    const RoundStep step(ctx, rounds);
    ctx.log << "measuring round " << rounds + 1 << " of " << mopts.repetitions << " ..."
            << std::flush;
    Round(ctx, modes, rounds);
    ctx.log << " done\n";
  }
  if (rounds == 0) {  // interrupted while setting up
    const int sig = InterruptSignal(ctx.options);
    for (const auto& name : ctx.modes) {
      ctx.results.errors.push_back(InterruptedError("mode", name.ToString(), sig, "not measured"));
    }
    return common::Status::Ok();
  }
  if (rounds < mopts.repetitions) {
    ctx.results.errors.push_back(InterruptedError(
        "section", "micro", InterruptSignal(ctx.options),
        "measured " + std::to_string(rounds) + " of " + std::to_string(mopts.repetitions) +
            " rounds, so each figure rests on " + std::to_string(rounds) + " of its " +
            std::to_string(mopts.repetitions) + " repetitions"));
  }
  for (ModeMeters& mode : modes) {
    if (mode.failed) continue;
    for (size_t j = 0; j < mode.meters.size(); ++j) {
      const size_t size = ctx.sizes[j / std::size(common::kAllLegs)];
      const common::Leg leg = common::kAllLegs[j % std::size(common::kAllLegs)];
      auto m = mode.meters[j].Result();
      if (!m.ok()) return m.status();
      const common::Association& a = *mode.association;
      ctx.results.micro.push_back({a.mode, a.engine, a.enctype, common::LegName(leg), size, 1, *m});
    }
  }
  return common::Status::Ok();
}

}  // namespace secmode::suite
