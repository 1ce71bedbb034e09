#include "tests/harness/planted_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "common/clock.h"
#include "common/files.h"
#include "common/format.h"
#include "common/machine.h"
#include "suite/suite.h"

namespace secmode::harness::planted {

namespace {

std::string RunDir(const std::string& root, char side, size_t i) {
  return root + "/" + side + "/" + common::Sprintf("%02zu", i + 1);
}

common::Status WriteRun(const RunResults& r, const std::string& dir) {
  SECMODE_RETURN_IF_ERROR(common::MakeDirectories(dir));
  return common::WriteFileAtomically(dir + "/results.json", ToJson(r).dump(2));
}

bool Flagged(const RowComparison& r) {
  return r.verdict == Verdict::kFaster || r.verdict == Verdict::kSlower;
}

}  // namespace

double IntervalReach(const RowComparison& r) {
  if (r.ratio <= 0 || r.ratio_low <= 0 || r.ratio_high <= 0) return 0;
  return std::max(r.ratio_high / r.ratio, r.ratio / r.ratio_low);
}

bool IsPlanted(const RowComparison& r) {
  return r.key.find(std::string(common::LegName(kLeg)) + " " + common::SizeLabel(kSize)) !=
         std::string::npos;
}

common::Result<RunComparison> PlantAndCompare(const std::string& root, const MakeRows& rows) {
  for (size_t i = 0; i < kRunsPerSide; ++i) {
    for (const char side : {'a', 'b'}) {
      RunResults r;
      r.command = "planted_slowdown_test side ";
      r.command += side;
      r.machine.hostname = common::Hostname();
      r.started_at = common::UtcTimestamp();
      SECMODE_ASSIGN_OR_RETURN(r.micro, rows(side == 'b'));
      r.finished_at = common::UtcTimestamp();
      SECMODE_RETURN_IF_ERROR(WriteRun(r, RunDir(root, side, i)));
    }
  }
  SECMODE_ASSIGN_OR_RETURN(std::vector<RunResults> a, ReadRunSet(root + "/a"));
  SECMODE_ASSIGN_OR_RETURN(std::vector<RunResults> b, ReadRunSet(root + "/b"));
  return CompareRuns(a, b, kAlpha);
}

void ExpectPlantedRowFound(const RunComparison& c) {
  const size_t rows = std::size(suite::kDefaultSizes) * std::size(common::kAllLegs);
  ASSERT_EQ(c.rows.size(), rows);
  EXPECT_TRUE(c.only_a.empty() && c.only_b.empty());
  const RowComparison* planted = nullptr;
  size_t untouched_flagged = 0;
  for (const RowComparison& r : c.rows) {
    EXPECT_EQ(r.a_runs, kRunsPerSide) << r.key;
    EXPECT_EQ(r.b_runs, kRunsPerSide) << r.key;
    EXPECT_NE(r.verdict, Verdict::kTooFewRuns) << r.key;
    if (IsPlanted(r)) {
      planted = &r;
    } else if (Flagged(r)) {
      ++untouched_flagged;
      std::printf("flagged untouched row: %s B/A %.3f p %.4f (%s)\n", r.key.c_str(), r.ratio,
                  r.test.p, VerdictName(r.verdict));
    }
  }
  ASSERT_NE(planted, nullptr);
  std::printf(
      "planted row: %s B/A %.3f (%.3f-%.3f) p %.4f: %s; untouched rows flagged: %zu of %zu\n",
      planted->key.c_str(), planted->ratio, planted->ratio_low, planted->ratio_high,
      planted->test.p, VerdictName(planted->verdict), untouched_flagged, rows - 1);
  EXPECT_EQ(planted->verdict, Verdict::kSlower) << planted->key << " p " << planted->test.p;
  EXPECT_LE(untouched_flagged, kMaxUntouchedFlagged);
}

void PlantedRunsTest::SetUp() {
  auto tmp = common::MakeTempDirectory("secmode-planted-");
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();
  root_ = *tmp;
}

void PlantedRunsTest::TearDown() {
  if (!root_.empty()) {
    EXPECT_TRUE(common::RemoveTree(root_).ok()) << root_;
  }
}

}  // namespace secmode::harness::planted
