// secmode compare's verdicts on two synthetic runs whose differences are
// known: a figure clearly slower in B, one that moved within its noise, one
// with too few repetitions to test, rows only one run has, and a bounds
// row measured once.
#include "harness/compare_runs.h"

#include <gtest/gtest.h>

namespace secmode::harness {
namespace {

MicroRow Row(const std::string& leg, size_t size, std::vector<double> reps) {
  MicroRow r;
  r.mode = "krb5p";
  r.engine = "native";
  r.enctype = "aes256-cts-hmac-sha1-96";
  r.leg = leg;
  r.size = size;
  r.m.repetitions_ns = reps;
  r.m.ns_per_op = common::Median(reps);
  r.m.samples = 100;
  return r;
}

RunResults SyntheticRun(std::vector<MicroRow> rows, double bound_bytes_per_s) {
  RunResults r;
  r.command = "secmode run";
  r.micro = std::move(rows);
  r.bounds.push_back({"aes256-cbc-encrypt", 4096, bound_bytes_per_s});
  return r;
}

const RowComparison* Find(const RunComparison& c, const std::string& needle) {
  for (const auto& r : c.rows) {
    if (r.key.find(needle) != std::string::npos) return &r;
  }
  return nullptr;
}

TEST(CompareRunsTest, VerdictsFollowTheRepetitions) {
  const RunResults a = SyntheticRun(
      {Row("client-seal", 128, {100, 101, 99, 100, 102}),
       Row("server-open", 128, {200, 210, 190, 205, 195}), Row("client-open", 128, {50, 51, 52}),
       Row("server-seal", 128, {70, 71, 72, 73, 74})},
      2e9);
  const RunResults b = SyntheticRun(
      {Row("client-seal", 128, {150, 151, 149, 150, 152}),
       Row("server-open", 128, {203, 208, 192, 199, 201}), Row("client-open", 128, {40, 41, 42}),
       Row("server-seal", 128, {60, 61, 62, 63, 64}),
       Row("client-seal", 4096, {900, 901, 902, 903, 904})},
      1e9);
  auto c = CompareRuns(a, b);
  ASSERT_TRUE(c.ok()) << c.status().ToString();

  const RowComparison* slower = Find(*c, "client-seal 128 B");
  ASSERT_NE(slower, nullptr);
  EXPECT_EQ(slower->verdict, Verdict::kSlower);
  EXPECT_DOUBLE_EQ(slower->ratio, 1.5);
  EXPECT_TRUE(slower->test.applicable);
  EXPECT_LT(slower->test.p, 0.05);

  const RowComparison* faster = Find(*c, "server-seal 128 B");
  ASSERT_NE(faster, nullptr);
  EXPECT_EQ(faster->verdict, Verdict::kFaster);

  const RowComparison* same = Find(*c, "server-open 128 B");
  ASSERT_NE(same, nullptr);
  EXPECT_EQ(same->verdict, Verdict::kSame);
  EXPECT_GE(same->test.p, 0.05);

  const RowComparison* few = Find(*c, "client-open 128 B");
  ASSERT_NE(few, nullptr);
  EXPECT_EQ(few->verdict, Verdict::kTooFewRepetitions);
  EXPECT_EQ(few->a_repetitions, 3u);

  const RowComparison* bound = Find(*c, "aes256-cbc-encrypt 4 KiB");
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(bound->table, "bounds");
  EXPECT_EQ(bound->verdict, Verdict::kMeasuredOnce);
  EXPECT_DOUBLE_EQ(bound->ratio, 0.5);

  EXPECT_TRUE(c->only_a.empty());
  ASSERT_EQ(c->only_b.size(), 1u);
  EXPECT_NE(c->only_b[0].find("client-seal 4 KiB"), std::string::npos) << c->only_b[0];
  EXPECT_EQ(c->rows.front().table, "micro");  // micro rows first
}

// An e2e row that ran in rounds is tested over its runs' ops/s (higher is
// faster); one run once is "measured once"; three runs are too few.
TEST(CompareRunsTest, E2eRowsInRoundsAreTestedOverTheirRuns) {
  auto e2e = [](const std::string& op, std::vector<double> ops) {
    nlohmann::json row = {{"server", "secmode"}, {"transport", "tcp-loopback"},
                          {"mode", "krb5p"},      {"engine", "native"},
                          {"enctype", "aes256"},  {"op", op},
                          {"size", 0},            {"connections", 4},
                          {"slots", 64},          {"crypto_threads", "parallel"},
                          {"ops_per_second", ops[0]}};
    for (size_t i = 1; i < ops.size(); ++i) {
      row["repeats"].push_back({{"ops_per_second", ops[i]}});
    }
    return row;
  };
  RunResults a = SyntheticRun({}, 1e9), b = SyntheticRun({}, 1e9);
  a.e2e = nlohmann::json::array({e2e("getattr", {100, 101, 99, 100, 102}),
                                 e2e("read", {100, 101, 99}), e2e("write", {100})});
  b.e2e = nlohmann::json::array({e2e("getattr", {150, 151, 149, 150, 152}),
                                 e2e("read", {150, 151, 149}), e2e("write", {150})});
  auto c = CompareRuns(a, b);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const RowComparison* getattr = Find(*c, "getattr");
  ASSERT_NE(getattr, nullptr);
  EXPECT_EQ(getattr->verdict, Verdict::kFaster);
  EXPECT_EQ(getattr->a_repetitions, 5u);
  EXPECT_DOUBLE_EQ(getattr->ratio, 1.5);
  const RowComparison* read = Find(*c, "read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->verdict, Verdict::kTooFewRepetitions);
  const RowComparison* write = Find(*c, "write");
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(write->verdict, Verdict::kMeasuredOnce);
  // The direction is the tested runs' (their medians), not the rows' own
  // figures: A's row shows 145 ops/s, B's 140, but A's runs' median is 100
  // and B's 151 (24 of the 25 pairs have B above A): faster.
  a.e2e = nlohmann::json::array({e2e("getattr", {145, 100, 101, 99, 100})});
  b.e2e = nlohmann::json::array({e2e("getattr", {140, 150, 151, 152, 153})});
  auto turned = CompareRuns(a, b);
  ASSERT_TRUE(turned.ok()) << turned.status().ToString();
  const RowComparison* row = Find(*turned, "getattr");
  ASSERT_NE(row, nullptr);
  EXPECT_LT(row->test.p, 0.05);
  EXPECT_EQ(row->verdict, Verdict::kFaster);
  EXPECT_DOUBLE_EQ(row->ratio, 140.0 / 145);
}

TEST(CompareRunsTest, AStricterAlphaTurnsADifferenceIntoNone) {
  const RunResults a = SyntheticRun({Row("client-seal", 128, {100, 101, 99, 100, 102})}, 1e9);
  const RunResults b = SyntheticRun({Row("client-seal", 128, {150, 151, 149, 150, 152})}, 1e9);
  // 5 against 5 with no overlap: p = 2/252, below 0.05 and above 0.001.
  auto strict = CompareRuns(a, b, 0.001);
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ(Find(*strict, "client-seal")->verdict, Verdict::kSame);
}

TEST(CompareRunsTest, BadInputIsAClearError) {
  const RunResults a = SyntheticRun({Row("client-seal", 128, {1, 2, 3, 4, 5})}, 1e9);
  EXPECT_NE(CompareRuns(a, a, 0).status().message().find("alpha"), std::string::npos);
  EXPECT_NE(CompareRuns(a, a, 1.5).status().message().find("alpha"), std::string::npos);
  RunResults twice = a;
  twice.micro.push_back(twice.micro[0]);
  auto dup = CompareRuns(a, twice);
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("two micro rows"), std::string::npos)
      << dup.status().ToString();
}

}  // namespace
}  // namespace secmode::harness
