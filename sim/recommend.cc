#include "sim/recommend.h"

#include <cstdio>

#include "sim/simulator.h"

namespace secmode::sim {

using common::Result;
using common::Status;

Result<Recommendation> Recommend(const Scenario& base, int64_t max_slots, int seeds) {
  SECMODE_RETURN_IF_ERROR(base.Validate());
  if (max_slots < 1 || max_slots > kMaxSlots) {
    return Status::InvalidArgument("max-slots: " + std::to_string(max_slots) + ", must be in [1, " +
                                   std::to_string(kMaxSlots) + "]");
  }
  if (seeds < 1) return Status::InvalidArgument("seeds: must be at least 1");
  Recommendation rec;
  for (int64_t slots = 1; slots <= max_slots; slots *= 2) {
    Scenario s = base;
    s.slots = slots;
    s.spread_cap = 0;
    if (!s.Validate().ok()) break;  // e.g. buffers too large at this size
    bool safe = true;
    ScenarioResult first;
    for (int k = 0; k < seeds && safe; ++k) {
      s.seed = base.seed + static_cast<uint64_t>(k);
      SECMODE_ASSIGN_OR_RETURN(ScenarioResult r, Simulate(s));
      if (k == 0) first = r;
      safe = r.violations == 0;
    }
    if (!safe) {
      rec.first_unsafe_slots = slots;
      break;
    }
    rec.max_safe_slots = slots;
    rec.at_max_safe = first;
  }
  // The alternative: keep many slots but never let numbers in flight spread
  // wider than the window (then the server can never see one below it).
  Scenario capped = base;
  capped.slots = std::max<int64_t>(base.slots, rec.first_unsafe_slots);
  capped.spread_cap = base.window;
  if (capped.Validate().ok()) {
    SECMODE_ASSIGN_OR_RETURN(rec.with_cap, Simulate(capped));
    rec.capped_slots = capped.slots;
    rec.spread_cap = capped.spread_cap;
  }
  return rec;
}

std::string Recommendation::ToText(const Scenario& b) const {
  char buf[1024];
  std::string out;
  snprintf(buf, sizeof buf,
           "scenario: nconnect=%d io=%lld %s rtt=%.3f ms window=%lld reaction=%s skew=%.3f ms "
           "(%s) context=%s reencode=%s\n",
           b.nconnect, static_cast<long long>(b.io_size), OpName(b.op), b.rtt_ns / 1e6,
           static_cast<long long>(b.window), ReactionName(b.reaction), b.skew_ns / 1e6,
           SkewWhereName(b.skew_where), b.per_connection_context ? "per-connection" : "shared",
           b.reencode ? "on" : "off");
  out += buf;
  if (max_safe_slots == 0) {
    out += "no slot count is safe: even 1 slot saw window violations\n";
  } else {
    snprintf(buf, sizeof buf,
             "largest safe slot count: %lld (no violations in any seed at this or any smaller "
             "power of two%s)\n  goodput there: %.0f ops/s, %.1f MB/s, p99 %.3f ms\n",
             static_cast<long long>(max_safe_slots),
             first_unsafe_slots
                 ? (", " + std::to_string(first_unsafe_slots) + " slots had violations").c_str()
                 : "; larger counts not tried",
             at_max_safe.ops_per_s, at_max_safe.mb_per_s, at_max_safe.p99_ns / 1e6);
    out += buf;
  }
  if (capped_slots > 0) {
    snprintf(buf, sizeof buf,
             "alternative: %lld slots with the spread of numbers in flight capped at %lld (the "
             "window): %.0f ops/s, %.1f MB/s, %lld violations\n",
             static_cast<long long>(capped_slots), static_cast<long long>(spread_cap),
             with_cap.ops_per_s, with_cap.mb_per_s, static_cast<long long>(with_cap.violations));
    out += buf;
  }
  return out;
}

}  // namespace secmode::sim
