#include "sim/random.h"

#include <cmath>
#include <cstring>

namespace secmode::sim {

namespace {
constexpr double kLn2 = 0.6931471805599453094;  // rounded ln 2
using log_detail::kLn2Hi;
using log_detail::kLn2Lo;
}  // namespace

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
