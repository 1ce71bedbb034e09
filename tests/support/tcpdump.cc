#include "tests/support/tcpdump.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "common/files.h"
#include "common/subprocess.h"
#include "tests/support/processes.h"

namespace secmode::testing {

Tcpdump::Tcpdump(const std::string& filter, const std::string& pcap, const std::string& interface,
                 const std::vector<std::string>& prefix)
    : log_(pcap + ".log"), reap_dir_(pcap + ".reap") {
  const std::string tcpdump = common::FindProgram("tcpdump");
  if (tcpdump.empty()) {
    error_ = "tcpdump is not installed (make deps)";
    return;
  }
  if (mkdir(reap_dir_.c_str(), 0700) != 0) {
    error_ = reap_dir_ + ": " + strerror(errno);
    return;
  }
  auto reaper = common::Reaper::Start(reap_dir_, "tcpdump.pid", "secmode-test-tcpdump-reaper");
  if (!reaper.ok()) {
    error_ = reaper.status().ToString();
    return;
  }
  reaper_ = std::move(reaper).value();
  common::Command capture;
  capture.argv = prefix;
  for (const std::string& arg :
       {tcpdump, std::string("-i"), interface, std::string("-n"), std::string("-U"),
        std::string("-B"), std::string("262144"), std::string("-s"), std::string("0"),
        std::string("-w"), pcap, filter}) {
    capture.argv.push_back(arg);
  }
  capture.log_path = log_;
  auto pid = common::Spawn(capture);
  if (!pid.ok()) {
    error_ = pid.status().ToString();
    return;
  }
  pid_ = *pid;
  auto said = [&] { return common::TailOfFile(log_, 40); };
  if (!common::WriteFileAtomically(reap_dir_ + "/tcpdump.pid", std::to_string(pid_)).ok() ||
      !WaitUntil([&] { return said().find("listening on") != std::string::npos; }, 10000)) {
    error_ = "tcpdump did not start: " + said();
  }
}

std::string Tcpdump::Stop() {
  if (pid_ > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    common::Terminate(pid_, 5000);
    pid_ = -1;
  }
  (void)std::remove((reap_dir_ + "/tcpdump.pid").c_str());
  reaper_.Release();  // the reaper removes its directory
  return common::TailOfFile(log_, 40);
}

void ExpectNoDrop(const std::string& said) {
  EXPECT_NE(said.find("\n0 packets dropped by kernel"), std::string::npos) << said;
}

}  // namespace secmode::testing
