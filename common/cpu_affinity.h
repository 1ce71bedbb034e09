// CPU affinity of the calling thread: which CPUs it may run on, and a scope
// that pins it to one CPU and restores what it had on leaving
// (sched_setaffinity on the thread only; threads and processes started
// inside the scope inherit the pin, so a caller pins around measuring loops
// that start none). Used by `secmode run --pin CPU` for the micro figures.
#ifndef SECMODE_COMMON_CPU_AFFINITY_H_
#define SECMODE_COMMON_CPU_AFFINITY_H_

#include <sched.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace secmode::common {

// The CPUs the calling thread may run on, ascending.
std::vector<int> AllowedCpus();
// "0-3,6" for {0,1,2,3,6}.
std::string CpuListText(const std::vector<int>& cpus);
// Ok when the calling thread may run on `cpu`; InvalidArgument naming the
// CPUs it may run on otherwise.
Status CheckCpuAllowed(int cpu);

class CpuPin {
 public:
  // Pins the calling thread to `cpu`; CheckCpuAllowed's error when `cpu` is
  // not one it may run on.
  static Result<CpuPin> Pin(int cpu);
  CpuPin(CpuPin&& other) noexcept;
  CpuPin& operator=(CpuPin&&) = delete;
  CpuPin(const CpuPin&) = delete;
  ~CpuPin();  // restores the thread's previous affinity

 private:
  explicit CpuPin(const cpu_set_t& previous) : previous_(previous) {}
  cpu_set_t previous_;
  bool active_ = true;
};

}  // namespace secmode::common

#endif  // SECMODE_COMMON_CPU_AFFINITY_H_
