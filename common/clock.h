// Clocks for measurement: a monotonic nanosecond clock and the x86 TSC.
//
// Cycle figures in reports are TSC ticks (constant rate, not core cycles
// under turbo); TscGhz() says the rate so a reader can convert.
#ifndef SECMODE_COMMON_CLOCK_H_
#define SECMODE_COMMON_CLOCK_H_

#include <cstdint>
#include <string>

namespace secmode::common {

// CLOCK_MONOTONIC in nanoseconds.
uint64_t NowNs();
// TSC ticks, or NowNs() where there is no invariant TSC.
uint64_t ReadCycles();
// Ticks of ReadCycles() per nanosecond, calibrated once (about 20 ms) and
// cached; thread-safe.
double TscGhz();
// "tsc" or "monotonic-ns": what ReadCycles counts.
const char* CycleSource();
// ISO-8601 UTC with seconds, "2026-11-29T18:40:00Z".
std::string UtcTimestamp();

}  // namespace secmode::common

#endif  // SECMODE_COMMON_CLOCK_H_
