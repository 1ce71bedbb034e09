// The two-host lab (lab/net_lab.h, lab/lab_hosts.h) for real: namespaces
// and a veth pair made and removed, `secmode serve` and `secmode load` as
// processes on either side, RPCSEC_GSS across it with the KDC out of the
// client's reach, the emulated round trip in every call, tc's shaping in
// the rate, and nothing left behind when the lab's owner is killed. Needs
// root: skipped with the reason otherwise.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "lab/lab_hosts.h"
#include "lab/net_lab.h"
#include "tests/support/shared_realm.h"

namespace secmode::lab {
namespace {

bool NamespaceExists(const std::string& name) {
  return access(("/run/netns/" + name).c_str(), F_OK) == 0;
}

#define SKIP_WITHOUT_LAB()                                 \
  do {                                                     \
    const std::string why = LabUnavailableReason();        \
    if (!why.empty()) GTEST_SKIP() << "no lab: " << why;   \
  } while (0)

TEST(NetLabTest, MakesTwoNamespacesAndRemovesThemAndItsDirectory) {
  SKIP_WITHOUT_LAB();
  auto lab = NetLab::Create();
  ASSERT_TRUE(lab.ok()) << lab.status().ToString();
  const std::string s = (*lab)->server_namespace(), c = (*lab)->client_namespace();
  const std::string dir = (*lab)->dir();
  EXPECT_TRUE(NamespaceExists(s));
  EXPECT_TRUE(NamespaceExists(c));
  // The client reaches the server's address over the pair.
  common::Command ping{(*lab)->InClient({"ping", "-c", "1", "-W", "2", kServerAddress}), {}, "", ""};
  if (!common::FindProgram("ping").empty()) {
    auto rc = common::RunAndWait(ping, 10000);
    ASSERT_TRUE(rc.ok());
    EXPECT_EQ(*rc, 0);
  }
  EXPECT_TRUE((*lab)->Shape({100e6, 0}).ok());
  EXPECT_TRUE((*lab)->Shape({0, 0}).ok());
  EXPECT_FALSE((*lab)->Shape({-1, 0}).ok());
  lab->reset();
  EXPECT_FALSE(NamespaceExists(s));
  EXPECT_FALSE(NamespaceExists(c));
  EXPECT_NE(access(dir.c_str(), F_OK), 0);
}

TEST(NetLabTest, TheReaperRemovesTheNamespacesWhenTheOwnerIsKilled) {
  SKIP_WITHOUT_LAB();
  // A `secmode serve`-like owner: the lab made in a child process that is
  // then killed with SIGKILL.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    auto lab = NetLab::Create();
    std::string names = lab.ok() ? (*lab)->server_namespace() + " " + (*lab)->client_namespace() +
                                       " " + (*lab)->dir() + "\n"
                                 : "failed\n";
    (void)!write(fds[1], names.data(), names.size());
    pause();
    _exit(0);
  }
  close(fds[1]);
  std::string line;
  char ch;
  while (read(fds[0], &ch, 1) == 1 && ch != '\n') line += ch;
  close(fds[0]);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_NE(line, "failed");
  const size_t a = line.find(' '), b = line.rfind(' ');
  const std::string s = line.substr(0, a), c = line.substr(a + 1, b - a - 1), dir = line.substr(b + 1);
  const uint64_t deadline = common::NowNs() + 10000000000ull;
  while ((NamespaceExists(s) || NamespaceExists(c) || access(dir.c_str(), F_OK) == 0) &&
         common::NowNs() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(NamespaceExists(s));
  EXPECT_FALSE(NamespaceExists(c));
  EXPECT_NE(access(dir.c_str(), F_OK), 0);
}

LabHostsOptions Options() {
  LabHostsOptions o;
  o.secmode_path = SECMODE_BIN;
  return o;
}

TEST(LabHostsTest, KerberosWorksAcrossTheLabAndTheRoundTripIsInEveryCall) {
  SKIP_WITHOUT_LAB();
  auto hosts = LabHosts::Start(Options(), testing::SharedRealm());
  ASSERT_TRUE(hosts.ok()) << hosts.status().ToString();
  LabLink link;
  link.one_way_delay_ms = 10;
  ASSERT_TRUE((*hosts)->SetLink(link).ok());
  for (const char* mode : {"sys", "krb5p"}) {
    LabLoad l;
    l.mode = mode;
    l.op = "read";
    l.slots = 1;
    l.connections = 1;
    l.seconds = 1;
    l.warmup = 0.2;
    auto r = (*hosts)->Load(l);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->contains("failure")) << r->dump();
    EXPECT_GT((*r)["ops"].get<double>(), 0) << mode;
    EXPECT_EQ((*r)["errors"].get<double>(), 0) << mode;
    // Lower bound only: the round trip is 20 ms plus what the two ends take.
    EXPECT_GE((*r)["p50_us"].get<double>(), 20000) << mode;
  }
}

TEST(LabHostsTest, AShapedLinkCapsTheRate) {
  SKIP_WITHOUT_LAB();
  auto hosts = LabHosts::Start(Options(), nullptr);
  ASSERT_TRUE(hosts.ok()) << hosts.status().ToString();
  LabLink link;
  link.shape.c2s_bits_per_s = 100e6;
  ASSERT_TRUE((*hosts)->SetLink(link).ok());
  LabLoad l;
  l.op = "write";
  l.size = 1 << 20;
  l.slots = 4;
  l.seconds = 3;
  l.warmup = 1;
  auto r = (*hosts)->Load(l);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // 100 Mbit/s is 12.5 MB/s on the wire; less the frames' headers, at
  // most that much of payload. The calls completed in the measured time
  // carried at most what the link moved in it plus what was already on
  // its way when it began (the slots' calls: 4 MiB, which a 3 s window
  // counts whole or not at all). The machine's own rate is far above it
  // (several hundred MB/s unshaped), so the link, not the CPU, decides.
  const double mb = (*r)["mb_per_second"].get<double>();
  const double seconds = (*r)["seconds"].get<double>();
  const double in_flight_mb = l.slots * static_cast<double>(l.size) / 1e6;
  EXPECT_LE(mb, 12.5 + in_flight_mb / seconds) << r->dump();
  EXPECT_GE(mb, 12.5 * 0.7) << r->dump();
}

}  // namespace
}  // namespace secmode::lab
