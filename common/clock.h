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
// CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID):
// what a bound or engine comparison costs in CPU, which other processes on
// a shared machine do not inflate the way they inflate wall time.
uint64_t ThreadCpuNs();
// CPU time of the whole process, all its threads (CLOCK_PROCESS_CPUTIME_ID).
uint64_t ProcessCpuNs();
// TSC ticks, or NowNs() where there is no invariant TSC.
uint64_t ReadCycles();
// Ticks of ReadCycles() per nanosecond, calibrated once (about 20 ms) and
// cached; thread-safe.
double TscGhz();
// "tsc" or "monotonic-ns": what ReadCycles counts.
const char* CycleSource();
// The current UTC time in strftime `format`; by default ISO-8601 with
// seconds, "2026-11-29T18:40:00Z".
std::string UtcTimestamp(const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace secmode::common

#endif  // SECMODE_COMMON_CLOCK_H_
