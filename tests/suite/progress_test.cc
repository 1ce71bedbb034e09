// The run's progress: the plan has a step per micro mode and one per section
// that applies, each started and finished in order (a step an interruption
// skips is neither); the time left scales the plan by the finished steps'
// pace; the line keeps its counts and times when the name must be cut.
#include "suite/progress.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <sstream>
#include <string>
#include <vector>

#include "suite/suite.h"

namespace secmode::suite {
namespace {

TEST(ProgressTest, TimeLeftIsThePlanStillToGoAtThePaceOfTheFinishedSteps) {
  const std::vector<ProgressStep> steps = {{"a", 10}, {"b", 20}, {"c", 30}};
  // Nothing finished yet: the plan as it is.
  EXPECT_DOUBLE_EQ(EstimateSecondsLeft(steps, 0, 0, 0, 0), 60);
  EXPECT_DOUBLE_EQ(EstimateSecondsLeft(steps, 0, 4, 0, 0), 56);
  // "a" took twice its plan: the rest is expected to as well.
  EXPECT_DOUBLE_EQ(EstimateSecondsLeft(steps, 1, 5, 20, 10), 35 + 60);
  // A step past its plan adds nothing below zero.
  EXPECT_DOUBLE_EQ(EstimateSecondsLeft(steps, 1, 100, 10, 10), 30);
  // The pace is held within [0.25, 4].
  EXPECT_DOUBLE_EQ(EstimateSecondsLeft(steps, 2, 0, 1000, 10), 120);
  EXPECT_DOUBLE_EQ(EstimateSecondsLeft(steps, 2, 0, 0.1, 10), 7.5);
  EXPECT_DOUBLE_EQ(EstimateSecondsLeft(steps, 3, 0, 10, 10), 0);
}

TEST(ProgressTest, TheLineCutsTheNameFirst) {
  std::vector<ProgressStep> steps(12, {"measuring krb5p:aes256-cts-hmac-sha1-96:native", 1});
  EXPECT_EQ(ProgressLine(steps, 4, 42, 370, 200),
            "[ 5/12] measuring krb5p:aes256-cts-hmac-sha1-96:native · 0:42 elapsed · about 6 min "
            "left");
  EXPECT_EQ(ProgressLine(steps, 11, 125, 30, 200).substr(0, 23), "[12/12] measuring krb5p");
  EXPECT_NE(ProgressLine(steps, 11, 125, 30, 200).find("2:05 elapsed · about 30 s left"),
            std::string::npos);
  EXPECT_NE(ProgressLine(steps, 0, 0, 0.5, 200).find("finishing"), std::string::npos);
  const std::string narrow = ProgressLine(steps, 4, 42, 370, 60);
  EXPECT_NE(narrow.find("[ 5/12] measuring"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("... · 0:42 elapsed · about 6 min left"), std::string::npos) << narrow;
}

struct Recorder : ProgressListener {
  void Planned(const std::vector<ProgressStep>& s) override { steps = s; }
  void Started(size_t i) override { events.push_back("start " + std::to_string(i)); }
  void Finished(size_t i) override { events.push_back("end " + std::to_string(i)); }
  std::vector<ProgressStep> steps;
  std::vector<std::string> events;
};

// A log that raises SIGINT once its text holds `trigger`.
class TriggerLog : public std::stringbuf {
 public:
  TriggerLog(std::string trigger, std::atomic<int>& flag)
      : trigger_(std::move(trigger)), flag_(flag) {}
  int sync() override {
    if (str().find(trigger_) != std::string::npos) flag_ = SIGINT;
    return 0;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    auto r = std::stringbuf::xsputn(s, n);
    sync();
    return r;
  }

 private:
  std::string trigger_;
  std::atomic<int>& flag_;
};

TEST(ProgressTest, TheSuitePlansEachModeAndSectionAndSaysWhenEachRuns) {
  std::atomic<int> flag{0};
  SuiteOptions o;
  o.quick = true;
  o.modes = {"sys", "krb5p::native"};
  o.sizes = {64};
  o.command = "progress_test";
  o.interrupt = &flag;
  Recorder r;
  o.progress = &r;
  TriggerLog buf("measuring sys ... done\n", flag);
  std::ostream log(&buf);
  auto run = RunSuite(o, log);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  std::vector<std::string> names;
  for (const auto& s : r.steps) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "measuring sys", "measuring krb5p:aes256-cts-hmac-sha1-96:native",
                       "section scaling", "section gss", "section e2e", "section windows"}));
  // The budgets: the micro legs, the scaling repetitions, the e2e rows.
  EXPECT_GT(r.steps[0].planned_seconds, 0);
  EXPECT_GT(r.steps[2].planned_seconds, 0);
  EXPECT_GT(r.steps[3].planned_seconds, 0);
  EXPECT_GT(r.steps[4].planned_seconds, 0);
  // Interrupted after sys: only its step ran.
  EXPECT_EQ(r.events, (std::vector<std::string>{"start 0", "end 0"}));
}

}  // namespace
}  // namespace secmode::suite
