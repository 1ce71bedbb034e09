#include "common/stats.h"

#include <libalglib/dataanalysis.h>
#include <libalglib/specialfunctions.h>
#include <libalglib/statistics.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace secmode::common {
namespace {

alglib::real_1d_array ToAlglib(const std::vector<double>& v) {
  alglib::real_1d_array out;
  out.setcontent(static_cast<alglib::ae_int_t>(v.size()), v.data());
  return out;
}

}  // namespace

double Median(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double m = 0;
  try {
    alglib::samplemedian(ToAlglib(values), m);
  } catch (const alglib::ap_error&) {
    return 0;  // ALGLIB refuses only an empty array, excluded above
  }
  return m;
}

Spread Summarize(const std::vector<double>& values) {
  Spread s;
  s.n = values.size();
  if (values.empty()) return s;
  s.median = Median(values);
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  double mean = 0, variance = 0, skewness = 0, kurtosis = 0;
  try {
    alglib::samplemoments(ToAlglib(values), mean, variance, skewness, kurtosis);
  } catch (const alglib::ap_error&) {
    mean = values.front();
    variance = 0;
  }
  s.mean = mean;
  s.cv = s.n > 1 && mean != 0 ? std::sqrt(std::max(0.0, variance)) / std::fabs(mean) : 0;
  return s;
}

LineFit FitLine(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit f;
  f.n = x.size();
  if (x.size() != y.size() || x.size() < 2) return f;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) return f;
  }
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  if (*lo == *hi) return f;
  if (x.size() == 2) {  // ALGLIB's regression needs 3
    f.slope = (y[1] - y[0]) / (x[1] - x[0]);
    f.intercept = y[0] - f.slope * x[0];
    f.slope_se = std::numeric_limits<double>::quiet_NaN();
    f.ok = std::isfinite(f.slope) && std::isfinite(f.intercept);
    return f;
  }
  try {
    alglib::real_2d_array xy;
    xy.setlength(static_cast<alglib::ae_int_t>(x.size()), 2);
    for (size_t i = 0; i < x.size(); ++i) {
      xy[static_cast<alglib::ae_int_t>(i)][0] = x[i];
      xy[static_cast<alglib::ae_int_t>(i)][1] = y[i];
    }
    alglib::ae_int_t info = 0, nvars = 0;
    alglib::linearmodel lm;
    alglib::lrreport ar;
    alglib::lrbuild(xy, static_cast<alglib::ae_int_t>(x.size()), 1, info, lm, ar);
    if (info != 1) return f;
    alglib::real_1d_array v;
    alglib::lrunpack(lm, v, nvars);
    f.slope = v[0];
    f.intercept = v[1];
    f.slope_se = std::sqrt(std::max(0.0, ar.c[0][0]));
    f.ok = std::isfinite(f.slope) && std::isfinite(f.intercept);
  } catch (const alglib::ap_error&) {
    return LineFit{false, x.size()};
  }
  return f;
}

namespace {

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// The sample variance (n - 1).
double Variance(const std::vector<double>& v, double mean) {
  double sum = 0;
  for (double x : v) sum += (x - mean) * (x - mean);
  return sum / static_cast<double>(v.size() - 1);
}

}  // namespace

double StudentTQuantile(double df, double alpha) {
  if (!(df > 0 && alpha > 0 && alpha < 1)) return 0;
  // Through the incomplete beta: P(|T| > q) = I_{df / (df + q^2)}(df / 2, 1 / 2).
  double x = 1;
  try {
    x = alglib::invincompletebeta(df / 2, 0.5, alpha);
  } catch (const alglib::ap_error&) {
    return 0;
  }
  return x > 0 ? std::sqrt(df * (1 - x) / x) : 0;
}

Result<MedianInterval> MedianConfidenceInterval(std::vector<double> values, double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    return Status::InvalidArgument("median interval: confidence must lie in (0, 1)");
  }
  for (double x : values) {
    if (!std::isfinite(x)) return Status::InvalidArgument("median interval: a value is not finite");
  }
  MedianInterval m;
  m.n = values.size();
  if (values.empty()) return m;
  std::sort(values.begin(), values.end());
  const auto n = static_cast<alglib::ae_int_t>(m.n);
  // coverage(k) = 1 - 2 P(B <= k - 1) falls as k grows; k = 1 is the range.
  auto coverage = [n](size_t k) {
    return 1 - 2 * alglib::binomialdistribution(static_cast<alglib::ae_int_t>(k - 1), n, 0.5);
  };
  size_t k = 1;
  try {
    while (2 * (k + 1) <= m.n && coverage(k + 1) >= confidence) ++k;
    m.coverage = coverage(k);
  } catch (const alglib::ap_error& e) {
    return Status::Internal("median interval: ALGLIB: " + std::string(e.msg));
  }
  m.k = k;
  m.lo = values[k - 1];
  m.hi = values[m.n - k];
  return m;
}

Result<TTest> WelchTTest(const std::vector<double>& a, const std::vector<double>& b, double alpha) {
  if (!(alpha > 0 && alpha < 1)) {
    return Status::InvalidArgument("t test: alpha must lie in (0, 1)");
  }
  for (const auto* v : {&a, &b}) {
    for (double x : *v) {
      if (!std::isfinite(x)) return Status::InvalidArgument("t test: a value is not finite");
    }
  }
  TTest t;
  if (a.empty() || b.empty()) return t;
  const double mean_a = Mean(a), mean_b = Mean(b);
  t.difference = t.low = t.high = mean_b - mean_a;
  if (a.size() < kMinTTestSamples || b.size() < kMinTTestSamples) return t;
  const double va = Variance(a, mean_a) / static_cast<double>(a.size());
  const double vb = Variance(b, mean_b) / static_cast<double>(b.size());
  if (va + vb <= 0) return t;
  t.applicable = true;
  t.df =
      (va + vb) * (va + vb) /
      (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
  double both = 1, left = 1, right = 1;
  try {
    alglib::unequalvariancettest(ToAlglib(b), static_cast<alglib::ae_int_t>(b.size()), ToAlglib(a),
                                 static_cast<alglib::ae_int_t>(a.size()), both, left, right);
  } catch (const alglib::ap_error& e) {
    return Status::Internal("t test: ALGLIB: " + std::string(e.msg));
  }
  t.p = std::clamp(both, 0.0, 1.0);
  const double half = StudentTQuantile(t.df, alpha) * std::sqrt(va + vb);
  t.low = t.difference - half;
  t.high = t.difference + half;
  return t;
}

}  // namespace secmode::common
