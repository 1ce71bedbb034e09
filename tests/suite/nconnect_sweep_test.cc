// FitCostsFromMicro: the sweep's crypto costs fitted to a run's krb5p micro
// rows (the mean of the four legs per size, common::FitLine).
#include "suite/nconnect_sweep.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace secmode::suite {
namespace {

// krb5p rows of one association whose four legs cost fixed + per_byte x size
// (the legs apart by +-d, which their mean cancels) at each of `sizes`.
harness::RunResults Krb5pRows(const std::vector<size_t>& sizes, double fixed, double per_byte) {
  harness::RunResults r;
  const char* legs[] = {"client-seal", "server-open", "server-seal", "client-open"};
  const double d[] = {-30, 10, 30, -10};
  for (size_t size : sizes) {
    for (int i = 0; i < 4; ++i) {
      harness::MicroRow row;
      row.mode = "krb5p";
      row.engine = "native";
      row.enctype = "aes256-cts-hmac-sha1-96";
      row.leg = legs[i];
      row.size = size;
      row.m.ns_per_op = fixed + per_byte * static_cast<double>(size) + d[i];
      r.micro.push_back(row);
    }
  }
  return r;
}

TEST(FitCostsFromMicroTest, FitsTheLineOfTheLegsMeanOverTheSizes) {
  sim::Scenario s;
  std::string source;
  ASSERT_TRUE(FitCostsFromMicro(Krb5pRows({128, 4096, 65536, 1048576}, 500, 1.25), s, &source));
  EXPECT_NEAR(s.cost_fixed_ns, 500, 1e-6);
  EXPECT_NEAR(s.cost_ns_per_byte, 1.25, 1e-12);
  EXPECT_NE(source.find("krb5p:aes256-cts-hmac-sha1-96:native (mean of the four legs at 4 sizes): "
                        "500 ns + 1.250 ns/byte per message"),
            std::string::npos)
      << source;
}

TEST(FitCostsFromMicroTest, TwoSizesAreEnough) {
  sim::Scenario s;
  ASSERT_TRUE(FitCostsFromMicro(Krb5pRows({4096, 1048576}, 800, 2), s, nullptr));
  EXPECT_NEAR(s.cost_fixed_ns, 800, 1e-6);
  EXPECT_NEAR(s.cost_ns_per_byte, 2, 1e-12);
}

TEST(FitCostsFromMicroTest, ACostFallingWithSizeIsFlatAtTheMean) {
  sim::Scenario s;
  ASSERT_TRUE(FitCostsFromMicro(Krb5pRows({4096, 65536, 1048576}, 3000, -0.001), s, nullptr));
  EXPECT_EQ(s.cost_ns_per_byte, 0);
  EXPECT_NEAR(s.cost_fixed_ns, 3000 - 0.001 * (4096 + 65536 + 1048576) / 3.0, 1e-6);
}

TEST(FitCostsFromMicroTest, OneSizeOrNoKrb5pLeavesTheScenarioAlone) {
  sim::Scenario s;
  const sim::Scenario before = s;
  EXPECT_FALSE(FitCostsFromMicro(Krb5pRows({4096}, 800, 2), s, nullptr));
  harness::RunResults three_legs = Krb5pRows({4096, 65536}, 800, 2);
  three_legs.micro.pop_back();  // 65536 has three legs: only 4096 counts
  EXPECT_FALSE(FitCostsFromMicro(three_legs, s, nullptr));
  EXPECT_FALSE(FitCostsFromMicro(harness::RunResults{}, s, nullptr));
  EXPECT_EQ(s.cost_fixed_ns, before.cost_fixed_ns);
  EXPECT_EQ(s.cost_ns_per_byte, before.cost_ns_per_byte);
}

}  // namespace
}  // namespace secmode::suite
