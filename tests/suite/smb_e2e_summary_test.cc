// SummarizeSmbE2e: medians and ranges over repetitions, the change against
// smb-plain paired by repetition, and the crypto legs' share of a mode's
// extra CPU per operation; synthetic runs with known answers.
#include "suite/smb_e2e_summary.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace secmode::suite {
namespace {

std::vector<harness::MicroRow> SmbLegs() {
  std::vector<harness::MicroRow> rows;
  for (const char* leg : {"client-seal", "server-open", "server-seal", "client-open"}) {
    for (size_t size : {size_t{128}, size_t{1} << 20}) {
      for (const char* mode : {"smb-plain", "smb-enc-aes-128-gcm"}) {
        harness::MicroRow r;
        r.mode = mode;
        r.engine = "none";
        r.leg = leg;
        r.size = size;
        // The cipher costs 1 us more per leg at 128 B, 100 us more at 1 MiB.
        r.m.ns_per_op = 1000 + (std::string(mode) == "smb-plain" ? 0 : size == 128 ? 1000 : 100000);
        rows.push_back(r);
      }
    }
  }
  return rows;
}

// A run of 2 s on 2 logical CPUs: busy CPU per operation is
// 2 x 2 s x (1 - idle) / (ops_per_second x 2 s).
nlohmann::json LoadRun(const std::string& mode, const std::string& op, int rep, double ops_per_second,
                   double idle) {
  return {{"mode", mode},
          {"op", op},
          {"size", op == "metadata" ? 0u : 1u << 20},
          {"channels", 1},
          {"outstanding", 4},
          {"dialect", "3.1.1"},
          {"repetition", rep},
          {"seconds", 2.0},
          {"ops", static_cast<uint64_t>(ops_per_second * 2)},
          {"ops_per_second", ops_per_second},
          {"mb_per_second", op == "metadata" ? 0.0 : ops_per_second * 1.048576},
          {"p50_us", 100 * (rep + 1)},
          {"p99_us", 200 * (rep + 1)},
          {"errors", 0},
          {"first_error", ""},
          {"encrypted_requests", mode == "smb-plain" ? 0 : 10},
          {"idle_fraction", idle},
          {"steal_fraction", 0.0}};
}

TEST(SmbE2eSummaryTest, PairsEachRepetitionWithPlainsAndTakesMedians) {
  nlohmann::json runs = nlohmann::json::array();
  // Plain drifts from 1000 to 500 ops/s over the repetitions; the mode is
  // always half of the plain run of its repetition. Given out of order, so
  // pairing by position would pair the wrong runs.
  const double plain[] = {1000, 800, 500};
  for (int rep : {2, 0, 1}) runs.push_back(LoadRun("smb-enc-aes-128-gcm", "read", rep, plain[rep] / 2, 0.5));
  for (int rep : {0, 1, 2}) runs.push_back(LoadRun("smb-plain", "read", rep, plain[rep], 0.5));
  const nlohmann::json rows = SummarizeSmbE2e(runs, SmbLegs(), 2);
  ASSERT_EQ(rows.size(), 2u) << rows.dump(1);
  ASSERT_EQ(rows[1]["mode"], "smb-plain");  // in the order of first appearance
  EXPECT_FALSE(rows[1].contains("vs_plain"));
  const nlohmann::json& enc = rows[0];
  EXPECT_EQ(enc["repetitions"], 3);
  EXPECT_EQ(enc["figure"], "mb_per_second");
  EXPECT_DOUBLE_EQ(enc["ops_per_second"].get<double>(), 400);
  EXPECT_DOUBLE_EQ(enc["ops_per_second_range"][0].get<double>(), 250);
  EXPECT_DOUBLE_EQ(enc["ops_per_second_range"][1].get<double>(), 500);
  EXPECT_DOUBLE_EQ(enc["p50_us"].get<double>(), 200);
  EXPECT_EQ(enc["encrypted_requests"], 30);
  EXPECT_EQ(enc["ops"], 2300);  // 500, 400 and 250 ops/s, 2 s each
  // Paired, the change is -50% every time, however much plain drifted;
  // medians taken apart would also say -50% here, ranges taken apart not.
  ASSERT_TRUE(enc.contains("vs_plain")) << enc.dump(1);
  EXPECT_NEAR(enc["vs_plain"]["median"].get<double>(), -0.5, 1e-12);
  EXPECT_NEAR(enc["vs_plain"]["min"].get<double>(), -0.5, 1e-12);
  EXPECT_NEAR(enc["vs_plain"]["max"].get<double>(), -0.5, 1e-12);
  EXPECT_EQ(enc["vs_plain"]["pairs"], 3);
  ASSERT_TRUE(enc.contains("runs"));
  EXPECT_EQ(enc["runs"].size(), 3u);
}

TEST(SmbE2eSummaryTest, ARepetitionWithoutItsPlainRunIsNotPaired) {
  nlohmann::json runs = nlohmann::json::array();
  runs.push_back(LoadRun("smb-plain", "read", 0, 1000, 0.5));
  runs.push_back(LoadRun("smb-enc-aes-128-gcm", "read", 0, 900, 0.5));
  // Repetition 1 of plain failed; the mode's run 1 has no partner.
  runs.push_back(LoadRun("smb-enc-aes-128-gcm", "read", 1, 100, 0.5));
  const nlohmann::json rows = SummarizeSmbE2e(runs, SmbLegs(), 2);
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_TRUE(rows[1].contains("vs_plain")) << rows[1].dump(1);
  EXPECT_EQ(rows[1]["vs_plain"]["pairs"], 1);
  EXPECT_NEAR(rows[1]["vs_plain"]["median"].get<double>(), -0.1, 1e-12);
  ASSERT_TRUE(rows[1].contains("from_legs")) << rows[1].dump(1);
  EXPECT_EQ(rows[1]["from_legs"]["pairs"], 1);
}

TEST(SmbE2eSummaryTest, NoShareWhereAPairShowsNoExtraCpu) {
  // Plain at 1 ms per op each time; the mode 1.5, 0.9 and 2 ms: one pair
  // used less CPU than its plain partner, so the extra is within noise.
  nlohmann::json runs = nlohmann::json::array();
  const double idle[] = {0.25, 0.55, 0.0};  // busy CPU/op = 4 s x (1 - idle) / (ops/s x 2 s)
  for (int rep = 0; rep < 3; ++rep) {
    runs.push_back(LoadRun("smb-plain", "read", rep, 1000, 0.5));
    runs.push_back(LoadRun("smb-enc-aes-128-gcm", "read", rep, 1000, idle[rep]));
  }
  nlohmann::json rows = SummarizeSmbE2e(runs, SmbLegs(), 2);
  ASSERT_EQ(rows.size(), 2u);
  const nlohmann::json& f = rows[1]["from_legs"];
  ASSERT_TRUE(f.is_object()) << rows[1].dump(1);
  EXPECT_NEAR(f["extra_cpu_ns_per_op"].get<double>(), 0.5e6, 1e-3);
  EXPECT_NEAR(f["extra_cpu_ns_per_op_range"][0].get<double>(), -0.1e6, 1e-3);
  EXPECT_NEAR(f["extra_cpu_ns_per_op_range"][1].get<double>(), 1e6, 1e-3);
  EXPECT_TRUE(f["crypto_share"].is_null()) << f.dump(1);
  // With every pair above plain, the share is the legs over the median extra.
  runs[3]["idle_fraction"] = 0.45;  // 1.1 ms per op: +0.1 ms
  rows = SummarizeSmbE2e(runs, SmbLegs(), 2);
  const nlohmann::json& g = rows[1]["from_legs"];
  ASSERT_TRUE(g["crypto_share"].is_number()) << g.dump(1);
  EXPECT_NEAR(g["crypto_share"].get<double>(), 202000 / 0.5e6, 1e-9);
}

TEST(SmbE2eSummaryTest, CryptoShareIsTheLegsOverTheExtraCpuPerOperation) {
  // Plain: 2 CPUs x 50% busy / 1000 ops/s = 1 ms per op. The mode:
  // 2 x 100% busy / 500 ops/s = 4 ms per op: 3 ms extra. A 1 MiB READ's
  // legs: request legs at 128 B (1 us extra each), response legs at 1 MiB
  // (100 us extra each): 202 us.
  nlohmann::json runs = nlohmann::json::array();
  runs.push_back(LoadRun("smb-plain", "read", 0, 1000, 0.5));
  runs.push_back(LoadRun("smb-enc-aes-128-gcm", "read", 0, 500, 0.0));
  const nlohmann::json rows = SummarizeSmbE2e(runs, SmbLegs(), 2);
  ASSERT_EQ(rows.size(), 2u);
  const nlohmann::json& f = rows[1]["from_legs"];
  ASSERT_TRUE(f.is_object()) << rows[1].dump(1);
  EXPECT_EQ(f["reply_payload"], 1u << 20);
  EXPECT_EQ(f["call_payload"], 0);
  EXPECT_NEAR(f["plain_cpu_ns_per_op"].get<double>(), 1e6, 1e-3);
  EXPECT_NEAR(f["measured_cpu_ns_per_op"].get<double>(), 4e6, 1e-3);
  EXPECT_NEAR(f["legs_extra_ns"].get<double>(), 202000, 1e-6);
  EXPECT_NEAR(f["crypto_share"].get<double>(), 202000 / 3e6, 1e-9);
  // 4 ms x 500 ops/s of busy CPU at 1.202 ms per op.
  EXPECT_NEAR(f["predicted_ops_per_second"].get<double>(), 500 * 4e6 / 1.202e6, 1e-6);
}

TEST(SmbE2eSummaryTest, NoShareWithLessCpuAndReasonsWhenSomethingIsMissing) {
  nlohmann::json runs = nlohmann::json::array();
  runs.push_back(LoadRun("smb-plain", "metadata", 0, 1000, 0.5));
  // The mode used less CPU per operation than plain: nothing to explain.
  runs.push_back(LoadRun("smb-enc-aes-128-gcm", "metadata", 0, 1000, 0.6));
  // No micro rows of this mode.
  runs.push_back(LoadRun("smb-sign-aes-gmac", "metadata", 0, 900, 0.5));
  // The machine's idle time unknown.
  nlohmann::json unknown = LoadRun("smb-enc-aes-128-gcm", "read", 0, 400, 0.5);
  unknown["idle_fraction"] = -1;
  runs.push_back(LoadRun("smb-plain", "read", 0, 500, 0.5));
  runs.push_back(unknown);
  // A mode with no plain run of its case.
  runs.push_back(LoadRun("smb-enc-aes-128-gcm", "write", 0, 400, 0.5));
  const nlohmann::json rows = SummarizeSmbE2e(runs, SmbLegs(), 2);
  ASSERT_EQ(rows.size(), 6u) << rows.dump(1);
  ASSERT_TRUE(rows[1].contains("from_legs")) << rows[1].dump(1);
  EXPECT_TRUE(rows[1]["from_legs"]["crypto_share"].is_null()) << rows[1].dump(1);
  EXPECT_NE(rows[2].value("from_legs_skipped", "").find("smb-sign-aes-gmac"), std::string::npos)
      << rows[2].dump(1);
  ASSERT_TRUE(rows[2].contains("vs_plain")) << rows[2].dump(1);
  EXPECT_NEAR(rows[2]["vs_plain"]["median"].get<double>(), -0.1, 1e-12);
  EXPECT_NE(rows[4].value("from_legs_skipped", "").find("idle"), std::string::npos);
  EXPECT_FALSE(rows[5].contains("vs_plain"));
  EXPECT_NE(rows[5].value("from_legs_skipped", "").find("no smb-plain run"), std::string::npos);
}

TEST(SmbE2eSummaryTest, NothingFromNothing) {
  EXPECT_TRUE(SummarizeSmbE2e(nlohmann::json::array(), {}, 2).empty());
  EXPECT_TRUE(SummarizeSmbE2e(nlohmann::json::object(), {}, 2).empty());
}

}  // namespace
}  // namespace secmode::suite
