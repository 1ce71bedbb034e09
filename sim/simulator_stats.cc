// The simulator's end-of-run statistics: what ScenarioResult reports besides
// the counts the run kept as it went. Part of Sim (simulator_internal.h).
#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "sim/simulator_internal.h"

namespace secmode::sim::detail {

// Stage i's values at `ranks` (ascending): the long ones rank above every
// one that fits.
void Sim::StageValues(size_t i, std::span<const size_t> ranks, std::span<int64_t> out) {
  const size_t fit = stage_short_[i];
  size_t k = 0;
  while (k < ranks.size() && ranks[k] < fit) ++k;
  OrderStatistics<int32_t>({stage_samples_.get() + i * kMaxStageSamples, fit}, stage_most_[i],
                           ranks.first(k), out.first(k));
  std::vector<int64_t>& longer = stage_long_[i];
  std::sort(longer.begin(), longer.end());
  for (; k < ranks.size(); ++k) out[k] = longer[ranks[k] - fit];
}

// Fills r_ at the end of a run of `events` events from the queue.
void Sim::Summarise(int64_t events) {
  // A retransmission counts once it has left.
  for (Conn& conn : conns_) {
    if (!Passed(conn.tx_free_at, conn.tx_free_order)) UncountRetransmission(conn);
  }
  // The arrivals that have come but wait in a wire for their thread's next
  // read were events handled by now.
  for (const SimThread& t : threads_) {
    for (size_t i = 0; i < t.wire.size() && Passed(t.wire[i].time, t.wire[i].order); ++i) {
      ++wire_arrivals_;
    }
  }
  r_.events = events - wire_events_ + wire_arrivals_ + inline_ticks_;
  r_.elapsed_ns = now_;
  if (s_.thread_model && s_.cores > 0 && now_ > 0) {
    for (const SimThread& t : threads_) {
      if (t.st == SimThread::St::kRunning) busy_ns_ += now_ - t.on_core_since;
    }
    r_.idle_fraction =
        std::max(0.0, 1.0 - static_cast<double>(busy_ns_) /
                                (static_cast<double>(s_.cores) * static_cast<double>(now_)));
  }
  if (now_ > 0) {
    r_.ops_per_s = static_cast<double>(r_.completed) * 1e9 / static_cast<double>(now_);
    r_.mb_per_s = r_.ops_per_s * static_cast<double>(s_.io_size) / 1e6;
    r_.stalled_fraction = static_cast<double>(stalled_ns_) / static_cast<double>(now_);
  }
  if (stage_count_ > 0) {
    int64_t median[4];
    const size_t n = stage_count_;
    const auto rank = [n](double q) {
      return std::min(n - 1, static_cast<size_t>(q * static_cast<double>(n)));
    };
    const size_t ranks[] = {rank(0.5), rank(0.99)};
    for (size_t i = 0; i < 4; ++i) {
      int64_t at[2];
      StageValues(i, ranks, at);
      median[i] = at[0];
      r_.stage_p50_ns[i] = at[0];
      r_.stage_p99_ns[i] = at[1];
    }
    for (const auto& p : violation_stages_) {
      int worst = 0;
      for (int i = 1; i < 4; ++i) {
        if (p[static_cast<size_t>(i)] - median[i] > p[static_cast<size_t>(worst)] - median[worst]) {
          worst = i;
        }
      }
      ++r_.violation_stage[worst];
    }
  }
  for (const auto& pair : {std::pair{&close_to_eof_, &r_.close_to_eof},
                           {&eof_to_resent_, &r_.eof_to_resent},
                           {&recreation_, &r_.recreation},
                           {&resume_, &r_.resume}}) {
    std::vector<int64_t>& v = *pair.first;
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    const auto at = [&v](double q) {
      return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
    };
    *pair.second = {static_cast<int64_t>(v.size()), at(0.5), at(0.9)};
  }
  // Nearest-rank percentiles (as common::LatencySamples), by selection
  // instead of a full sort.
  const size_t n = latencies_.size();
  if (n > 0) {
    size_t ranks[3];
    const double qs[] = {0.50, 0.99, 0.999};
    for (size_t i = 0; i < 3; ++i) {
      const size_t rank = static_cast<size_t>(std::ceil(qs[i] * static_cast<double>(n)));
      ranks[i] = rank == 0 ? 0 : rank - 1;
    }
    int64_t at[3];
    OrderStatistics<int64_t>(latencies_, latency_most_, ranks, at);
    r_.p50_ns = at[0];
    r_.p99_ns = at[1];
    r_.p999_ns = at[2];
  }
}

}  // namespace secmode::sim::detail
