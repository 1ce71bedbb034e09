// MachineInfo: the fingerprint that labels every published number.
#ifndef SECMODE_COMMON_MACHINE_H_
#define SECMODE_COMMON_MACHINE_H_

#include <string>
#include <vector>

namespace secmode::common {

struct MachineInfo {
  std::string cpu_model;
  int logical_cpus = 0;
  // The flags that matter for this work's crypto, those the CPU has:
  // aes, vaes, pclmulqdq, vpclmulqdq, sha_ni, avx2, avx512f ...
  std::vector<std::string> cpu_flags;
  std::string kernel;  // uname -srm
  std::string hostname;
  std::string openssl;     // runtime OpenSSL_version()
  std::string krb5;        // MIT krb5 version the binary was built against
  std::string compiler;    // "g++ 12.2.0" / "clang 14.0.6"
  std::string build_type;  // CMAKE_BUILD_TYPE, plus "+asan" etc.
  double tsc_ghz = 0;
};

// Logical CPUs the threads of this process can run on (at least 1).
int LogicalCpus();

// This machine's host name, or "unknown".
std::string Hostname();

// Reads /proc/cpuinfo, uname and library versions. Never fails: unknown
// fields are "unknown".
MachineInfo ReadMachineInfo();

}  // namespace secmode::common

#endif  // SECMODE_COMMON_MACHINE_H_
