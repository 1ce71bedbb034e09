// Section "micro": every mode of the run, its four legs (client-seal,
// server-open, server-seal, client-open) at every size, into
// RunResults::micro. A mode that fails is recorded in "errors" with the leg
// and size where it failed, and the next mode runs. Interrupted
// (suite/suite.h), it measures no further mode.
#include <iterator>

#include "harness/measure.h"
#include "suite/section.h"

namespace secmode::suite {

double PlannedMicroSecondsPerMode(const SectionContext& ctx) {
  return static_cast<double>(ctx.sizes.size() * std::size(common::kAllLegs)) *
         MicroMeasureOptions(ctx.options).min_seconds;
}

namespace {

// Tells the run's progress that mode `i` started, and that it finished when
// this goes out of scope.
struct ModeStep {
  ModeStep(const SectionContext& ctx, size_t i) : progress(ctx.progress), step(ctx.first_step + i) {
    if (progress) progress->Started(step);
  }
  ~ModeStep() {
    if (progress) progress->Finished(step);
  }
  ProgressListener* progress;
  size_t step;
};

}  // namespace

common::Status RunMicroSection(SectionContext& ctx) {
  const harness::MeasureOptions mopts = MicroMeasureOptions(ctx.options);
  for (size_t i = 0; i < ctx.modes.size(); ++i) {
    const auto& name = ctx.modes[i];
    // Interrupted: the modes not yet measured are listed, each as an error.
    if (const int sig = InterruptSignal(ctx.options)) {
      ctx.results.errors.push_back(InterruptedError("mode", name.ToString(), sig, "not measured"));
      continue;
    }
    const ModeStep step(ctx, i);
    ctx.log << "measuring " << name.ToString() << " ..." << std::flush;
    auto made = harness::MakeAssociation(name, ctx.env);
    if (!made.ok()) {
      ctx.log << " failed: " << made.status().ToString() << "\n";
      ctx.results.errors.push_back(
          {{"mode", name.ToString()}, {"error", made.status().ToString()}});
      continue;
    }
    common::Association& a = *made;
    bool failed = false;
    for (size_t size : ctx.sizes) {
      for (common::Leg leg : common::kAllLegs) {
        auto m = harness::MeasureLeg(a, leg, size, mopts);
        if (!m.ok()) {
          ctx.log << " failed at " << common::LegName(leg) << " size " << size << ": "
                  << m.status().ToString() << "\n";
          ctx.results.errors.push_back({{"mode", name.ToString()},
                                        {"leg", common::LegName(leg)},
                                        {"size", size},
                                        {"error", m.status().ToString()}});
          failed = true;
          break;
        }
        ctx.results.micro.push_back(
            {a.mode, a.engine, a.enctype, common::LegName(leg), size, 1, *m});
      }
      if (failed) break;
    }
    if (!failed) ctx.log << " done\n";
  }
  return common::Status::Ok();
}

}  // namespace secmode::suite
