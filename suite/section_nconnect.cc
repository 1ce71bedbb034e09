// Section "nconnect": the nconnect simulator sweep (suite/nconnect_sweep.h),
// the default grid (the quick grid under --quick) with crypto costs fitted
// to the run's krb5p micro rows when there are any, on all hardware threads.
#include <cstdio>
#include <string>

#include "suite/nconnect_sweep.h"
#include "suite/section.h"

namespace secmode::suite {

common::Status RunNconnectSection(SectionContext& context) {
  sim::SweepGrid grid = context.options.quick ? sim::SweepGrid::Quick() : sim::SweepGrid::Default();
  char defaults[96];
  snprintf(defaults, sizeof defaults, "%.0f ns + %.2f ns/byte per message", grid.base.cost_fixed_ns,
           grid.base.cost_ns_per_byte);
  std::string source = std::string("defaults of sim/scenario.h (") + defaults +
                       ", not measured in this run: it measured no krb5p costs to fit)";
  FitCostsFromMicro(context.results, grid.base, &source);
  return RunNconnectSweep(grid, source, 0, context.results, context.log);
}

}  // namespace secmode::suite
