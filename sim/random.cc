#include "sim/random.h"

#include <array>
#include <cmath>
#include <cstring>

namespace secmode::sim {

namespace {
constexpr double kLn2 = 0.6931471805599453094;  // rounded ln 2
using log_detail::kLn2Hi;
using log_detail::kLn2Lo;
constexpr std::array<double, 15> MakeInverseFactorials() {
  std::array<double, 15> f{};
  double v = 1.0;
  for (size_t n = 0; n < f.size(); ++n) {
    if (n > 0) v /= static_cast<double>(n);
    f[n] = v;
  }
  return f;
}
constexpr std::array<double, 15> kInverseFactorial = MakeInverseFactorials();
}  // namespace

double PortableExp(double x) {
  if (x > 709) x = 709;
  if (x < -745) return 0;
  // x = k ln2 + r with |r| <= ln2/2.
  const double kd = std::floor(x / kLn2 + 0.5);
  const int k = static_cast<int>(kd);
  const double r = (x - kd * kLn2Hi) - kd * kLn2Lo;
  // e^r by its Taylor series to r^14 (r^15/15! is below 1e-18 at |r| =
  // ln2/2), Horner's scheme on 1/n! computed by the compiler: no division.
  double sum = kInverseFactorial[14];
  for (int n = 13; n >= 0; --n) sum = sum * r + kInverseFactorial[static_cast<size_t>(n)];
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
