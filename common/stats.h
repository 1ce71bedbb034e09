// Statistics over repeated measurements, from ALGLIB (Debian's
// libalglib-dev): the median, the spread of a figure's repetitions, and the
// Mann-Whitney U test that `secmode compare` bases its verdicts on (as
// Google Benchmark's compare.py does). ALGLIB throws; nothing here does.
#ifndef SECMODE_COMMON_STATS_H_
#define SECMODE_COMMON_STATS_H_

#include <cstddef>
#include <vector>

#include "common/status.h"

namespace secmode::common {

// The median of `values`; 0 for none.
double Median(const std::vector<double>& values);

// A figure measured `n` times.
struct Spread {
  size_t n = 0;
  double median = 0, mean = 0, min = 0, max = 0;
  // Coefficient of variation: the sample standard deviation (n - 1) over the
  // mean; 0 for fewer than two values or a mean of 0.
  double cv = 0;
};
Spread Summarize(const std::vector<double>& values);

// The least-squares line y = intercept + slope x through points (x[i],
// y[i]) (ALGLIB's linear regression), with the slope's standard error (from
// the fit's covariance, the residuals' RMS as the points' error). Two points
// give the line through them, and a slope_se of NaN (no residual to take an
// error from). `ok` is false for fewer than 2 points, x and y of different
// lengths, a value that is not finite, or x values that do not vary.
struct LineFit {
  bool ok = false;
  size_t n = 0;
  double slope = 0, intercept = 0, slope_se = 0;
};
LineFit FitLine(const std::vector<double>& x, const std::vector<double>& y);

// Two-sided Mann-Whitney U test of "a and b come from one distribution".
struct UTest {
  // False when the test cannot tell: fewer than kMinUTestSamples on a side
  // (ALGLIB's test needs 5; with 3 and 3 no outcome reaches p < 0.05 anyway).
  bool applicable = false;
  double p = 1;  // two-sided p-value; 1 when not applicable
};
inline constexpr size_t kMinUTestSamples = 5;
Result<UTest> MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace secmode::common

#endif  // SECMODE_COMMON_STATS_H_
