// The suite end to end on a small grid: real realm, real MIT wrap; the run
// directory written by render/run_dir.h is complete and valid.
#include "suite/suite.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "common/files.h"
#include "harness/results.h"
#include "render/run_dir.h"

namespace secmode::suite {
namespace {

namespace fs = std::filesystem;

TEST(SuiteTest, QuickRunWritesValidResultsForSysAndKrb5p) {
  auto tmp = common::MakeTempDirectory("secmode-suite-test-");
  ASSERT_TRUE(tmp.ok());
  SuiteOptions o;
  o.quick = true;
  o.modes = {"sys", "krb5p"};
  o.sizes = {128, 4096};
  o.command = "suite_test";
  std::ostringstream log;
  auto run = RunSuite(o, log);
  ASSERT_TRUE(run.ok()) << run.status().ToString() << "\n" << log.str();
  EXPECT_TRUE(run->errors.empty()) << run->errors.dump();
  const std::string dir = *tmp + "/run";
  auto files = render::WriteRunDirectory(dir, *run);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_FALSE(files->written.empty());
  EXPECT_EQ(files->written.front(), "results.json");
  auto text = common::ReadFile(dir + "/results.json");
  ASSERT_TRUE(text.ok());
  auto results = harness::ReadResultsJson(*text);
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
  // The restricted run ran the sections of its modes: gss (krb5p) and e2e.
  EXPECT_TRUE(results->sections.contains("gss"));
  EXPECT_TRUE(results->sections.contains("e2e"));
  EXPECT_FALSE(results->sections.contains("smb"));
  EXPECT_FALSE(results->sections.contains("nconnect"));
  auto report = common::ReadFile(dir + "/report.md");
  ASSERT_TRUE(report.ok());
  EXPECT_NE(report->find("krb5p"), std::string::npos);
  EXPECT_NE(report->find("x sys"), std::string::npos);
  EXPECT_NE(report->find("## End to end"), std::string::npos);
  auto csv = common::ReadFile(dir + "/micro.csv");
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(std::count(csv->begin(), csv->end(), '\n'), 17);
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  }
  common::RemoveTree(*tmp);
}

TEST(SuiteTest, UnknownModeFailsBeforeMeasuring) {
  SuiteOptions o;
  o.modes = {"sys", "krb7"};
  EXPECT_FALSE(ValidateOptions(o).ok());
  std::ostringstream log;
  auto run = RunSuite(o, log);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), common::Code::kInvalidArgument);
  EXPECT_NE(run.status().message().find("krb7"), std::string::npos);
  EXPECT_EQ(log.str().find("measuring"), std::string::npos) << log.str();
}

}  // namespace
}  // namespace secmode::suite
