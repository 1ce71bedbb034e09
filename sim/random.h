// Rng: the simulator's deterministic random source, and the distributions
// the scenarios use, computed so that one seed gives the same numbers bit
// for bit on every platform.
//
// Why not <random>: the std engines are portable but the std distributions
// (exponential, lognormal ...) are not specified bit for bit and differ
// between libstdc++ and libc++; libm's log/exp may also differ in the last
// bit between C libraries. So the generator is xoshiro256** (Blackman and
// Vigna), seeded through splitmix64, and log/exp below are written with
// plain IEEE-754 + - * / (correctly rounded everywhere; the build uses
// -std=c++20, so the compiler does not contract them into FMAs). The
// exponential distribution, the simulator's most drawn (a few per RPC), is
// drawn by the ziggurat, whose tables the compiler computes the same way:
// most draws cost a table lookup and a multiplication, no logarithm.
//
// Not thread-safe: one Rng per simulation.
#ifndef SECMODE_SIM_RANDOM_H_
#define SECMODE_SIM_RANDOM_H_

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace secmode::sim {

// splitmix64 step: used to expand a 64-bit seed into the xoshiro state.
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

namespace log_detail {
// ln(c) and 1/c for the starts c = 1 + i/128 of 128 intervals of [1, 2), computed by the compiler
// (constant evaluation is IEEE-754 with round-to-nearest, so the table is the same bit for bit
// everywhere).
struct Entry {
  double c, inv_c, ln_c;
};
constexpr double SeriesLn(double c) {  // 2 atanh((c-1)/(c+1)), c in [1, 2)
  const double s = (c - 1.0) / (c + 1.0), s2 = s * s;
  double term = s, sum = 0;
  for (int k = 1; k < 90; k += 2) {
    sum += term / k;
    term *= s2;
  }
  return 2.0 * sum;
}
constexpr std::array<Entry, 128> MakeTable() {
  std::array<Entry, 128> t{};
  for (int i = 0; i < 128; ++i) {
    const double c = 1.0 + i / 128.0;
    t[static_cast<size_t>(i)] = {c, 1.0 / c, SeriesLn(c)};
  }
  return t;
}
inline constexpr std::array<Entry, 128> kTable = MakeTable();
// ln 2 split so that e * kLn2Hi is exact for |e| < 2^11.
inline constexpr double kLn2Hi = 6.93147180369123816490e-01;
inline constexpr double kLn2Lo = 1.90821492927058770002e-10;
}  // namespace log_detail

// Natural logarithm of x > 0 (x <= 0 gives a large negative number), to an
// error below 1e-14 x max(1, |ln x|) (absolute near x = 1, where ln 2 of the
// exponent cancels): x = 2^e m, m in [1, 2), m = c (1 + t) with c the start
// of m's 1/128 interval (a table; ln 1 is exactly 0), 0 <= t < 1/128, and
// ln(1 + t) by its series to t^7 (the next term is below 3e-16 of t).
// Inline, and no division: the simulator draws a few of these per RPC.
inline double PortableLog(double x) {
  if (!(x > 0)) return -1e308;
  uint64_t bits = std::bit_cast<uint64_t>(x);
  int e = static_cast<int>((bits >> 52) & 0x7ff);
  if (e == 0) {  // subnormal: scale up exactly, then decompose.
    bits = std::bit_cast<uint64_t>(x * 0x1.0p54);
    e = static_cast<int>((bits >> 52) & 0x7ff) - 54;
  }
  e -= 1023;
  bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
  const double m = std::bit_cast<double>(bits);
  const log_detail::Entry& en = log_detail::kTable[(bits >> 45) & 127];
  const double t = (m - en.c) * en.inv_c;  // m - c is exact (same binade)
  // The series in pairs of terms (Estrin's scheme): four multiplications
  // deep instead of Horner's fourteen dependent operations, the simulator's
  // hottest arithmetic (a few logs per simulated RPC).
  const double t2 = t * t;
  const double t3 = t2 * t;
  const double t5 = t3 * t2;
  const double p = (t * (1.0 + t * (-1.0 / 2)) + t3 * (1.0 / 3 + t * (-1.0 / 4))) +
                   (t5 * (1.0 / 5 + t * (-1.0 / 6)) + (t5 * t2) * (1.0 / 7));
  const double ed = static_cast<double>(e);
  return ed * log_detail::kLn2Hi + (ed * log_detail::kLn2Lo + (en.ln_c + p));
}
// e^x for |x| < 700, to about 1 ulp.
double PortableExp(double x);

namespace ziggurat_detail {
// ln and exp evaluated by the compiler (IEEE-754 + - * /, the same table
// bit for bit everywhere), for building the ziggurat below.
constexpr double ConstLn(double y) {  // y > 0
  int e = 0;
  while (y >= 2.0) {
    y /= 2.0;
    ++e;
  }
  while (y < 1.0) {
    y *= 2.0;
    --e;
  }
  return e * log_detail::kLn2Hi + (e * log_detail::kLn2Lo + log_detail::SeriesLn(y));
}
constexpr double ConstExp(double x) {  // |x| < 700
  const double k = x < 0 ? -static_cast<double>(static_cast<long long>(-x / 0.6931471805599453 + 0.5))
                         : static_cast<double>(static_cast<long long>(x / 0.6931471805599453 + 0.5));
  const double r = (x - k * log_detail::kLn2Hi) - k * log_detail::kLn2Lo;
  double term = 1.0, sum = 1.0;
  for (int n = 1; n <= 25; ++n) {
    term = term * r / n;
    sum += term;
  }
  for (long long i = 0; i < static_cast<long long>(k); ++i) sum *= 2.0;
  for (long long i = 0; i < -static_cast<long long>(k); ++i) sum /= 2.0;
  return sum;
}
// The exponential distribution's ziggurat (Marsaglia and Tsang, "The
// Ziggurat Method for Generating Random Variables", 2000): 256 layers of
// equal area v under e^-x; layer i >= 1 spans x in [0, x[i]) and heights
// [f[i], f[i+1]] with f = e^-x; layer 0 is the rectangle [0, r) x [0, f(r)]
// with the tail beyond r = x[1] folded in as the width x[0] = v / f(r)
// (f[0] is not used); x[256] = 0.
struct Table {
  std::array<double, 257> x{}, f{};
};
constexpr Table MakeExponentialTable() {
  constexpr double r = 7.69711747013104972;
  constexpr double v = 3.949659822581572e-3;
  Table t;
  t.x[0] = v / ConstExp(-r);
  t.x[1] = r;
  for (size_t i = 2; i < 256; ++i) t.x[i] = -ConstLn(ConstExp(-t.x[i - 1]) + v / t.x[i - 1]);
  t.x[256] = 0;
  for (size_t i = 0; i < 257; ++i) t.f[i] = ConstExp(-t.x[i]);
  return t;
}
inline constexpr Table kExponential = MakeExponentialTable();
}  // namespace ziggurat_detail

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t sm = seed;
    for (auto& w : s_) w = SplitMix64(sm);
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in (0, 1): 53 random bits, never exactly 0 (log-safe).
  double Uniform() { return (static_cast<double>(Next() >> 11) + 0.5) * 0x1.0p-53; }

  // Exponential with the given mean.
  double Exponential(double mean) { return mean * StandardExponential(); }

  // Exponential with mean 1, by the ziggurat (ziggurat_detail): one draw
  // picks a layer (its low 8 bits) and a point across it (its high 53); 98.9%
  // of draws lie inside their layer's rectangle under the curve and are
  // returned at once, without a logarithm. The rest are the tail beyond r
  // (r + an exponential, by the logarithm) or a wedge (accepted under the
  // curve, else drawn again).
  double StandardExponential() {
    const ziggurat_detail::Table& z = ziggurat_detail::kExponential;
    while (true) {
      const uint64_t u = Next();
      const size_t i = u & 0xff;
      const double x = static_cast<double>(u >> 11) * 0x1.0p-53 * z.x[i];
      if (x < z.x[i + 1]) return x;
      if (i == 0) return z.x[1] - PortableLog(Uniform());
      if (z.f[i] + (z.f[i + 1] - z.f[i]) * Uniform() < PortableExp(-x)) return x;
    }
  }

  // Standard normal by Marsaglia's polar method (needs only log and sqrt;
  // sqrt is correctly rounded by IEEE-754).
  double Normal();

  // Lognormal with the given mean and shape sigma (the sigma of the
  // underlying normal): exp(mu + sigma Z) with mu = ln(mean) - sigma^2/2.
  double LogNormal(double mean, double sigma);

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
  bool have_spare_ = false;
  double spare_ = 0;
};

}  // namespace secmode::sim

#endif  // SECMODE_SIM_RANDOM_H_
