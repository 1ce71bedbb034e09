#include "harness/sim_speed.h"

#include "common/clock.h"
#include "sim/simulator.h"

namespace secmode::harness {

nlohmann::json SimSpeed::ToJson() const {
  return {{"rpcs", rpcs},
          {"cpu_seconds", cpu_seconds},
          {"wall_seconds", wall_seconds},
          {"rpcs_per_second", rpcs_per_second}};
}

common::Result<SimSpeed> MeasureSimSpeed(const sim::Scenario& scenario) {
  const uint64_t t0 = common::NowNs();
  const uint64_t c0 = common::ThreadCpuNs();
  SECMODE_ASSIGN_OR_RETURN(sim::ScenarioResult r, sim::Simulate(scenario));
  SimSpeed speed;
  speed.cpu_seconds = static_cast<double>(common::ThreadCpuNs() - c0) / 1e9;
  speed.wall_seconds = static_cast<double>(common::NowNs() - t0) / 1e9;
  speed.rpcs = r.completed;
  speed.rpcs_per_second =
      speed.cpu_seconds > 0 ? static_cast<double>(r.completed) / speed.cpu_seconds : 0;
  return speed;
}

}  // namespace secmode::harness
