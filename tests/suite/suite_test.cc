// The suite end to end on a small grid: real realm, real MIT wrap, files
// written and valid.
#include "bench/suite.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "bench/report.h"
#include "bench/results.h"
#include "common/files.h"

namespace secmode::bench {
namespace {

namespace fs = std::filesystem;

TEST(SuiteTest, QuickRunWritesValidResultsForSysAndKrb5p) {
  auto tmp = common::MakeTempDirectory("secmode-suite-test-");
  ASSERT_TRUE(tmp.ok());
  SuiteOptions o;
  o.out_dir = *tmp + "/run";
  o.quick = true;
  o.modes = {"sys", "krb5p"};
  o.sizes = {128, 4096};
  o.command = "suite_test";
  std::ostringstream log;
  auto dir = RunSuite(o, log);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString() << "\n" << log.str();
  auto text = common::ReadFile(*dir + "/results.json");
  ASSERT_TRUE(text.ok());
  auto results = ReadResultsJson(*text);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  // 2 modes x 2 sizes x 4 legs.
  ASSERT_EQ(results->micro.size(), 16u);
  for (const auto& row : results->micro) {
    EXPECT_GT(row.m.ns_per_op, 0) << row.mode << " " << row.leg;
    EXPECT_GT(row.m.bytes_per_second, 0);
    EXPECT_LE(row.m.p50_ns, row.m.p99_ns);
    EXPECT_LE(row.m.p99_ns, row.m.p999_ns);
    if (row.mode == "krb5p") {
      EXPECT_EQ(row.enctype, "aes256-cts-hmac-sha1-96");
    }
  }
  auto report = common::ReadFile(*dir + "/report.md");
  ASSERT_TRUE(report.ok());
  EXPECT_NE(report->find("krb5p"), std::string::npos);
  EXPECT_NE(report->find("x sys"), std::string::npos);
  auto csv = common::ReadFile(*dir + "/micro.csv");
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(std::count(csv->begin(), csv->end(), '\n'), 17);
  for (const auto& e : fs::directory_iterator(*dir)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  }
  common::RemoveTree(*tmp);
}

TEST(SuiteTest, UnknownModeFailsBeforeMeasuring) {
  SuiteOptions o;
  o.out_dir = "/nonexistent-should-not-be-created";
  o.modes = {"krb7"};
  std::ostringstream log;
  auto dir = RunSuite(o, log);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("krb7"), std::string::npos);
  EXPECT_FALSE(fs::exists(o.out_dir));
}

}  // namespace
}  // namespace secmode::bench
