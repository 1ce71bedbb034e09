// tcpdump as a test's capturer: whole frames of one filter on one interface
// (of a network namespace, when `in_namespace` names one) into a pcap file.
#ifndef SECMODE_TESTS_SUPPORT_TCPDUMP_H_
#define SECMODE_TESTS_SUPPORT_TCPDUMP_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/throwaway.h"

namespace secmode::testing {

// tcpdump for `filter` on `interface` into `pcap` (what it says into pcap +
// ".log"), started by the constructor and running once it said it listens;
// `prefix` comes before its command (e.g. lab::NetLab::InClient's
// "ip netns exec NAME", which execs it: the pid is tcpdump's). It dies with
// the test process, also when that is killed: its reaper (common/throwaway.h)
// watches a directory of its own, which Stop() removes. Its kernel buffer
// (-B) holds a whole capture of the tests: beside a busy machine tcpdump can
// be off its CPU for much of a load, and what does not fit meanwhile is
// dropped.
class Tcpdump {
 public:
  Tcpdump(const std::string& filter, const std::string& pcap, const std::string& interface = "lo",
          const std::vector<std::string>& prefix = {});
  ~Tcpdump() { Stop(); }
  Tcpdump(const Tcpdump&) = delete;
  Tcpdump& operator=(const Tcpdump&) = delete;
  // Empty once it runs; else why it does not.
  const std::string& error() const { return error_; }
  // Stops it once the last packets reached the file; what tcpdump said.
  std::string Stop();

 private:
  std::string log_, reap_dir_, error_;
  common::Reaper reaper_;
  pid_t pid_ = -1;
};

// The comparisons of the capture tests are exact, so they need every packet:
// tcpdump says on exit how many the kernel dropped.
void ExpectNoDrop(const std::string& said);

}  // namespace secmode::testing

#endif  // SECMODE_TESTS_SUPPORT_TCPDUMP_H_
