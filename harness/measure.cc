#include "harness/measure.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "common/cpu_affinity.h"
#include "common/latency.h"
#include "common/stats.h"

namespace secmode::harness {

using common::Bytes;
using common::ByteView;
using common::Leg;
using common::Status;

namespace {

common::Status CheckSame(const Bytes& got, const Bytes& want, const char* leg) {
  if (got != want) {
    return Status::Internal(std::string(leg) + ": opened payload differs from the sealed one (" +
                            std::to_string(got.size()) + " vs " + std::to_string(want.size()) +
                            " bytes)");
  }
  return Status::Ok();
}

}  // namespace

static_assert(kSourcePlaces * kSourcePlaceStep == 4096 && kSourcePlaceStride % 2 == 1,
              "the places cover a page and the stride visits every one");

LegMeter::LegMeter(common::Association& a, Leg leg, size_t size, const MeasureOptions& options)
    : association_(&a), leg_(leg), size_(size), options_(options) {
  // The pattern is laid by address, so every address that is a multiple of
  // kSourcePlaceStep starts it, whatever alignment the allocator gave.
  const Bytes step = common::PatternBytes(kSourcePlaceStep, static_cast<uint32_t>(size) + 7);
  places_.resize(kSourcePlaceStep + kSourcePlaces * kSourcePlaceStep + size);
  const auto base = reinterpret_cast<uintptr_t>(places_.data());
  for (size_t i = 0; i < places_.size(); ++i) places_[i] = step[(base + i) % kSourcePlaceStep];
  const uint8_t* first = NextPlace(size);
  payload_.assign(first, first + size);
  next_place_ = 0;
}

// The places start at the first multiple of kSourcePlaceStep in places_;
// they are found from its address each time, so a move (an open leg's
// larger message) keeps them.
uint8_t* LegMeter::NextPlace(size_t size) {
  const size_t need = kSourcePlaceStep + kSourcePlaces * kSourcePlaceStep + size;
  if (places_.size() < need) places_.resize(need);  // an open leg's message
  const auto base = reinterpret_cast<uintptr_t>(places_.data());
  const size_t first =
      static_cast<size_t>((kSourcePlaceStep - base % kSourcePlaceStep) % kSourcePlaceStep);
  uint8_t* place = places_.data() + first + next_place_ * kSourcePlaceStep;
  next_place_ = (next_place_ + kSourcePlaceStride) % kSourcePlaces;
  return place;
}

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

// One operation; its time in *dt. The leg not timed runs just before (an
// open leg's message is sealed for it and copied to its place) or just after
// (a seal leg's message is opened), so the sequence state stays in step on
// both ends and an open leg opens a message in cache, as a receiver opens
// one it has just read.
Status LegMeter::One(uint64_t* dt) {
  const char* leg = LegName(leg_);
  Status s;
  if (timing_open_) {
    SECMODE_RETURN_IF_ERROR(sealer_->Seal(payload_, &wire_).Annotate("sealing for open"));
    uint8_t* message = NextPlace(wire_.size());
    std::memcpy(message, wire_.data(), wire_.size());
    const uint64_t t0 = common::NowNs();
    s = opener_->Open(ByteView(message, wire_.size()), &opened_);
    *dt = common::NowNs() - t0;
    if (!s.ok()) return s.Annotate(leg);
  } else {
    const ByteView payload(NextPlace(size_), size_);
    const uint64_t t0 = common::NowNs();
    s = sealer_->Seal(payload, &wire_);
    *dt = common::NowNs() - t0;
    if (!s.ok()) return s.Annotate(leg);
    Status o = opener_->Open(wire_, &opened_);
    if (!o.ok()) return o.Annotate(std::string("opening what ") + leg + " sealed");
  }
  if (!checked_) {  // a repetition's first opened payload (untimed)
    checked_ = true;
    SECMODE_RETURN_IF_ERROR(CheckSame(opened_, payload_, leg));
  }
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
  checked_ = false;
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
  samples_.Compact();
  m_.samples += ops;
  m_.repetitions_ns.push_back(static_cast<double>(timed_ns) / static_cast<double>(ops));
  return Status::Ok();
}

common::Result<LegMeasurement> LegMeter::Result() {
  if (m_.repetitions_ns.empty()) return Status::Internal("measure: no repetition measured");
  LegMeasurement m = m_;
  const common::Spread spread = common::Summarize(m.repetitions_ns);
  // The fastest repetition: what the machine does to a CPU-bound figure
  // (another tenant on the sibling thread, an interrupt, a migration) only
  // ever adds time, so the least disturbed repetition is the one nearest
  // the code's own cost, and ratios of fastest repetitions repeat from run
  // to run where medians move with a disturbed minute (Chen and Revels,
  // "Robust benchmarking in noisy environments", HPEC 2016).
  m.ns_per_op = spread.min;
  m.cv = spread.cv;
  m.bytes_per_second = m.ns_per_op > 0 ? static_cast<double>(size_) * 1e9 / m.ns_per_op : 0;
  m.cycles_per_byte = size_ > 0 ? m.ns_per_op * common::TscGhz() / static_cast<double>(size_) : 0;
  m.p50_ns = samples_.Percentile(0.50);
  m.p99_ns = samples_.Percentile(0.99);
  m.p999_ns = samples_.Percentile(0.999);
  return m;
}

double TypicalNsPerOp(const LegMeasurement& m) {
  if (m.repetitions_ns.empty()) return m.ns_per_op;
  return common::Median(m.repetitions_ns);
}

common::Result<LegMeasurement> MeasureLeg(common::Association& a, Leg leg, size_t size,
                                          const MeasureOptions& options) {
  SECMODE_ASSIGN_OR_RETURN(LegMeter meter, LegMeter::Make(a, leg, size, options));
  for (size_t r = 0; r < options.repetitions; ++r) SECMODE_RETURN_IF_ERROR(meter.Repetition());
  return meter.Result();
}

}  // namespace secmode::harness
