// Test helpers about processes: waiting for a condition, whether a process
// runs, and the check every throwaway server's owner must pass: killed any
// way, it leaves neither its server nor its directory behind.
#ifndef SECMODE_TESTS_SUPPORT_PROCESSES_H_
#define SECMODE_TESTS_SUPPORT_PROCESSES_H_

#include <sys/types.h>

#include <functional>
#include <string>

namespace secmode::testing {

// Polls `cond` every 10 ms until it holds or `timeout_ms` pass; its last
// value.
bool WaitUntil(const std::function<bool()>& cond, int timeout_ms);

// Alive and not a zombie (a reparented, killed server may linger as a
// zombie until init reaps it; that is not a running server).
bool ProcessRunning(pid_t pid);

// Runs `start` in a forked child, which then waits; `start` starts a
// throwaway server and returns "DIR PID" (its directory and server pid) or
// "error ...". The child is killed with `sig`; the server must be gone and
// the directory removed within 10 s (GoogleTest failures otherwise). The
// directory `start` named; empty when it failed.
std::string ExpectOwnerDeathCleansUp(const std::function<std::string()>& start, int sig);

}  // namespace secmode::testing

#endif  // SECMODE_TESTS_SUPPORT_PROCESSES_H_
