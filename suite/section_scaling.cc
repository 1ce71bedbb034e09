// Section "scaling": every mode of the run with 1, 2, 4 ... threads up to
// the logical CPUs and one beyond (oversubscribed), each thread with an
// association of its own doing round trips at one payload size
// (harness/scaling.h), into sections.scaling: per mode and thread count the
// aggregate round trips and bytes per second, and the per-thread efficiency
// (the aggregate over threads x the one-thread figure of the same run); each
// krb5p mode also with one context shared by every thread (rows with
// "context": "shared").
// Interrupted (suite/suite.h), it measures no further mode.
#include <algorithm>

#include "common/machine.h"
#include "harness/scaling.h"
#include "suite/section.h"

namespace secmode::suite {

namespace {

constexpr size_t kScalingSize = 65536;
// The shared-context rows measure the crypto on one context, not the
// window: a window this wide never drops a call of a descheduled thread
// (its drops are the nconnect sections' subject).
constexpr uint32_t kSharedContextWindow = 65536;

harness::ScalingOptions Options(const SectionContext& ctx) {
  harness::ScalingOptions so;
  if (ctx.options.quick) so.seconds = 0.04;
  return so;
}

}  // namespace

double PlannedScalingSeconds(const SectionContext& ctx) {
  const harness::ScalingOptions so = Options(ctx);
  const size_t steps = harness::ScalingThreadCounts(common::LogicalCpus()).size();
  size_t runs = ctx.modes.size();
  for (const auto& name : ctx.modes) runs += name.family == "krb5p" ? 1 : 0;
  return static_cast<double>(runs * steps * so.repetitions) * so.seconds;
}

common::Status RunScalingSection(SectionContext& ctx) {
  // 64 KiB, or the run's largest size below it when --sizes leaves it out.
  size_t size = 0;
  for (size_t s : ctx.sizes) {
    if (s == kScalingSize) size = s;
  }
  if (size == 0) {
    for (size_t s : ctx.sizes) {
      if (s <= kScalingSize) size = std::max(size, s);
    }
    if (size == 0) size = *std::min_element(ctx.sizes.begin(), ctx.sizes.end());
  }
  const harness::ScalingOptions so = Options(ctx);
  const size_t cpus = static_cast<size_t>(common::LogicalCpus());
  const std::vector<size_t> counts = harness::ScalingThreadCounts(cpus);
  nlohmann::json rows = nlohmann::json::array();
  std::string interrupted;
  // Every mode with an association per thread, then each krb5p mode again
  // with one context shared by all the threads (as nconnect's connections
  // share one): its crypto parallel or serialised as the engine allows.
  std::vector<std::pair<harness::ModeName, bool>> runs;
  for (const auto& name : ctx.modes) runs.push_back({name, false});
  for (const auto& name : ctx.modes) {
    if (name.family == "krb5p") runs.push_back({name, true});
  }
  for (const auto& [name, shared] : runs) {
    const std::string label = name.ToString() + (shared ? " (one shared context)" : "");
    if (const int sig = InterruptSignal(ctx.options)) {
      // One entry for the section, naming the modes it did not measure.
      if (interrupted.empty()) {
        ctx.results.errors.push_back(InterruptedError("section", "scaling", sig,
                                                      "modes from " + label + " on not measured"));
        interrupted = SignalName(sig);
      }
      continue;
    }
    std::vector<common::Association> owned;
    common::Status made;
    if (shared) {
      auto a = harness::MakeSharedAssociations(name, ctx.env, counts.back(), kSharedContextWindow);
      if (a.ok()) {
        owned = std::move(a).value();
      } else {
        made = a.status();
      }
    } else {
      owned.reserve(counts.back());
      for (size_t i = 0; i < counts.back() && made.ok(); ++i) {
        auto a = harness::MakeAssociation(name, ctx.env);
        if (!a.ok()) {
          made = a.status();
        } else {
          owned.push_back(std::move(*a));
        }
      }
    }
    if (!made.ok()) {
      ctx.results.errors.push_back(
          {{"section", "scaling"}, {"mode", label}, {"error", made.ToString()}});
      continue;
    }
    double one = 0;
    for (size_t t : counts) {
      std::vector<common::Association*> use;
      for (size_t i = 0; i < t; ++i) use.push_back(&owned[i]);
      auto m = harness::MeasureScaling(use, size, so);
      if (!m.ok()) {
        ctx.results.errors.push_back({{"section", "scaling"},
                                      {"mode", label},
                                      {"threads", t},
                                      {"error", m.status().ToString()}});
        break;
      }
      if (t == 1) one = m->median;
      rows.push_back(
          {{"mode", owned[0].mode},
           {"engine", owned[0].engine},
           {"enctype", owned[0].enctype},
           {"context", shared ? "shared" : "own"},
           {"threads", t},
           {"oversubscribed", t > cpus},
           {"round_trips_per_second", m->median},
           {"bytes_per_second", m->median * static_cast<double>(size)},
           {"repetitions", m->round_trips_per_second},
           {"cv", m->cv},
           {"efficiency", one > 0 ? nlohmann::json(m->median / (static_cast<double>(t) * one))
                                  : nlohmann::json(nullptr)}});
    }
  }
  ctx.results.sections["scaling"] = {{"size", size},
                                     {"logical_cpus", cpus},
                                     {"thread_counts", counts},
                                     {"seconds", so.seconds},
                                     {"repetitions", so.repetitions},
                                     {"rows", rows},
                                     {"shared_context_window", kSharedContextWindow}};
  if (!interrupted.empty()) ctx.results.sections["scaling"]["interrupted"] = interrupted;
  return common::Status::Ok();
}

}  // namespace secmode::suite
