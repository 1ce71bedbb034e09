// What the workload model takes from a saved run: which baseline a list of
// modes is predicted against, and the protocol's own CPU per operation from
// the NFS e2e sys rows or the smb-e2e section's smb-plain rows.
#include "harness/workload_inputs.h"

#include <gtest/gtest.h>

namespace secmode::harness {
namespace {

TEST(WorkloadInputsTest, TheModesNameTheirBaselineAndOneProtocolAtATime) {
  EXPECT_EQ(*BaselineOfModes({"krb5", "krb5p"}), "sys");
  EXPECT_EQ(*BaselineOfModes({}), "sys");
  EXPECT_EQ(*BaselineOfModes({"smb-sign-aes-gmac", "smb-enc-aes-256-ccm"}), "smb-plain");
  EXPECT_EQ(*BaselineOfModes({"smb-plain"}), "smb-plain");
  auto mixed = BaselineOfModes({"krb5p", "smb-enc-aes-128-gcm"});
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.status().code(), common::Code::kInvalidArgument);
  EXPECT_NE(mixed.status().message().find("'krb5p' and 'smb-enc-aes-128-gcm'"), std::string::npos);
  for (const char* bad : {"nfs", "smb-enc-aes-512-gcm", "smb-", "krb5x"}) {
    auto r = BaselineOfModes({bad});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(std::string("mode '") + bad + "'"), std::string::npos);
  }
}

// One smb-e2e row's run: `busy` of 2 CPUs for one second over `ops`, of
// which the client's process took `client_s` seconds.
nlohmann::json SmbRun(double busy_fraction, double ops, double client_s) {
  return {{"seconds", 1.0},
          {"ops", ops},
          {"idle_fraction", 1.0 - busy_fraction},
          {"steal_fraction", 0.0},
          {"client_cpu_seconds", client_s}};
}

// The client's own CPU per operation to the client, the rest of the busy
// CPU to the server.
TEST(WorkloadInputsTest, SmbProtocolCostsSplitTheSmbPlainRowsBusyCpuByTheClientsOwn) {
  RunResults run;
  run.machine.logical_cpus = 2;
  std::string source;
  auto none = ProtocolCostsFromRun(run, "smb-plain", &source);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no smb-e2e smb-plain rows"), std::string::npos);
  // 4 KiB READ on one channel (medians of three runs: 2 x 0.8 s / 20000 =
  // 80 us busy, 0.4 s / 20000 = 20 us the client's), the same on four
  // channels at 90 us (the less busy row is taken), 1 MiB WRITE at 700 us
  // (client 100 us); a signing row, a row without runs and a run without
  // the client's CPU are not used.
  nlohmann::json rows = nlohmann::json::array();
  rows.push_back({{"mode", "smb-plain"},
                  {"op", "read"},
                  {"size", 4096},
                  {"channels", 1},
                  {"runs", {SmbRun(0.8, 20000, 0.4), SmbRun(0.9, 20000, 0.5), SmbRun(0.7, 20000, 0.3)}}});
  rows.push_back({{"mode", "smb-plain"},
                  {"op", "read"},
                  {"size", 4096},
                  {"channels", 4},
                  {"runs", {SmbRun(0.9, 20000, 0.2)}}});
  rows.push_back({{"mode", "smb-plain"},
                  {"op", "write"},
                  {"size", 1 << 20},
                  {"channels", 1},
                  {"runs", {SmbRun(0.7, 2000, 0.2)}}});
  rows.push_back({{"mode", "smb-sign-aes-gmac"},
                  {"op", "read"},
                  {"size", 4096},
                  {"runs", {SmbRun(1.0, 100, 0.5)}}});
  rows.push_back(
      {{"mode", "smb-plain"}, {"op", "metadata"}, {"size", 0}, {"runs", nlohmann::json::array()}});
  nlohmann::json no_client = SmbRun(0.5, 1000, 0);
  no_client.erase("client_cpu_seconds");
  rows.push_back({{"mode", "smb-plain"}, {"op", "metadata"}, {"size", 0}, {"runs", {no_client}}});
  run.sections["smb-e2e"] = {{"rows", rows}, {"server", "Samba 4.17"}};
  auto costs = ProtocolCostsFromRun(run, "smb-plain", &source);
  ASSERT_TRUE(costs.ok()) << costs.status().ToString();
  ASSERT_EQ(costs->client.read.size(), 1u);
  EXPECT_NEAR(costs->client.read.at(4096), 20e3, 1e-6);
  EXPECT_NEAR(costs->server.read.at(4096), 60e3, 1e-6);
  EXPECT_NEAR(costs->client.write.at(1 << 20), 100e3, 1e-6);
  EXPECT_NEAR(costs->server.write.at(1 << 20), 600e3, 1e-6);
  EXPECT_TRUE(costs->client.metadata.empty());
  EXPECT_TRUE(costs->server.metadata.empty());
  EXPECT_NE(source.find("Samba 4.17"), std::string::npos);
  // A field of the wrong type is an error naming the section.
  RunResults bad = run;
  bad.sections["smb-e2e"]["rows"][0]["runs"][0]["ops"] = "many";
  auto corrupt = ProtocolCostsFromRun(bad, "smb-plain", &source);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.status().code(), common::Code::kCorrupt);
  EXPECT_NE(corrupt.status().message().find("sections.smb-e2e"), std::string::npos);
  bad.sections["smb-e2e"] = "not an object";
  EXPECT_EQ(ProtocolCostsFromRun(bad, "smb-plain", &source).status().code(),
            common::Code::kCorrupt);
  // The NFS baseline reads other rows: this run has none.
  EXPECT_FALSE(ProtocolCostsFromRun(run, "sys", &source).ok());
  EXPECT_FALSE(ProtocolCostsFromRun(run, "krb5p", &source).ok());
}

}  // namespace
}  // namespace secmode::harness
