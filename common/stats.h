// Statistics over repeated measurements, from ALGLIB (Debian's
// libalglib-dev): the median, the spread of a figure's repetitions, a line
// fit, the order-statistics interval of a median, and Welch's t test with its confidence interval, which `secmode
// compare` bases its verdicts on (over runs, not over the repetitions
// inside one run). ALGLIB throws; nothing here does.
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

// Welch's two-sample t test of "a and b have one mean" (variances not
// assumed equal; Welch-Satterthwaite degrees of freedom), with the
// confidence interval of mean(b) - mean(a) at level 1 - alpha. p is
// ALGLIB's unequalvariancettest; the interval's t quantile comes from
// ALGLIB's inverse incomplete beta, which takes the fractional degrees of
// freedom Welch gives.
struct TTest {
  // False when the test cannot tell: fewer than 2 values on a side, or no
  // spread on either side (every value of a the same and every value of b
  // the same: there is no variation to measure a difference against).
  bool applicable = false;
  double p = 1;           // two-sided p-value; 1 when not applicable
  double difference = 0;  // mean(b) - mean(a), also when not applicable
  double low = 0,
         high = 0;  // the interval of the difference; both = difference when not applicable
  double df = 0;    // degrees of freedom
};
inline constexpr size_t kMinTTestSamples = 2;
// InvalidArgument for a value that is not finite or alpha outside (0, 1).
Result<TTest> WelchTTest(const std::vector<double>& a, const std::vector<double>& b,
                         double alpha = 0.05);

// The distribution-free confidence interval of a median: of the n values
// sorted, the k-th smallest and the k-th largest (order statistics), with
// the largest k whose interval holds the population's median with
// probability `coverage` = 1 - 2 P(Binomial(n, 1/2) <= k - 1) of at least
// `confidence` (ALGLIB's binomial distribution). No assumption about the
// values' distribution beyond independence: the interval of the typical
// run, not of every run. When n is too small to reach `confidence` (n < 6
// at 0.95), the whole range (k = 1) and the coverage it has. No values:
// n = 0, k = 0, an interval of 0..0. `confidence` outside (0, 1) or a value
// that is not finite: InvalidArgument.
struct MedianInterval {
  size_t n = 0, k = 0;
  double lo = 0, hi = 0;
  double coverage = 0;
};
Result<MedianInterval> MedianConfidenceInterval(std::vector<double> values,
                                                double confidence = 0.95);

// The two-sided quantile q of Student's t with `df` degrees of freedom:
// P(|T| > q) = alpha. df > 0 (fractional allowed), alpha in (0, 1); 0
// otherwise.
double StudentTQuantile(double df, double alpha);

}  // namespace secmode::common

#endif  // SECMODE_COMMON_STATS_H_
