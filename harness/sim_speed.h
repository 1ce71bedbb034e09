// The nconnect simulator's own speed: one scenario simulated on the calling
// thread, timed in thread CPU time (the speed of one core, whatever else the
// machine runs) and in wall time.
// Thread safety: reentrant.
#ifndef SECMODE_HARNESS_SIM_SPEED_H_
#define SECMODE_HARNESS_SIM_SPEED_H_

#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/status.h"
#include "sim/scenario.h"

namespace secmode::harness {

struct SimSpeed {
  int64_t rpcs = 0;        // simulated RPCs completed
  double cpu_seconds = 0;  // this thread's CPU time
  double wall_seconds = 0;
  double rpcs_per_second = 0;  // per second of CPU time
  nlohmann::json ToJson() const;
};

common::Result<SimSpeed> MeasureSimSpeed(const sim::Scenario& scenario);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_SIM_SPEED_H_
