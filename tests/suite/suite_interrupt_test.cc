// An interrupted suite (SuiteOptions::interrupt, which `secmode run` sets on
// SIGINT) keeps what it measured and lists what it did not: the modes and
// sections after the interruption are errors with "interrupted", and the
// report says the run was interrupted; the progress plan lists every step and
// only those that ran start and finish. The interruption is raised by the log
// itself when the run reaches a given line, so each case is deterministic.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <ostream>
#include <sstream>
#include <streambuf>
#include <string>

#include "harness/results.h"
#include "render/report.h"
#include "suite/progress.h"
#include "suite/suite.h"

namespace secmode::suite {
namespace {

// A log that sets `flag` to SIGINT once its text contains `trigger`.
class TriggerLog : public std::streambuf {
 public:
  TriggerLog(std::string trigger, std::atomic<int>& flag)
      : trigger_(std::move(trigger)), flag_(flag) {}
  const std::string& text() const { return text_; }

 protected:
  int overflow(int c) override {
    if (c == EOF) return 0;
    text_.push_back(static_cast<char>(c));
    if (text_.find(trigger_) != std::string::npos) flag_ = SIGINT;
    return c;
  }

 private:
  std::string trigger_;
  std::atomic<int>& flag_;
  std::string text_;
};

// Records the run's progress plan and its steps' starts and ends.
struct Recorder : ProgressListener {
  void Planned(const std::vector<ProgressStep>& s) override { steps = s; }
  void Started(size_t i) override { events.push_back("start " + std::to_string(i)); }
  void Finished(size_t i) override { events.push_back("end " + std::to_string(i)); }
  std::vector<ProgressStep> steps;
  std::vector<std::string> events;
};

// The "errors" entries marked interrupted, by their mode or section.
std::vector<std::string> InterruptedNames(const nlohmann::json& errors) {
  std::vector<std::string> names;
  for (const auto& e : errors) {
    if (!e.contains("interrupted")) continue;
    EXPECT_EQ(e["interrupted"], "SIGINT") << e.dump();
    EXPECT_NE(e["error"].get<std::string>().find("interrupted by SIGINT"), std::string::npos);
    names.push_back(e.contains("mode") ? "mode " + e["mode"].get<std::string>()
                                       : "section " + e["section"].get<std::string>());
  }
  return names;
}

TEST(SuiteInterruptTest, AfterTheFirstRoundTheFiguresRestOnItAndTheRestIsListed) {
  std::atomic<int> flag{0};
  SuiteOptions o;
  o.quick = true;
  o.modes = {"sys", "krb5p::native"};
  o.sizes = {64};
  o.command = "suite_interrupt_test";
  o.interrupt = &flag;
  Recorder progress;
  o.progress = &progress;
  TriggerLog buf("measuring round 1 of 3 ... done\n", flag);
  std::ostream log(&buf);
  auto run = RunSuite(o, log);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  // The progress plan: a step per micro round, one per section that applies,
  // with the budgets of the micro legs, the scaling, the gss and the e2e
  // rows; only the step that ran was started and finished.
  std::vector<std::string> planned;
  for (const auto& s : progress.steps) planned.push_back(s.name);
  EXPECT_EQ(planned, (std::vector<std::string>{"measuring round 1 of 3", "measuring round 2 of 3",
                                               "measuring round 3 of 3", "section scaling",
                                               "section gss", "section e2e", "section predictions",
                                               "section lab", "section windows"}));
  for (size_t i : {0, 1, 2, 3, 4, 5}) EXPECT_GT(progress.steps.at(i).planned_seconds, 0) << i;
  EXPECT_EQ(progress.events, (std::vector<std::string>{"start 0", "end 0"}));
  // The first round measured every figure of both modes once: their rows
  // rest on that one repetition, and the micro section says so.
  ASSERT_EQ(run->micro.size(), 8u) << buf.text();
  for (const auto& row : run->micro) EXPECT_EQ(row.m.repetitions_ns.size(), 1u) << row.mode;
  EXPECT_EQ(
      InterruptedNames(run->errors),
      (std::vector<std::string>{"section micro", "section scaling", "section gss", "section e2e",
                                "section predictions", "section lab", "section windows"}))
      << run->errors.dump();
  EXPECT_NE(run->errors.dump().find("measured 1 of 3 rounds"), std::string::npos)
      << run->errors.dump();
  EXPECT_FALSE(run->sections.contains("gss"));
  EXPECT_FALSE(run->sections.contains("e2e"));
  EXPECT_FALSE(run->sections.contains("windows"));
  EXPECT_NE(buf.text().find(
                "interrupted by SIGINT; sections not run: scaling, gss, e2e, predictions, lab, "
                "windows"),
            std::string::npos)
      << buf.text();
  // The results still validate and read back, and the report says so.
  nlohmann::json doc = harness::ToJson(*run);
  ASSERT_TRUE(harness::ValidateResultsJson(doc).ok());
  auto back = harness::FromJson(doc);
  ASSERT_TRUE(back.ok());
  auto drawn = render::RenderRun(*back);
  ASSERT_TRUE(drawn.ok());
  EXPECT_NE(drawn->report_md.find("| interrupted | by SIGINT"), std::string::npos);
  EXPECT_NE(
      drawn->report_md.find("rests on 1 of its 3 repetitions: the run was interrupted by SIGINT"),
      std::string::npos);
}

TEST(SuiteInterruptTest, TheE2eSectionStopsBeforeItsNextRow) {
  std::atomic<int> flag{0};
  SuiteOptions o;
  o.quick = true;
  o.modes = {"sys"};
  o.sizes = {64};
  o.interrupt = &flag;
  TriggerLog buf("section e2e ...", flag);
  std::ostream log(&buf);
  auto run = RunSuite(o, log);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->micro.size(), 4u);
  EXPECT_TRUE(run->e2e.empty());
  ASSERT_TRUE(run->sections.contains("e2e"));
  EXPECT_EQ(run->sections["e2e"]["interrupted"], "SIGINT");
  EXPECT_EQ(InterruptedNames(run->errors), std::vector<std::string>{"section e2e"});
  EXPECT_NE(run->errors.dump().find("6 of 6 rows not run"), std::string::npos)
      << run->errors.dump();
}

TEST(SuiteInterruptTest, NoInterruptionNoMark) {
  std::atomic<int> flag{0};
  SuiteOptions o;
  o.quick = true;
  o.modes = {"smb-plain"};
  o.sizes = {64};
  o.interrupt = &flag;
  std::ostringstream log;
  auto run = RunSuite(o, log);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(InterruptedNames(run->errors).empty()) << run->errors.dump();
  EXPECT_EQ(log.str().find("interrupted"), std::string::npos) << log.str();
}

}  // namespace
}  // namespace secmode::suite
