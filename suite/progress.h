// How far a run is, for whoever shows it (`secmode run`'s line on a
// terminal, cli/terminal_progress.h). The suite plans its steps before the
// first (one per micro mode, then one per section that applies), each with
// the seconds its options budget for it (PlannedSeconds), and says when each
// starts and ends. The time left is an estimate, said as one: the planned
// seconds still to go, scaled by how the finished steps' wall time compared
// with their plan on this machine (EstimateSecondsLeft).
#ifndef SECMODE_SUITE_PROGRESS_H_
#define SECMODE_SUITE_PROGRESS_H_

#include <string>
#include <vector>

namespace secmode::suite {

struct ProgressStep {
  std::string name;            // "measuring krb5p:...", "section e2e"
  double planned_seconds = 0;  // from the options' budgets; 0 when too small to say
};

// Called from the thread running the suite, in order: Planned once, then
// Started(i) and Finished(i) for each step that runs (a step skipped by an
// interruption is neither started nor finished).
class ProgressListener {
 public:
  virtual ~ProgressListener() = default;
  virtual void Planned(const std::vector<ProgressStep>& steps) = 0;
  virtual void Started(size_t step) = 0;
  virtual void Finished(size_t step) = 0;
};

// Seconds left when step `current` has run `current_elapsed` seconds and the
// steps before it took `elapsed_before` seconds for `planned_before` planned
// ones: every planned second still to go (the rest of the current step,
// never below 0, and all after it) times elapsed_before / planned_before,
// that ratio held within [0.25, 4] (1 before any step finished).
double EstimateSecondsLeft(const std::vector<ProgressStep>& steps, size_t current,
                           double current_elapsed, double elapsed_before, double planned_before);

// "[ 5/31] NAME · 0:42 elapsed · about 6 min left" in at most `width`
// columns (the name is cut first; under a second left: "finishing").
std::string ProgressLine(const std::vector<ProgressStep>& steps, size_t current, double elapsed,
                         double seconds_left, size_t width);

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_PROGRESS_H_
