// Measuring one leg of an association: per-operation timing with exact
// percentiles.
//
// Every operation is timed on its own with the monotonic clock (so each
// figure includes the cost of one clock read). Open legs open fresh tokens, sealed in
// order by the peer leg outside the timed region, so sequence checking sees
// what a real receiver sees; every opened payload is checked against what was
// sealed (untimed), so a measured number is never of a failing operation.
#ifndef SECMODE_HARNESS_MEASURE_H_
#define SECMODE_HARNESS_MEASURE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/seal.h"
#include "common/status.h"

namespace secmode::harness {

struct MeasureOptions {
  double min_seconds = 0.25;  // timed work per leg and size, all repetitions together
  size_t min_ops = 20;        // per repetition
  size_t max_ops = 1000000;   // all repetitions together
  size_t warmup_ops = 3;      // untimed, once before the first repetition
  size_t repetitions = 5;     // at least 1
  int pin_cpu = -1;           // >= 0: the measuring thread runs on this CPU only (--pin)
};

// A figure is noisy when its repetitions' coefficient of variation exceeds this.
inline constexpr double kNoisyCv = 0.05;

struct LegMeasurement {
  double ns_per_op = 0;         // the median of the repetitions' means
  double bytes_per_second = 0;  // payload bytes / ns_per_op
  double cycles_per_byte = 0;   // TSC ticks per payload byte; 0 for size 0
  uint64_t p50_ns = 0, p99_ns = 0, p999_ns = 0;  // over every timed operation
  uint64_t samples = 0;                           // timed operations, all repetitions
  std::vector<double> repetitions_ns;             // each repetition's mean ns per operation
  double cv = 0;                                  // of repetitions_ns (common::Summarize)
  bool noisy() const { return cv > kNoisyCv; }
};

// Times `leg` at `size`: options.repetitions runs one after the other, each
// of at least options.min_ops operations and min_seconds / repetitions of
// timed work, on one association (so the key and sequence state carry on).
common::Result<LegMeasurement> MeasureLeg(common::Association& association, common::Leg leg,
                                          size_t size, const MeasureOptions& options);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_MEASURE_H_
