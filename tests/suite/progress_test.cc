// The run's progress: the time left scales the plan by the finished steps'
// pace; the line keeps its counts and times when the name must be cut. (The
// suite's plan and its steps' starts and ends: suite_interrupt_test.cc.)
#include "suite/progress.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

}  // namespace
}  // namespace secmode::suite
