#include "harness/measure.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "common/cpu_affinity.h"
#include "common/latency.h"
#include "common/stats.h"

namespace secmode::harness {

using common::Bytes;
using common::Leg;
using common::Status;

namespace {

// Tokens for an open leg are prepared in batches that fit in this much memory.
constexpr size_t kBatchBytes = 32u << 20;

common::Status CheckSame(const Bytes& got, const Bytes& want, const char* leg) {
  if (got != want) {
    return Status::Internal(std::string(leg) + ": opened payload differs from the sealed one (" +
                            std::to_string(got.size()) + " vs " + std::to_string(want.size()) +
                            " bytes)");
  }
  return Status::Ok();
}

}  // namespace

LegMeter::LegMeter(common::Association& a, Leg leg, size_t size, const MeasureOptions& options)
    : association_(&a),
      leg_(leg),
      size_(size),
      options_(options),
      payload_(common::PatternBytes(size, static_cast<uint32_t>(size) + 7)) {}

common::Result<LegMeter> LegMeter::Make(common::Association& a, Leg leg, size_t size,
                                        const MeasureOptions& options) {
  if (options.repetitions == 0) return Status::InvalidArgument("measure: 0 repetitions");
  LegMeter meter(a, leg, size, options);
  meter.timing_open_ = leg == Leg::kServerOpen || leg == Leg::kClientOpen;
  if (leg == Leg::kClientSeal || leg == Leg::kServerOpen) {
    meter.sealer_ = a.client_seal.get();
    meter.opener_ = a.server_open.get();
  } else {
    meter.sealer_ = a.server_seal.get();
    meter.opener_ = a.client_open.get();
  }
  if (!meter.sealer_ || !meter.opener_)
    return Status::Internal(std::string("mode has no ") + LegName(leg) + " leg");
  return meter;
}

// One operation; its time in *dt.
Status LegMeter::One(uint64_t* dt) {
  const char* leg = LegName(leg_);
  if (!timing_open_) {
    // Seal legs: every sealed message is also opened by the peer leg
    // (untimed) so sequence state stays in step on both ends.
    const uint64_t t0 = common::NowNs();
    Status s = sealer_->Seal(payload_, &wire_);
    *dt = common::NowNs() - t0;
    if (!s.ok()) return s.Annotate(leg);
    Status o = opener_->Open(wire_, &opened_);
    if (!o.ok()) return o.Annotate(std::string("opening what ") + leg + " sealed");
    if (!checked_) {  // the first opened payload (untimed, as the peer's open)
      checked_ = true;
      SECMODE_RETURN_IF_ERROR(CheckSame(opened_, payload_, leg));
    }
    return Status::Ok();
  }
  if (next_token_ == tokens_.size()) {
    for (auto& t : tokens_) {
      SECMODE_RETURN_IF_ERROR(sealer_->Seal(payload_, &t).Annotate("sealing for open"));
    }
    next_token_ = 0;
  }
  const bool batch_start = next_token_ == 0;
  const uint64_t t0 = common::NowNs();
  Status s = opener_->Open(tokens_[next_token_++], &opened_);
  *dt = common::NowNs() - t0;
  if (!s.ok()) return s.Annotate(leg);
  if (batch_start) SECMODE_RETURN_IF_ERROR(CheckSame(opened_, payload_, leg));
  return Status::Ok();
}

Status LegMeter::Repetition() {
  std::optional<common::CpuPin> pin;
  if (options_.pin_cpu >= 0) {
    auto pinned = common::CpuPin::Pin(options_.pin_cpu);
    if (!pinned.ok()) return pinned.status().Annotate("--pin");
    pin.emplace(std::move(pinned).value());
  }
  const size_t reps = options_.repetitions;
  const uint64_t rep_budget_ns = static_cast<uint64_t>(options_.min_seconds * 1e9 / reps);
  const size_t rep_max_ops = std::max<size_t>(1, options_.max_ops / reps);
  // Open legs open tokens sealed beforehand in batches (untimed), held for
  // this repetition only.
  if (timing_open_) {
    tokens_.resize(std::clamp<size_t>(kBatchBytes / std::max<size_t>(size_ + 64, 1), 8, 4096));
    next_token_ = tokens_.size();
  }
  // Grow the sample vector outside the timed loop, not between operations.
  samples_.Reserve(std::min<size_t>(rep_max_ops, 1u << 16));
  uint64_t dt = 0;
  for (size_t i = 0; i < options_.warmup_ops; ++i) SECMODE_RETURN_IF_ERROR(One(&dt));
  uint64_t timed_ns = 0;
  size_t ops = 0;
  while ((timed_ns < rep_budget_ns || ops < options_.min_ops) && ops < rep_max_ops) {
    SECMODE_RETURN_IF_ERROR(One(&dt));
    samples_.Add(dt);
    timed_ns += dt;
    ++ops;
  }
  // What is left of the batch is opened untimed, so the peer has seen every
  // number this leg sealed (the next leg or meter starts without a gap).
  while (next_token_ < tokens_.size()) {
    SECMODE_RETURN_IF_ERROR(
        opener_->Open(tokens_[next_token_++], &opened_).Annotate("opening the batch's rest"));
  }
  std::vector<Bytes>().swap(tokens_);
  next_token_ = 0;
  samples_.Compact();
  m_.samples += ops;
  m_.repetitions_ns.push_back(static_cast<double>(timed_ns) / static_cast<double>(ops));
  return Status::Ok();
}

common::Result<LegMeasurement> LegMeter::Result() {
  if (m_.repetitions_ns.empty()) return Status::Internal("measure: no repetition measured");
  LegMeasurement m = m_;
  const common::Spread spread = common::Summarize(m.repetitions_ns);
  m.ns_per_op = spread.median;
  m.cv = spread.cv;
  m.bytes_per_second = m.ns_per_op > 0 ? static_cast<double>(size_) * 1e9 / m.ns_per_op : 0;
  m.cycles_per_byte = size_ > 0 ? m.ns_per_op * common::TscGhz() / static_cast<double>(size_) : 0;
  m.p50_ns = samples_.Percentile(0.50);
  m.p99_ns = samples_.Percentile(0.99);
  m.p999_ns = samples_.Percentile(0.999);
  return m;
}

common::Result<LegMeasurement> MeasureLeg(common::Association& a, Leg leg, size_t size,
                                          const MeasureOptions& options) {
  SECMODE_ASSIGN_OR_RETURN(LegMeter meter, LegMeter::Make(a, leg, size, options));
  for (size_t r = 0; r < options.repetitions; ++r) SECMODE_RETURN_IF_ERROR(meter.Repetition());
  return meter.Result();
}

}  // namespace secmode::harness
