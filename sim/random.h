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
// -std=c++20, so the compiler does not contract them into FMAs).
//
// Not thread-safe: one Rng per simulation.
#ifndef SECMODE_SIM_RANDOM_H_
#define SECMODE_SIM_RANDOM_H_

#include <cstdint>

namespace secmode::sim {

// splitmix64 step: used to expand a 64-bit seed into the xoshiro state.
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Natural logarithm of x > 0 (x <= 0 gives a large negative number), to a
// relative error below 1e-14, from the IEEE exponent and the atanh series.
double PortableLog(double x);
// e^x for |x| < 700, to about 1 ulp.
double PortableExp(double x);

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
  double Exponential(double mean) { return -mean * PortableLog(Uniform()); }

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
