// `secmode lab --quick` for real (root; skipped otherwise): the workload
// model against the two-host lab, NFS sys and krb5p, SMB smb-plain and
// smb-enc-aes-128-gcm against Samba. The costs come from the
// newest saved run in the source tree (the checked-in reference run on a
// fresh clone): the points asserted are those where the model's assumptions
// hold, bound by the link or the round trip, where the CPU costs are a few
// percent of an operation's time (checked below), so costs measured on
// another run of the same kind of machine do not decide the verdict.
// Asserted: every such point within the tolerance (suite/lab_validation.h),
// the modes' order in every group, nothing failed, nothing left behind.
// On a machine other processes kept busy during the lab (a CPU hog, a
// build beside `make soak`) the lab finds the model's assumptions broken at
// every point (the machine under the rule's idle share), as it should: the
// test then has nothing to hold the model to and skips, naming the share
// the others took, rather than fail on too few points.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/files.h"
#include "common/format.h"
#include "common/machine.h"
#include "common/subprocess.h"
#include "harness/workload_inputs.h"
#include "lab/net_lab.h"
#include "suite/lab_validation.h"

namespace secmode::lab {
namespace {

// `secmode lab --quick` with `extra` arguments, costs from the newest saved
// run; its JSON document. Asserted for every protocol: nothing failed,
// every point where the model's assumptions hold within the tolerance and
// bound by the link or the round trip (an operation's time mostly not CPU:
// costs half again as high or low would move the prediction by less than a
// third of the tolerance), at least `min_asserted` such points, the modes'
// order in every group (with `order_where_cpu_bound`; else in the groups
// where the model's assumptions hold at every point, the others reported),
// `points` points measured.
void CheckQuickLab(const std::vector<std::string>& extra, int points, int min_asserted,
                   bool order_where_cpu_bound) {
  auto results = harness::NewestResultsFile(SECMODE_SOURCE_DIR);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  auto dir = common::MakeTempDirectory("secmode-lab-test-");
  ASSERT_TRUE(dir.ok());
  const std::string out = *dir + "/lab.json";
  std::vector<std::string> argv = {SECMODE_BIN, "lab", "--quick"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  for (const char* a : {"--results", results->c_str(), "--out", out.c_str()}) argv.push_back(a);
  common::Command c{argv, {}, *dir + "/lab.log", ""};
  // What processes other than the lab's ran meanwhile (`secmode lab` and
  // every server and tunnel it started are reaped children).
  const double own_before = common::OwnCpuSeconds();
  const common::CpuTimes before = common::ReadCpuTimes();
  auto rc = common::RunAndWait(c, 600000);
  const common::CpuTimes after = common::ReadCpuTimes();
  const double others = common::OthersFraction(before, after, common::OwnCpuSeconds() - own_before);
  std::cout << "other processes took " << common::Fmt("%.1f%%", others * 100)
            << " of the machine's CPU time while the lab ran\n";
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  ASSERT_EQ(*rc, 0) << common::TailOfFile(c.log_path, 30);
  auto text = common::ReadFile(out);
  ASSERT_TRUE(text.ok());
  const nlohmann::json doc = nlohmann::json::parse(*text);
  auto name = [](const nlohmann::json& r) {
    return r.value("link", "") + " " + r.value("mode", "") + " " + r.value("op", "") + " " +
           std::to_string(r.value("size", 0)) + " qd" + std::to_string(r.value("iodepth", 0)) +
           " over " + std::to_string(r.value("connections", 0));
  };
  for (const auto& r : doc.at("rows")) {
    EXPECT_FALSE(r.contains("error")) << name(r) << ": " << r.value("error", "");
  }
  EXPECT_EQ(doc.at("summary").value("points", 0), points);
  (void)common::RemoveTree(*dir);
  if (others >= suite::kLabMinIdle) {
    GTEST_SKIP() << "other processes took " << common::Fmt("%.0f%%", others * 100)
                 << " of this machine's CPU time while the lab ran, at least the idle share ("
                 << common::Fmt("%.0f%%", suite::kLabMinIdle * 100)
                 << ") below which the lab finds the model's assumptions broken";
  }
  int asserted = 0;
  for (const auto& r : doc.at("rows")) {
    const std::string point = name(r);
    if (!r.value("assumptions_hold", false)) continue;
    ++asserted;
    EXPECT_TRUE(r.value("within_tolerance", false))
        << point << ": measured/predicted " << r.value("ratio", 0.0);
    EXPECT_LT(r.at("predicted").value("cpu_share", 1.0), 0.15) << point;
  }
  EXPECT_GE(asserted, min_asserted) << "too few points where the model's assumptions hold";
  for (const auto& g : doc.at("order")) {
    if (!order_where_cpu_bound && !g.value("assumptions_hold", false)) {
      if (!g.value("agrees", false)) std::cout << "order not asserted (CPU-bound): " << g.dump() << "\n";
      continue;
    }
    EXPECT_TRUE(g.value("agrees", false)) << g.dump();
  }
}

TEST(LabValidationTest, TheModelAgreesWithTheLabWhereItsAssumptionsHold) {
  const std::string why = LabUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << "no lab: " << why;
  CheckQuickLab({"--modes", "krb5p"}, 24, 8, /*order_where_cpu_bound=*/true);
}

// The SMB side: smb-plain and smb-enc-aes-128-gcm against a throwaway
// Samba DC in the lab, one session over 1 and 4 channels. The modes' order
// is asserted where the model's assumptions hold; at the CPU-bound points
// (the unshaped link: the client and Samba's one session thread on this
// machine's two CPUs) it is reported, not asserted: there the two modes
// differ by about the spread between runs, and the model's server cost per
// operation, from the saved run's SMB end-to-end rows, does not follow how
// Samba's thread's cost changes with the channels and requests in flight.
TEST(LabValidationTest, TheSmbModelAgreesWithTheLabWhereItsAssumptionsHold) {
  const std::string why = suite::LabValidationUnavailableReason(suite::LabProtocol::kSmb);
  if (!why.empty()) GTEST_SKIP() << "no SMB lab: " << why;
  CheckQuickLab({"--smb", "--modes", "smb-enc-aes-128-gcm"}, 24, 8,
                /*order_where_cpu_bound=*/false);
}

}  // namespace
}  // namespace secmode::lab
