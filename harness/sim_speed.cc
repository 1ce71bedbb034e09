#include "harness/sim_speed.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/clock.h"
#include "sim/simulator.h"

namespace secmode::harness {

nlohmann::json SimSpeed::ToJson() const {
  return {{"rpcs", rpcs},
          {"cpu_seconds", cpu_seconds},
          {"wall_seconds", wall_seconds},
          {"rpcs_per_second", rpcs_per_second},
          {"runs", runs},
          {"min_rpcs_per_second", min_rpcs_per_second},
          {"max_rpcs_per_second", max_rpcs_per_second},
          {"cold_rpcs_per_second", cold_rpcs_per_second},
          {"interleaved", interleaved}};
}

namespace {

// One run, timed: its fields of SimSpeed.
common::Result<SimSpeed> TimeOne(const sim::Scenario& scenario) {
  const uint64_t t0 = common::NowNs();
  const uint64_t c0 = common::ThreadCpuNs();
  SECMODE_ASSIGN_OR_RETURN(sim::ScenarioResult r, sim::Simulate(scenario));
  SimSpeed t;
  t.cpu_seconds = static_cast<double>(common::ThreadCpuNs() - c0) / 1e9;
  t.wall_seconds = static_cast<double>(common::NowNs() - t0) / 1e9;
  t.rpcs = r.completed;
  t.rpcs_per_second = t.cpu_seconds > 0 ? static_cast<double>(r.completed) / t.cpu_seconds : 0;
  return t;
}

}  // namespace

common::Status SimSpeedSampler::Sample() {
  if (timed_.empty()) {
    SECMODE_ASSIGN_OR_RETURN(SimSpeed first, TimeOne(scenario_));
    cold_ = first.rpcs_per_second;
  }
  SECMODE_ASSIGN_OR_RETURN(SimSpeed t, TimeOne(scenario_));
  timed_.push_back(t);
  return common::Status::Ok();
}

common::Result<SimSpeed> SimSpeedSampler::Speed(bool interleaved) const {
  if (timed_.empty()) {
    return common::Status::Internal("simulator speed: no run was timed");
  }
  // The median run (the upper one of an even count), its figures together.
  std::vector<SimSpeed> timed = timed_;
  std::sort(timed.begin(), timed.end(), [](const SimSpeed& a, const SimSpeed& b) {
    return a.rpcs_per_second < b.rpcs_per_second;
  });
  SimSpeed speed = timed[timed.size() / 2];
  speed.runs = static_cast<int>(timed.size());
  speed.min_rpcs_per_second = timed.front().rpcs_per_second;
  speed.max_rpcs_per_second = timed.back().rpcs_per_second;
  speed.cold_rpcs_per_second = cold_;
  speed.interleaved = interleaved;
  return speed;
}

common::Result<SimSpeed> MeasureSimSpeed(const sim::Scenario& scenario, int runs) {
  if (runs < 1) {
    return common::Status::InvalidArgument("simulator speed: runs must be 1 or more, not " +
                                           std::to_string(runs));
  }
  if (runs == 1) {
    SECMODE_ASSIGN_OR_RETURN(SimSpeed one, TimeOne(scenario));
    one.runs = 1;
    one.min_rpcs_per_second = one.max_rpcs_per_second = one.cold_rpcs_per_second =
        one.rpcs_per_second;
    return one;
  }
  SimSpeedSampler sampler(scenario);
  for (int i = 0; i < runs; ++i) SECMODE_RETURN_IF_ERROR(sampler.Sample());
  return sampler.Speed(false);
}

}  // namespace secmode::harness
