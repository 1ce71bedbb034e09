// `secmode compare` drawn for rows with a side of one run: without a
// noise.json it says where to get one; with one, each such row says whether
// its B/A lies beyond or within the A/A noise, worded as no verdict, and a
// hostile string from noise.json or a run reaches neither the terminal nor
// the Markdown as anything but text.
#include "render/report_compare.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "harness/aa_test.h"
#include "harness/compare_runs.h"

namespace secmode::render {
namespace {

using harness::RowComparison;
using harness::RunComparison;
using harness::Verdict;

RowComparison OneRunRow(const std::string& key, double ratio) {
  RowComparison r;
  r.table = "micro";
  r.key = key;
  r.unit = "ns/op";
  r.a = 1000;
  r.b = 1000 * ratio;
  r.ratio = r.ratio_low = r.ratio_high = ratio;
  r.a_runs = r.b_runs = 1;
  r.verdict = Verdict::kTooFewRuns;
  return r;
}

RunComparison OneRunASide() {
  RunComparison c;
  c.a_labels = {"`secmode run` A"};
  c.b_labels = {"`secmode run` B"};
  c.rows = {OneRunRow("krb5p client-seal 4 KiB", 1.30), OneRunRow("krb5p client-open 4 KiB", 1.02)};
  return c;
}

TEST(ReportCompareTest, WithoutNoiseItSaysWhereToGetIt) {
  const RunComparison c = OneRunASide();
  for (const std::string& out : {CompareText(c), CompareMarkdown(c)}) {
    EXPECT_NE(out.find("secmode noise"), std::string::npos) << out;
    EXPECT_NE(out.find("--noise"), std::string::npos) << out;
    EXPECT_EQ(out.find("A/A noise"), std::string::npos) << out;
  }
}

TEST(ReportCompareTest, WithNoiseEachOneRunRowIsBeyondOrWithinIt) {
  RunComparison c = OneRunASide();
  c.noise.path = "/tmp/noise.json";
  c.noise.runs_per_side = 3;
  c.rows[0].noise_ratio = 1.10;
  c.rows[0].noise_from = "row";
  c.rows[1].noise_ratio = 1.08;
  c.rows[1].noise_from = "table";
  c.rows.push_back(OneRunRow("krb5p server-open 4 KiB", 0.5));  // no A/A figure
  const std::string text = CompareText(c);
  EXPECT_NE(text.find("too few runs; beyond the A/A noise 0.909-1.100 (row)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("too few runs; within the A/A noise 0.926-1.080 (table's noisiest)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("too few runs; no A/A figure of its table"), std::string::npos) << text;
  EXPECT_NE(text.find("1 lie beyond the A/A noise, 1 within it, 1 have no A/A figure"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("not a test of these runs"), std::string::npos) << text;
  EXPECT_NE(text.find("/tmp/noise.json (3 + 3 runs)"), std::string::npos) << text;
  // It claims no verdict: no row is called slower, faster or significant.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("krb5p") == std::string::npos) continue;
    for (const char* claim : {"slower", "faster", "significant"}) {
      EXPECT_EQ(line.find(claim), std::string::npos) << claim << "\n" << line;
    }
  }
  const std::string md = CompareMarkdown(c);
  EXPECT_NE(md.find("| too few runs; beyond the A/A noise 0.909-1.100 (row) |"), std::string::npos)
      << md;
}

// The warnings hold strings of noise.json and of the runs (a hostname):
// they reach the terminal without control characters and the Markdown as
// text that starts no table cell, link or HTML.
TEST(ReportCompareTest, WarningsFromUntrustedFilesStayText) {
  RunComparison c = OneRunASide();
  c.noise.path = "noise.json";
  c.noise.warnings = {"noise.json was measured with host \x1b[2J|<img src=x>[a](b), run A with h"};
  const std::string text = CompareText(c);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("warning: noise.json was measured with host"), std::string::npos) << text;
  const std::string md = CompareMarkdown(c);
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
  // Every character Markdown reads as syntax is escaped: no cell, HTML or link starts.
  EXPECT_NE(md.find("\\[2J\\|\\<img src=x\\>\\[a\\](b)"), std::string::npos) << md;
  EXPECT_NE(md.find("- warning: noise.json was measured with host"), std::string::npos) << md;
}

}  // namespace
}  // namespace secmode::render
