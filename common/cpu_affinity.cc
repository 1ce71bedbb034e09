#include "common/cpu_affinity.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace secmode::common {

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

std::string CpuListText(const std::vector<int>& cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(cpus[i]);
    if (j > i) {
      text += '-';
      text += std::to_string(cpus[j]);
    }
    i = j + 1;
  }
  return text.empty() ? "none" : text;
}

Status CheckCpuAllowed(int cpu) {
  const std::vector<int> allowed = AllowedCpus();
  if (std::find(allowed.begin(), allowed.end(), cpu) != allowed.end()) return Status::Ok();
  return Status::InvalidArgument(
      "CPU " + std::to_string(cpu) +
      " is not one this process may run on (allowed: " + CpuListText(allowed) + ")");
}

Result<CpuPin> CpuPin::Pin(int cpu) {
  SECMODE_RETURN_IF_ERROR(CheckCpuAllowed(cpu));
  cpu_set_t previous;
  CPU_ZERO(&previous);
  if (sched_getaffinity(0, sizeof(previous), &previous) != 0) {
    return Status::Internal(std::string("sched_getaffinity: ") + std::strerror(errno));
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) {
    return Status::Internal("sched_setaffinity to CPU " + std::to_string(cpu) + ": " +
                            std::strerror(errno));
  }
  return CpuPin(previous);
}

CpuPin::CpuPin(CpuPin&& other) noexcept : previous_(other.previous_), active_(other.active_) {
  other.active_ = false;
}

CpuPin::~CpuPin() {
  if (active_) sched_setaffinity(0, sizeof(previous_), &previous_);
}

}  // namespace secmode::common
