// `secmode noise` (harness::RunAaTest with the real binary): its runs are
// separate processes made alternately into side A and side B, each with its
// log; noise.json holds the comparison's counts and every row's spread over
// all runs; bad options and a failing run are clear errors that keep what
// was made.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/files.h"
#include "harness/aa_test.h"

#ifndef SECMODE_BIN
#error "SECMODE_BIN must name the secmode binary"
#endif

namespace secmode::harness {
namespace {

namespace fs = std::filesystem;

class NoiseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tmp = common::MakeTempDirectory("secmode-noise-test-");
    ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();
    tmp_ = *tmp;
  }
  void TearDown() override {
    if (!tmp_.empty()) (void)common::RemoveTree(tmp_);
  }
  AaOptions Options(std::vector<std::string> run_args) const {
    AaOptions o;
    o.secmode = SECMODE_BIN;
    o.run_args = std::move(run_args);
    o.runs_per_side = 2;
    o.out = tmp_ + "/noise";
    return o;
  }
  std::string tmp_;
};

TEST_F(NoiseTest, MakesInterleavedRunsAndWritesNoiseJson) {
  const AaOptions o = Options({"--quick", "--modes", "sys", "--sizes", "128"});
  auto r = RunAaTest(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::string> started;
  for (const char* run : {"a/01", "b/01", "a/02", "b/02"}) {
    const std::string dir = o.out + "/" + run;
    EXPECT_TRUE(fs::exists(dir + ".log")) << dir;
    auto results = ReadResultsFile(dir);
    ASSERT_TRUE(results.ok()) << results.status().ToString();
    EXPECT_FALSE(results->micro.empty()) << dir;
    started.push_back(results->started_at);
  }
  // A1 B1 A2 B2: each started after the one before it ended.
  EXPECT_TRUE(std::is_sorted(started.begin(), started.end()));
  EXPECT_EQ(r->comparison.a_labels.size(), 2u);
  EXPECT_GT(r->tested, 0u);
  EXPECT_LE(r->false_positives, r->tested);
  ASSERT_FALSE(r->rows.empty());
  for (const RowNoise& n : r->rows) {
    EXPECT_EQ(n.runs, 4u) << n.key;
    EXPECT_LE(n.min, n.median) << n.key;
    EXPECT_LE(n.median, n.max) << n.key;
    EXPECT_GE(n.single_run_ratio, 1) << n.key;
  }
  auto text = common::ReadFile(o.out + "/noise.json");
  ASSERT_TRUE(text.ok());
  const nlohmann::json doc = nlohmann::json::parse(*text);
  EXPECT_EQ(doc["schema"], "secmode-noise/1");
  EXPECT_EQ(doc["tested"], r->tested);
  EXPECT_EQ(doc["rows"].size(), r->rows.size());
  EXPECT_EQ(doc["runs"]["b"].size(), 2u);
}

TEST_F(NoiseTest, BadOptionsAndAFailingRunAreClearErrors) {
  AaOptions one = Options({"--quick"});
  one.runs_per_side = 1;
  EXPECT_NE(RunAaTest(one).status().message().find("at least 2"), std::string::npos);
  EXPECT_NE(RunAaTest(Options({"--out", "x"})).status().message().find("--out"), std::string::npos);
  ASSERT_TRUE(common::MakeDirectories(tmp_ + "/noise/old").ok());
  EXPECT_NE(RunAaTest(Options({"--quick"})).status().message().find("not empty"),
            std::string::npos);
  ASSERT_TRUE(common::RemoveTree(tmp_ + "/noise").ok());

  auto failed = RunAaTest(Options({"--modes", "no-such-mode"}));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), common::Code::kUnavailable);
  EXPECT_NE(failed.status().message().find("a/01.log"), std::string::npos)
      << failed.status().ToString();
  EXPECT_TRUE(fs::exists(tmp_ + "/noise/a/01.log"));
  EXPECT_FALSE(fs::exists(tmp_ + "/noise/noise.json"));
}

}  // namespace
}  // namespace secmode::harness
