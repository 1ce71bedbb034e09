// Section "nconnect": the nconnect simulator sweep (suite/nconnect_sweep.h),
// the default grid (the quick grid under --quick) with crypto costs fitted
// to the run's krb5p micro rows when there are any, on all hardware threads.
#include <string>

#include "common/format.h"
#include "suite/nconnect_sweep.h"
#include "suite/section.h"

namespace secmode::suite {

common::Status RunNconnectSection(SectionContext& context) {
  sim::SweepGrid grid = context.options.quick ? sim::SweepGrid::Quick() : sim::SweepGrid::Default();
  std::string source = "defaults of sim/scenario.h (" +
                       common::Fmt("%.0f", grid.base.cost_fixed_ns) + " ns + " +
                       common::Fmt("%.2f", grid.base.cost_ns_per_byte) +
                       " ns/byte per message, not measured in this run: it measured no krb5p "
                       "costs to fit)";
  FitCostsFromMicro(context.results, grid.base, &source);
  return RunNconnectSweep(grid, source, 0, context.results, context.log);
}

}  // namespace secmode::suite
