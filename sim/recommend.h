// Recommend: "what should I set?" For a base scenario (nconnect, I/O size,
// RTT, server window, reaction, skew, threads and cores ...), the largest
// slot count with no window violations and the goodput it gives, and beside
// it the alternatives that keep more slots: the same slots as given with no
// change, with one context per connection, with the spread of numbers in
// flight capped at the window, and with re-encode at transmit.
//
// "No expected violations" means: zero violations in every one of `seeds`
// runs at that slot count and at every smaller candidate (powers of two up
// to max_slots), so a lucky seed at one size does not count. Alternatives
// run the same seeds and report the worst of them.
#ifndef SECMODE_SIM_RECOMMEND_H_
#define SECMODE_SIM_RECOMMEND_H_

#include <string>
#include <vector>

#include "common/status.h"
#include "sim/scenario.h"

namespace secmode::sim {

struct Alternative {
  std::string name;              // "as given", "per-connection contexts", ...
  Scenario scenario;             // what was simulated (seed = base seed)
  ScenarioResult result;         // at the base seed
  int64_t worst_violations = 0;  // over the seeds
  double worst_ops_per_s = 0;    // lowest goodput over the seeds
};

struct Recommendation {
  int64_t max_safe_slots = 0;      // 0: even one slot saw violations
  ScenarioResult at_max_safe;      // seed = base seed
  int64_t first_unsafe_slots = 0;  // the next candidate, which had violations (0: none)
  int64_t alternative_slots = 0;   // slots of the alternatives: max(base, first unsafe)
  std::vector<Alternative> alternatives;

  // The answer, with the model's assumptions (window, reaction, skew,
  // network, crypto cost, threads, cores and their pauses) stated first.
  std::string ToText(const Scenario& base) const;
};

common::Result<Recommendation> Recommend(const Scenario& base, int64_t max_slots = 1024,
                                         int seeds = 3);

// The assumptions of a scenario in words, one per line ("  window 32, ...").
std::string AssumptionsText(const Scenario& s);

}  // namespace secmode::sim

#endif  // SECMODE_SIM_RECOMMEND_H_
