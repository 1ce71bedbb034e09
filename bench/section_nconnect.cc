// `secmode run` section: the nconnect simulator sweep (bench/nconnect_sweep.h).
#include "bench/nconnect_sweep.h"

namespace secmode::bench {

common::Status RunNconnectSection(SectionContext& context) {
  sim::SweepGrid grid = context.options.quick ? sim::SweepGrid::Quick() : sim::SweepGrid::Default();
  std::string source =
      "defaults of sim/scenario.h (1500 ns + 1.0 ns/byte per message, roughly krb5p "
      "aes256-cts-hmac-sha1-96 on one x86 core); this run measured no krb5p costs to fit";
  FitCostsFromMicro(context.results, grid.base, &source);
  return AddNconnectSweep(grid, source, 0, context.results, context.log);
}

}  // namespace secmode::bench
