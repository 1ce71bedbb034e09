// `secmode noise` (harness::RunAaTest with the real binary): its runs are
// separate processes made alternately into side A and side B, each with its
// log; noise.json holds the comparison's counts, the machine and every
// row's spread over all runs; bad options and a failing run are clear
// errors that keep what was made. `secmode compare --noise` reads that
// noise.json back for rows with a side of one run, and refuses a bad one.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/files.h"
#include "common/subprocess.h"
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
  auto first = ReadResultsFile(o.out + "/a/01");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(doc["machine"]["hostname"], first->machine.hostname);
  EXPECT_EQ(doc["machine"]["secmode_commit"], first->machine.secmode_commit);
  EXPECT_EQ(doc["tested"], r->tested);
  EXPECT_EQ(doc["rows"].size(), r->rows.size());
  EXPECT_EQ(doc["runs"]["b"].size(), 2u);

  // `secmode run --publish` with it: results.json and the report carry it.
  auto publish = [&](const std::string& noise, const std::string& out) {
    common::Command c;
    c.argv = {SECMODE_BIN, "run",       "--quick", "--modes", "sys", "--sizes",
              "128",       "--publish", noise,     "--out",   out};
    c.log_path = out + ".log";
    auto status = common::RunAndWait(c, 300000);
    EXPECT_TRUE(status.ok()) << status.status().ToString();
    auto log = common::ReadFile(c.log_path);
    return std::pair{status.ok() ? *status : -1, log.ok() ? *log : std::string()};
  };
  auto [rc, log] = publish(o.out + "/noise.json", tmp_ + "/published");
  ASSERT_EQ(rc, 0) << log;
  auto published = ReadResultsFile(tmp_ + "/published");
  ASSERT_TRUE(published.ok()) << published.status().ToString();
  const nlohmann::json& floor = published->sections["noise-floor"];
  EXPECT_EQ(floor["tested"], r->tested);
  EXPECT_EQ(floor["false_positives"], r->false_positives);
  EXPECT_EQ(floor["runs_per_side"], 2);
  auto report = common::ReadFile(tmp_ + "/published/report.md");
  ASSERT_TRUE(report.ok());
  EXPECT_NE(report->find("## Noise floor on this machine"), std::string::npos);
  // Another machine's noise.json: refused before anything is measured.
  nlohmann::json other = doc;
  other["machine"]["hostname"] = "elsewhere";
  ASSERT_TRUE(common::WriteFileAtomically(tmp_ + "/other.json", other.dump()).ok());
  auto [other_rc, other_log] = publish(tmp_ + "/other.json", tmp_ + "/refused");
  EXPECT_EQ(other_rc, 2) << other_log;
  EXPECT_NE(other_log.find("--publish " + tmp_ +
                           "/other.json: its A/A runs were not made on "
                           "this machine with this build (host elsewhere, here " +
                           first->machine.hostname + ")"),
            std::string::npos)
      << other_log;
  EXPECT_EQ(other_log.find("measuring"), std::string::npos) << other_log;
  EXPECT_FALSE(fs::exists(tmp_ + "/refused/results.json"));
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

// `secmode compare --noise`: a run against another with the noise.json of
// an A/A test; a bad noise.json is refused naming its cause, before the
// runs are read.
TEST_F(NoiseTest, CompareWithNoiseJson) {
  auto run = [](double ns) {
    RunResults r;
    r.command = "secmode run";
    MicroRow m;
    m.mode = "sys";
    m.engine = "none";
    m.leg = "client-seal";
    m.size = 128;
    m.m.repetitions_ns = {ns};
    m.m.ns_per_op = ns;
    m.m.samples = 10;
    r.micro.push_back(m);
    return r;
  };
  std::vector<RunResults> a, b;
  for (double ns : {100.0, 103.0, 98.0}) a.push_back(run(ns));
  for (double ns : {101.0, 97.0, 102.0}) b.push_back(run(ns));
  auto aa = SummarizeAa(a, b, 0.05);
  ASSERT_TRUE(aa.ok()) << aa.status().ToString();
  ASSERT_TRUE(common::WriteFileAtomically(tmp_ + "/noise.json", AaJson({}, *aa).dump()).ok());
  for (const auto& [dir, ns] : {std::pair{"/one", 100.0}, std::pair{"/other", 150.0}}) {
    ASSERT_TRUE(common::MakeDirectories(tmp_ + dir).ok());
    ASSERT_TRUE(
        common::WriteFileAtomically(tmp_ + dir + "/results.json", ToJson(run(ns)).dump()).ok());
  }
  auto compare = [&](const std::string& noise, const std::string& log) {
    common::Command c;
    c.argv = {SECMODE_BIN, "compare", "--noise", noise, tmp_ + "/one", tmp_ + "/other"};
    c.log_path = tmp_ + "/" + log;
    auto status = common::RunAndWait(c, 60000);
    EXPECT_TRUE(status.ok()) << status.status().ToString();
    auto out = common::ReadFile(c.log_path);
    return std::pair{status.ok() ? *status : -1, out.ok() ? *out : std::string()};
  };
  auto [rc, out] = compare(tmp_ + "/noise.json", "good.log");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("too few runs; beyond the A/A noise"), std::string::npos) << out;
  EXPECT_NE(out.find("1 lie beyond the A/A noise"), std::string::npos) << out;

  auto [missing_rc, missing] = compare(tmp_ + "/none.json", "missing.log");
  EXPECT_EQ(missing_rc, 2) << missing;
  EXPECT_NE(missing.find("--noise: " + tmp_ + "/none.json: no such file"), std::string::npos)
      << missing;
  auto [foreign_rc, foreign] = compare(tmp_ + "/one/results.json", "foreign.log");
  EXPECT_EQ(foreign_rc, 2) << foreign;
  EXPECT_NE(foreign.find("not a noise.json of `secmode noise`"), std::string::npos) << foreign;
  ASSERT_TRUE(
      common::WriteFileAtomically(tmp_ + "/bad.json", "{\"schema\": \"secmode-noise/1\"").ok());
  auto [bad_rc, bad] = compare(tmp_ + "/bad.json", "bad.log");
  EXPECT_EQ(bad_rc, 1) << bad;
  EXPECT_NE(bad.find("bad.json is not valid JSON"), std::string::npos) << bad;
}

}  // namespace
}  // namespace secmode::harness
