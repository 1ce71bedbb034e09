// Core scaling: how one mode's throughput grows with the threads that run
// it, each thread with an association of its own (as separate mounts or
// clients are; a shared context is the e2e section's crypto_threads).
//
// A round trip is the four legs in order on one payload (the request sealed
// and opened, the reply sealed and opened), all of it the work being
// measured. T threads start together and do round trips for a fixed wall
// time; the figure is the round trips all of them completed before the
// stop, over that wall time. Repeated, the figure is the median. Threads
// beyond the logical CPUs are allowed (oversubscribed): they then share
// cores, which the aggregate shows.
#ifndef SECMODE_HARNESS_SCALING_H_
#define SECMODE_HARNESS_SCALING_H_

#include <cstddef>
#include <vector>

#include "common/seal.h"
#include "common/status.h"

namespace secmode::harness {

struct ScalingOptions {
  double seconds = 0.15;   // wall time of one repetition
  size_t repetitions = 3;  // at least 1
};

struct ScalingMeasurement {
  size_t threads = 0;
  std::vector<double> round_trips_per_second;  // each repetition, all threads together
  double median = 0;                           // of round_trips_per_second
  double cv = 0;
};

// One thread per association (associations.size() threads; none may be
// null); every association is used by its thread only. Fails when a leg
// fails or an opened payload differs from the sealed one.
common::Result<ScalingMeasurement> MeasureScaling(
    const std::vector<common::Association*>& associations, size_t size,
    const ScalingOptions& options);

// 1, 2, 4 ... up to `cpus`, then `cpus` itself if not a power of two, then
// cpus + 1 (the oversubscribed step).
std::vector<size_t> ScalingThreadCounts(size_t cpus);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_SCALING_H_
