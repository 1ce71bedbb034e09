// The nconnect simulator's own speed: a scenario simulated on the calling
// thread, timed in thread CPU time (the speed of one core, whatever else the
// machine runs) and in wall time.
//
// The figure is taken as the run's other figures are: several short timed
// runs spread over the run (SimSpeedSampler::Sample, called between the
// run's other work, e.g. between the parts of a sweep), reported as the
// median run with the runs' range, so that one moment of a shared machine
// does not decide it. The first sample is preceded by a cold run (its first
// touch of fresh memory, which a sweep of many scenarios pays once), timed
// apart and not counted. MeasureSimSpeed takes its runs back to back; with
// one run, that run is timed cold.
// Thread safety: SimSpeedSampler is used from one thread at a time;
// MeasureSimSpeed is reentrant.
#ifndef SECMODE_HARNESS_SIM_SPEED_H_
#define SECMODE_HARNESS_SIM_SPEED_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"
#include "sim/scenario.h"

namespace secmode::harness {

struct SimSpeed {
  int64_t rpcs = 0;        // simulated RPCs completed, per run
  double cpu_seconds = 0;  // this thread's CPU time, of the median run
  double wall_seconds = 0;     // of the median run
  double rpcs_per_second = 0;  // per second of CPU time: the median run's
  int runs = 0;                // timed runs
  double min_rpcs_per_second = 0, max_rpcs_per_second = 0;  // over the timed runs
  double cold_rpcs_per_second = 0;  // the first, cold run's (runs > 1), else the one run's
  // The timed runs were spread over the run (SimSpeedSampler between other
  // work), not back to back; results.json "interleaved" (absent: false).
  bool interleaved = false;
  nlohmann::json ToJson() const;
};

// Short timed runs of one scenario, taken one at a time.
class SimSpeedSampler {
 public:
  explicit SimSpeedSampler(sim::Scenario scenario) : scenario_(std::move(scenario)) {}
  // One timed run; the first time, after a cold run timed apart.
  common::Status Sample();
  int samples() const { return static_cast<int>(timed_.size()); }
  // The median run (the upper one of an even count) with the runs' range;
  // `interleaved` as the caller spread the samples. Internal
  // before any sample.
  common::Result<SimSpeed> Speed(bool interleaved) const;

 private:
  sim::Scenario scenario_;
  double cold_ = 0;
  std::vector<SimSpeed> timed_;
};

// `runs` timed runs back to back: 1 or more, else InvalidArgument.
common::Result<SimSpeed> MeasureSimSpeed(const sim::Scenario& scenario, int runs = 1);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_SIM_SPEED_H_
