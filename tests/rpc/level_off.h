// Test helper: whether a resource of a process (resident memory,
// descriptors, threads, contexts) sampled under a cyclic load has levelled
// off, the rule of the soak test (soak_test.cc).
//
// The load runs in cycles (a quiet phase, then an attack), so a series
// rises and falls within each cycle; what must not grow is where it falls
// back to (the cycle's floor, its lowest sample) and how high it goes (the
// cycle's peak, its highest). The rule: the median of the floors of the
// cycles in the last quarter of the run exceeds the median of the floors in
// the second quarter by no more than `slack`, and likewise the peaks. The
// first quarter is left out: allocator arenas, thread stacks and caches
// fill once, in the first cycles. Medians, so in a long run one cycle's odd
// sample (the 1 Hz sampler catching a peak or missing it) moves nothing; in
// a 60 s run of 4 cycles each quarter is one cycle. A series whose cap the
// load reaches every cycle (the context table) peaks at the cap, less what
// the sampler catches being evicted: it is judged by its floor alone
// (floor_ok), the peak only against the cap. A leak of r
// units a second raises the late medians by about r x (the run's length) /
// 2 over the early ones: one descriptor or context a second, 30 in a 60 s
// run, beyond a slack of 8 (tests/rpc/soak_test.cc has the constructed
// series, leaking and not).
#ifndef SECMODE_TESTS_RPC_LEVEL_OFF_H_
#define SECMODE_TESTS_RPC_LEVEL_OFF_H_

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace secmode::rpc::soak {

// One sample of a series: the cycle it was taken in (0, 1, ...) and its
// value.
struct Sample {
  int cycle = 0;
  double value = 0;
};

struct LevelOff {
  bool ok = false;                           // floor_ok and peak_ok
  bool floor_ok = false, peak_ok = false;  // each part of the rule
  int cycles = 0;
  // The medians of the cycles' floors and peaks, second quarter and last.
  double early_floor = 0, late_floor = 0, early_peak = 0, late_peak = 0;
  std::vector<double> floors, peaks;  // each cycle's
  std::string why;                    // when not ok: what grew, or too few cycles
};

inline double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The rule above over `samples` (in any order; every cycle from 0 to the
// last must have at least one). Needs four cycles at least.
inline LevelOff JudgeLevelOff(const std::vector<Sample>& samples, double slack) {
  LevelOff r;
  int n = 0;
  for (const Sample& s : samples) n = std::max(n, s.cycle + 1);
  r.cycles = n;
  std::vector<double> floors(static_cast<size_t>(n), 0), peaks(static_cast<size_t>(n), 0);
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (const Sample& s : samples) {
    if (s.cycle < 0) continue;
    const size_t c = static_cast<size_t>(s.cycle);
    floors[c] = seen[c] ? std::min(floors[c], s.value) : s.value;
    peaks[c] = seen[c] ? std::max(peaks[c], s.value) : s.value;
    seen[c] = true;
  }
  if (n < 4 || std::find(seen.begin(), seen.end(), false) != seen.end()) {
    r.why = "needs samples of 4 cycles or more, each cycle sampled; has " + std::to_string(n);
    return r;
  }
  const int q = n / 4;
  auto median = [&](const std::vector<double>& v, int from, int to) {
    return MedianOf(std::vector<double>(v.begin() + from, v.begin() + to));
  };
  r.early_floor = median(floors, q, 2 * q);
  r.late_floor = median(floors, n - q, n);
  r.early_peak = median(peaks, q, 2 * q);
  r.late_peak = median(peaks, n - q, n);
  char buf[256];
  r.floor_ok = r.late_floor <= r.early_floor + slack;
  r.peak_ok = r.late_peak <= r.early_peak + slack;
  if (!r.floor_ok) {
    snprintf(buf, sizeof buf, "floor grew from %.1f to %.1f (slack %.1f); ", r.early_floor,
             r.late_floor, slack);
    r.why += buf;
  }
  if (!r.peak_ok) {
    snprintf(buf, sizeof buf, "peak grew from %.1f to %.1f (slack %.1f)", r.early_peak, r.late_peak,
             slack);
    r.why += buf;
  }
  r.ok = r.why.empty();
  r.floors = std::move(floors);
  r.peaks = std::move(peaks);
  return r;
}

}  // namespace secmode::rpc::soak

#endif  // SECMODE_TESTS_RPC_LEVEL_OFF_H_
