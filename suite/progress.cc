#include "suite/progress.h"

#include <algorithm>
#include <cstdio>

namespace secmode::suite {

namespace {

std::string Clock(double seconds) {
  const long s = seconds > 0 ? static_cast<long>(seconds) : 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

std::string Left(double seconds) {
  if (seconds < 1) return "finishing";
  if (seconds < 90) return "about " + std::to_string(static_cast<long>(seconds + 0.5)) + " s left";
  return "about " + std::to_string(static_cast<long>(seconds / 60 + 0.5)) + " min left";
}

}  // namespace

double EstimateSecondsLeft(const std::vector<ProgressStep>& steps, size_t current,
                           double current_elapsed, double elapsed_before, double planned_before) {
  const double rate =
      planned_before > 0 ? std::clamp(elapsed_before / planned_before, 0.25, 4.0) : 1.0;
  double left = 0;
  if (current < steps.size()) {
    left += std::max(0.0, steps[current].planned_seconds * rate - current_elapsed);
  }
  for (size_t i = current + 1; i < steps.size(); ++i) left += steps[i].planned_seconds * rate;
  return left;
}

std::string ProgressLine(const std::vector<suite::ProgressStep>& steps, size_t current,
                         double elapsed, double seconds_left, size_t width) {
  const std::string total = std::to_string(steps.size());
  std::string index = std::to_string(current + 1);
  index.insert(0, total.size() > index.size() ? total.size() - index.size() : 0, ' ');
  const std::string tail = " · " + Clock(elapsed) + " elapsed · " + Left(seconds_left);
  std::string name = current < steps.size() ? steps[current].name : "";
  const std::string head = "[" + index + "/" + total + "] ";
  // The name gives way first: the counts and times always show.
  const size_t room =
      width > head.size() + tail.size() + 1 ? width - head.size() - tail.size() - 1 : 0;
  if (name.size() > room) name = room > 3 ? name.substr(0, room - 3) + "..." : "";
  return head + name + tail;
}

}  // namespace secmode::suite
