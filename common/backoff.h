// Backoff: the waits between attempts at something that keeps failing at
// once (a load generator reconnecting to a server that closes every
// connection as soon as it accepts it, e.g. one at its connection cap).
//
// The first attempt after a success (or the first ever) goes at once; each
// further one waits `initial_ns`, then twice as long each time, up to
// `max_ns`. Each wait is jittered uniformly into [w/2, w] so that many
// connections that failed together do not retry in step. Reset() after a
// success (for a connection: one that answered something).
//
// So the attempts in T seconds of failures are at most about
// log2(max_ns / initial_ns) + 2 + 2T / max_ns-in-seconds.
//
// Thread safety: none; one Backoff per thing retried, used by one thread.
#ifndef SECMODE_COMMON_BACKOFF_H_
#define SECMODE_COMMON_BACKOFF_H_

#include <cstdint>
#include <random>

namespace secmode::common {

class Backoff {
 public:
  struct Options {
    uint64_t initial_ns = 1000000;  // 1 ms
    uint64_t max_ns = 1000000000;   // 1 s
  };
  // `seed` drives the jitter (the same seed, the same waits).
  Backoff(Options options, uint64_t seed);

  // The wait before the next attempt, in ns: 0 for the first after
  // construction or Reset(), then as above.
  uint64_t Next();
  void Reset() { failures_ = 0; }
  // Attempts since the last success (calls to Next since Reset).
  uint32_t failures() const { return failures_; }

 private:
  Options o_;
  std::mt19937_64 rng_;
  uint32_t failures_ = 0;
};

}  // namespace secmode::common

#endif  // SECMODE_COMMON_BACKOFF_H_
