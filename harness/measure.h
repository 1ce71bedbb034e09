// Measuring one leg of an association: per-operation timing with exact
// percentiles.
//
// Every operation is timed on its own with the monotonic clock (so each
// figure includes the cost of one clock read). An open leg opens a fresh
// message sealed by the peer leg just before, outside the timed region, so
// sequence checking sees what a real receiver sees and the message is in
// cache, as one just read from a socket is. Each repetition's first opened
// payload is checked against what was sealed (untimed), and a failing
// operation ends the measurement, so a figure is never of failures.
#ifndef SECMODE_HARNESS_MEASURE_H_
#define SECMODE_HARNESS_MEASURE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/latency.h"
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

// How a figure is taken from its repetitions (LegMeasurement::ns_per_op), as
// results.json's method names it ("micro_estimator"); results that do not
// name it were written when the figure was the median.
inline constexpr const char* kMicroEstimator = "fastest";

// Where an operation's source lies against the buffer it is copied or
// decrypted into moves what the operation costs: a source and destination
// whose addresses differ by little modulo 4 KiB make the CPU's loads wait on
// stores whose low 12 address bits look alike ("4K aliasing"), and where the
// allocator puts the buffers differs from one process to the next, so one
// placement gives a figure that holds within a run and moves between runs.
// A meter takes each operation's source (a seal leg's payload, an open
// leg's message) from the next of kSourcePlaces places kSourcePlaceStep
// bytes apart (malloc's alignment), one at every such offset of a page,
// visited kSourcePlaceStride apart (odd, so all of them, and near the
// golden section of the page, so the few operations a repetition of a large
// payload makes are spread over it). A figure averages over the distances
// its operations met rather than resting on one: a repetition of at least
// kSourcePlaces operations meets every one.
inline constexpr size_t kSourcePlaceStep = 16;
inline constexpr size_t kSourcePlaces = 4096 / kSourcePlaceStep;
inline constexpr size_t kSourcePlaceStride = 157;

struct LegMeasurement {
  double ns_per_op = 0;                          // the fastest of the repetitions' means
  double bytes_per_second = 0;                   // payload bytes / ns_per_op
  double cycles_per_byte = 0;                    // TSC ticks per payload byte; 0 for size 0
  uint64_t p50_ns = 0, p99_ns = 0, p999_ns = 0;  // over every timed operation
  uint64_t samples = 0;                          // timed operations, all repetitions
  std::vector<double> repetitions_ns;            // each repetition's mean ns per operation
  double cv = 0;                                 // of repetitions_ns (common::Summarize)
  bool noisy() const { return cv > kNoisyCv; }
};

// What a leg costs in a typical minute of this machine: the median of the
// repetitions (ns_per_op itself when there are none, as in runs whose
// ns_per_op was that median). ns_per_op, the fastest repetition, is the
// figure a run reports and compares; the models that predict what a load
// will see (the workload model, the nconnect simulator's calibration, the
// legs' share of an end-to-end row) take this one instead, since the load
// they are held against runs through the machine's disturbed minutes too.
double TypicalNsPerOp(const LegMeasurement& m);

// One leg of one association at one size, measured a repetition at a time,
// so that a run can spread the repetitions of many figures over its length
// (the micro section measures every mode's first repetition, then every
// mode's second, ...): the variation of the machine over minutes then reaches
// every figure alike instead of whichever ran in a bad minute.
//
// A repetition is options.warmup_ops untimed operations, then at least
// options.min_ops timed ones and min_seconds / repetitions of timed work. It
// leaves the association's sequence state as it found it in step (every
// token sealed is opened), so meters of one association may take turns.
// Holds `association` by reference (it must outlive the meter). Not
// thread-safe. Percentiles are exact; memory grows with the distinct
// operation times, not with the operations (common::LatencySamples).
class LegMeter {
 public:
  static common::Result<LegMeter> Make(common::Association& association, common::Leg leg,
                                       size_t size, const MeasureOptions& options);
  common::Status Repetition();
  size_t repetitions() const { return m_.repetitions_ns.size(); }
  // The figure over the repetitions so far; at least one is needed.
  common::Result<LegMeasurement> Result();

 private:
  LegMeter(common::Association& a, common::Leg leg, size_t size, const MeasureOptions& options);
  common::Status One(uint64_t* dt);
  // The next of the kSourcePlaces places in places_, `size` bytes long.
  uint8_t* NextPlace(size_t size);

  common::Association* association_;
  common::Leg leg_;
  size_t size_;
  MeasureOptions options_;
  // The payload: a pattern that repeats every kSourcePlaceStep bytes, laid
  // over the whole of places_, so a seal leg finds it at every place; an
  // open leg copies each message to a place (over the pattern) before
  // opening it.
  common::Bytes payload_;
  common::Bytes places_;
  size_t next_place_ = 0;
  common::Sealer* sealer_ = nullptr;
  common::Opener* opener_ = nullptr;
  bool timing_open_ = false;
  bool checked_ = false;
  common::LatencySamples samples_;
  LegMeasurement m_;
  common::Bytes wire_, opened_;
};

// Times `leg` at `size`: options.repetitions of a LegMeter one after the
// other, on one association (so the key and sequence state carry on).
common::Result<LegMeasurement> MeasureLeg(common::Association& association, common::Leg leg,
                                          size_t size, const MeasureOptions& options);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_MEASURE_H_
