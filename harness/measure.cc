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

common::Result<LegMeasurement> MeasureLeg(common::Association& a, Leg leg, size_t size,
                                          const MeasureOptions& options) {
  const Bytes payload = common::PatternBytes(size, static_cast<uint32_t>(size) + 7);
  common::Sealer* sealer = nullptr;
  common::Opener* opener = nullptr;
  bool timing_open = leg == Leg::kServerOpen || leg == Leg::kClientOpen;
  if (leg == Leg::kClientSeal || leg == Leg::kServerOpen) {
    sealer = a.client_seal.get();
    opener = a.server_open.get();
  } else {
    sealer = a.server_seal.get();
    opener = a.client_open.get();
  }
  if (!sealer || !opener)
    return Status::Internal(std::string("mode has no ") + LegName(leg) + " leg");

  if (options.repetitions == 0) return Status::InvalidArgument("measure: 0 repetitions");
  std::optional<common::CpuPin> pin;
  if (options.pin_cpu >= 0) {
    auto pinned = common::CpuPin::Pin(options.pin_cpu);
    if (!pinned.ok()) return pinned.status().Annotate("--pin");
    pin.emplace(std::move(pinned).value());
  }
  const size_t reps = options.repetitions;
  const uint64_t rep_budget_ns = static_cast<uint64_t>(options.min_seconds * 1e9 / reps);
  const size_t rep_max_ops = std::max<size_t>(1, options.max_ops / reps);

  common::LatencySamples samples;
  // Grow the sample vector outside the timed loop, not between operations.
  samples.Reserve(std::min<size_t>(options.max_ops, 1u << 16));
  Bytes wire, opened;
  LegMeasurement m;

  // Open legs open tokens sealed beforehand in batches (untimed); what a
  // repetition leaves of a batch the next one opens, so they stay in order.
  std::vector<Bytes> tokens;
  size_t next_token = 0;
  if (timing_open) {
    tokens.resize(std::clamp<size_t>(kBatchBytes / std::max<size_t>(size + 64, 1), 8, 4096));
    next_token = tokens.size();
  }
  // One operation; its time in *dt.
  bool checked = false;
  auto one = [&](uint64_t* dt) -> Status {
    if (!timing_open) {
      // Seal legs: every sealed message is also opened by the peer leg
      // (untimed) so sequence state stays in step on both ends.
      const uint64_t t0 = common::NowNs();
      Status s = sealer->Seal(payload, &wire);
      *dt = common::NowNs() - t0;
      if (!s.ok()) return s.Annotate(LegName(leg));
      Status o = opener->Open(wire, &opened);
      if (!o.ok()) return o.Annotate(std::string("opening what ") + LegName(leg) + " sealed");
    } else {
      if (next_token == tokens.size()) {
        for (auto& t : tokens) {
          SECMODE_RETURN_IF_ERROR(sealer->Seal(payload, &t).Annotate("sealing for open"));
        }
        next_token = 0;
      }
      const bool batch_start = next_token == 0;
      const uint64_t t0 = common::NowNs();
      Status s = opener->Open(tokens[next_token++], &opened);
      *dt = common::NowNs() - t0;
      if (!s.ok()) return s.Annotate(LegName(leg));
      if (batch_start) SECMODE_RETURN_IF_ERROR(CheckSame(opened, payload, LegName(leg)));
      return Status::Ok();
    }
    if (!checked) {  // seal legs: the first opened payload (untimed, as the peer's open)
      checked = true;
      SECMODE_RETURN_IF_ERROR(CheckSame(opened, payload, LegName(leg)));
    }
    return Status::Ok();
  };

  uint64_t dt = 0;
  for (size_t i = 0; i < options.warmup_ops; ++i) SECMODE_RETURN_IF_ERROR(one(&dt));
  for (size_t r = 0; r < reps; ++r) {
    uint64_t timed_ns = 0;
    size_t ops = 0;
    while ((timed_ns < rep_budget_ns || ops < options.min_ops) && ops < rep_max_ops) {
      SECMODE_RETURN_IF_ERROR(one(&dt));
      samples.Add(dt);
      timed_ns += dt;
      ++ops;
    }
    m.samples += ops;
    m.repetitions_ns.push_back(static_cast<double>(timed_ns) / static_cast<double>(ops));
  }
  // What is left of the last batch is opened untimed, so the peer has seen
  // every number this leg sealed (the next leg starts without a gap).
  while (next_token < tokens.size()) {
    SECMODE_RETURN_IF_ERROR(
        opener->Open(tokens[next_token++], &opened).Annotate("opening the batch's rest"));
  }
  const common::Spread spread = common::Summarize(m.repetitions_ns);
  m.ns_per_op = spread.median;
  m.cv = spread.cv;
  m.bytes_per_second = m.ns_per_op > 0 ? static_cast<double>(size) * 1e9 / m.ns_per_op : 0;
  m.cycles_per_byte = size > 0 ? m.ns_per_op * common::TscGhz() / static_cast<double>(size) : 0;
  m.p50_ns = samples.Percentile(0.50);
  m.p99_ns = samples.Percentile(0.99);
  m.p999_ns = samples.Percentile(0.999);
  return m;
}

}  // namespace secmode::harness
