// --explain: the published changes set beside measured legs, each figure
// checked against a hand computation.
#include "sim/explain.h"

#include <gtest/gtest.h>

namespace secmode::sim {
namespace {

LegCosts Flat(const std::string& mode, double ns) {
  LegCosts l;
  l.mode = mode;
  for (const char* leg : {"client-seal", "server-open", "server-seal", "client-open"}) {
    for (int64_t size : {int64_t{128}, int64_t{1} << 20}) l.legs[leg][size] = ns;
  }
  return l;
}

Environment Env() {
  Environment e;
  for (CostCurve* c : {&e.client.read, &e.client.write, &e.client.metadata, &e.server.read,
                       &e.server.write, &e.server.metadata}) {
    (*c)[0] = 10000;
  }
  return e;
}

TEST(ExplainTest, NfsSharesAndLittlesLaw) {
  // krb5p legs 2.1 us each against sys's 0.1: 8 us on the path, 4 on the server.
  const std::vector<PublishedChange> published = {{"test", "krb5p", -75, 0.8}};
  auto rows =
      ExplainNfs(Workload(), Env(), Flat("sys", 100), {Flat("krb5p", 2100)}, published, 100000);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  const auto& r = (*rows)[0];
  EXPECT_DOUBLE_EQ(r["crypto_path_us"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(r["crypto_server_us"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(r["crypto_share_of_latency_change"].get<double>(), 8.0 / 800);
  // R0 = dR (1 - f) / f = 0.8 x 0.25 / 0.75.
  EXPECT_NEAR(r["implied_sys_latency_ms"].get<double>(), 0.8 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(r["bottleneck_demand_factor"].get<double>(), 4.0);
  // 100 k -> 25 k IOPS: 40 us - 10 us = 30 us per op, 4 of them server crypto.
  EXPECT_NEAR(r["serial_stage_extra_us"].get<double>(), 30.0, 1e-9);
  EXPECT_NEAR(r["crypto_share_of_serial_stage"].get<double>(), 4.0 / 30, 1e-12);
  EXPECT_NEAR(r["rest_of_serial_stage_us"].get<double>(), 26.0, 1e-9);
  EXPECT_TRUE(r.contains("model_iops_change_pct"));
  // Without a baseline there is no serial stage.
  rows = ExplainNfs(Workload(), Env(), Flat("sys", 100), {Flat("krb5p", 2100)}, published, 0);
  ASSERT_TRUE(rows.ok());
  EXPECT_FALSE((*rows)[0].contains("serial_stage_extra_us"));
  // A published mode without costs is named.
  rows = ExplainNfs(Workload(), Env(), Flat("sys", 100), {}, published, 0);
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find("krb5p"), std::string::npos);
}

TEST(ExplainTest, SmbSigningShareAndEncryptionRates) {
  // Signing verifies 1 MiB in 1.0 ms more than plain: share of 2.857 ms.
  LegCosts sign = Flat("smb-sign-aes-cmac", 0);
  LegCosts enc = Flat("smb-enc-aes-128-gcm", 0);
  const LegCosts plain = Flat("smb-plain", 0);
  sign.legs["client-open"][int64_t{1} << 20] = 1e6;
  enc.legs["client-open"][int64_t{1} << 20] = 0.5e6;  // 0.5 ms per MiB
  enc.legs["client-seal"][128] = 1000;                // 1 us + 1 us at 128 B
  enc.legs["client-open"][128] = 1000;
  auto rows = ExplainSmb(plain, {sign, enc, Flat("sys", 5)});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);  // sys is not an SMB mode
  const auto& s = (*rows)[0];
  EXPECT_NEAR(s["crypto_share"].get<double>(), 1.0 / ((1 / 250.0 - 1 / 875.0) * 1e3), 1e-12);
  const auto& e = (*rows)[1];
  // 10%: T = 0.1 / (0.9 x 0.0005 s) = 222.2 MiB/s; 15%: 0.15 / (0.85 x 0.0005).
  EXPECT_NEAR(e["unencrypted_mib_per_s_for_10pct"].get<double>(), 0.1 / (0.9 * 0.0005), 1e-9);
  EXPECT_NEAR(e["unencrypted_mib_per_s_for_15pct"].get<double>(), 0.15 / (0.85 * 0.0005), 1e-9);
  EXPECT_NEAR(e["metadata_client_extra_us"].get<double>(), 2.0, 1e-12);
  EXPECT_NEAR(e["unencrypted_ops_per_s_for_5pct"].get<double>(), 0.05 / (0.95 * 2e-6), 1e-6);
}

}  // namespace
}  // namespace secmode::sim
