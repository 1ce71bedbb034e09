// Recommend: "what should I set?" For a base scenario (nconnect, I/O size,
// RTT, server window, reaction, skew ...), the largest slot count with no
// window violations, and the goodput it gives; and the goodput of capping
// the spread of numbers in flight at the window instead.
//
// "No expected violations" means: zero violations in every one of `seeds`
// runs at that slot count and at every smaller candidate (powers of two up
// to max_slots), so a lucky seed at one size does not count.
#ifndef SECMODE_SIM_RECOMMEND_H_
#define SECMODE_SIM_RECOMMEND_H_

#include <string>

#include "common/status.h"
#include "sim/scenario.h"

namespace secmode::sim {

struct Recommendation {
  int64_t max_safe_slots = 0;      // 0: even one slot saw violations
  ScenarioResult at_max_safe;      // seed = base seed
  int64_t first_unsafe_slots = 0;  // the next candidate, which had violations (0: none)
  int64_t capped_slots = 0;        // slots used for the spread-cap alternative
  int64_t spread_cap = 0;          // = window
  ScenarioResult with_cap;

  std::string ToText(const Scenario& base) const;
};

common::Result<Recommendation> Recommend(const Scenario& base, int64_t max_slots = 1024,
                                         int seeds = 3);

}  // namespace secmode::sim

#endif  // SECMODE_SIM_RECOMMEND_H_
