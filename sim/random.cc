#include "sim/random.h"

#include <cmath>
#include <cstring>

namespace secmode::sim {

namespace {
constexpr double kLn2 = 0.6931471805599453094;  // rounded ln 2
// ln 2 split so that k * kLn2Hi is exact for |k| < 2^11.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
}  // namespace

double PortableLog(double x) {
  if (!(x > 0)) return -1e308;
  // x = m * 2^e with m in [1, 2), by reading the IEEE bits (exact).
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  int e = static_cast<int>((bits >> 52) & 0x7ff);
  if (e == 0) {  // subnormal: scale up exactly, then decompose.
    x *= 0x1.0p54;
    std::memcpy(&bits, &x, sizeof bits);
    e = static_cast<int>((bits >> 52) & 0x7ff) - 54;
  }
  e -= 1023;
  bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
  double m;
  std::memcpy(&m, &bits, sizeof m);
  if (m > 1.4142135623730951) {  // keep m in [sqrt(1/2), sqrt(2))
    m *= 0.5;
    e += 1;
  }
  // ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, s^2 <= 0.0295:
  // the series to s^17 leaves a relative error below 1e-14, far below what a
  // delay distribution needs (the point here is bit-reproducibility, and the
  // simulator calls this a few times per RPC, so fewer terms matter).
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  // Estrin's scheme (a fixed order of operations, so still bit-reproducible)
  // keeps the dependency chain short.
  const double s4 = s2 * s2, s8 = s4 * s4;
  const double p01 = 1.0 + s2 * (1.0 / 3), p23 = 1.0 / 5 + s2 * (1.0 / 7);
  const double p45 = 1.0 / 9 + s2 * (1.0 / 11), p67 = 1.0 / 13 + s2 * (1.0 / 15);
  const double sum = (p01 + s4 * p23) + s8 * ((p45 + s4 * p67) + s8 * (1.0 / 17));
  return e * kLn2Hi + (e * kLn2Lo + 2.0 * s * sum);
}

double PortableExp(double x) {
  if (x > 709) x = 709;
  if (x < -745) return 0;
  // x = k ln2 + r with |r| <= ln2/2; e^r by its Taylor series (r^n/n! for
  // n <= 17 is below 1e-17 of the result at |r| = 0.35).
  const double kd = std::floor(x / kLn2 + 0.5);
  const int k = static_cast<int>(kd);
  const double r = (x - kd * kLn2Hi) - kd * kLn2Lo;
  double term = 1.0, sum = 1.0;
  for (int n = 1; n <= 17; ++n) {
    term = term * r / n;
    sum += term;
  }
  return std::ldexp(sum, k);  // exact scaling by 2^k
}

double Rng::Normal() {
  if (have_spare_) {
    have_spare_ = false;
    return spare_;
  }
  double u, v, q;
  do {
    u = 2.0 * Uniform() - 1.0;
    v = 2.0 * Uniform() - 1.0;
    q = u * u + v * v;
  } while (q >= 1.0 || q == 0.0);
  const double f = std::sqrt(-2.0 * PortableLog(q) / q);
  spare_ = v * f;
  have_spare_ = true;
  return u * f;
}

double Rng::LogNormal(double mean, double sigma) {
  if (mean <= 0) return 0;
  const double mu = PortableLog(mean) - 0.5 * sigma * sigma;
  return PortableExp(mu + sigma * Normal());
}

}  // namespace secmode::sim
