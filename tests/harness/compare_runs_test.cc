// secmode compare's verdicts on synthetic sides of runs whose differences
// are known: figures clearly slower or faster in B, one that moved within
// its noise, one side of one run, rows only one side has; and, on many
// synthetic rows whose runs vary as real runs do (a shift per run shared by
// that run's repetitions), that an A/A comparison flags about alpha of them
// while a planted slowdown is found.
#include "harness/compare_runs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "common/files.h"
#include "harness/aa_test.h"

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

// Runs of one micro row each: figures[i] is run i's figure (its repetitions
// around it).
std::vector<RunResults> Runs(const std::string& leg, const std::vector<double>& figures) {
  std::vector<RunResults> out;
  for (double f : figures) {
    out.push_back(SyntheticRun({Row(leg, 128, {f * 0.99, f, f * 1.01, f, f})}, 1e9 / f));
  }
  return out;
}

TEST(CompareRunsTest, VerdictsFollowTheRuns) {
  std::vector<RunResults> a = Runs("client-seal", {100, 102, 98});
  std::vector<RunResults> b = Runs("client-seal", {150, 153, 147});
  auto c = CompareRuns(a, b);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const RowComparison* slower = Find(*c, "client-seal 128 B");
  ASSERT_NE(slower, nullptr);
  EXPECT_EQ(slower->verdict, Verdict::kSlower);
  EXPECT_DOUBLE_EQ(slower->ratio, 1.5);
  EXPECT_TRUE(slower->test.applicable);
  EXPECT_LT(slower->test.p, 0.05);
  EXPECT_EQ(slower->a_runs, 3u);
  EXPECT_EQ(slower->b_runs, 3u);
  EXPECT_LT(slower->ratio_low, 1.5);
  EXPECT_GT(slower->ratio_high, 1.5);
  EXPECT_GT(slower->ratio_low, 1.0);
  // The bounds row (MB/s, higher is faster) fell with the micro figure.
  const RowComparison* bound = Find(*c, "aes256-cbc-encrypt 4 KiB");
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(bound->table, "bounds");
  EXPECT_EQ(bound->verdict, Verdict::kSlower);
  EXPECT_EQ(c->rows.front().table, "micro");  // micro rows first
  EXPECT_EQ(c->a_labels.size(), 3u);

  auto turned = CompareRuns(b, a);
  ASSERT_TRUE(turned.ok());
  EXPECT_EQ(Find(*turned, "client-seal")->verdict, Verdict::kFaster);
  EXPECT_EQ(Find(*turned, "aes256-cbc-encrypt")->verdict, Verdict::kFaster);

  auto same = CompareRuns(Runs("client-seal", {100, 110, 95}), Runs("client-seal", {104, 97, 108}));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(Find(*same, "client-seal")->verdict, Verdict::kSame);
  EXPECT_GE(Find(*same, "client-seal")->test.p, 0.05);
}

// One run a side: the repetitions inside it do not make a verdict, however
// far apart the two runs' repetitions lie.
// Runs whose micro figures were taken by different estimators (older runs
// took the median) are compared with a warning that says so; runs of one
// kind get none.
TEST(CompareRunsTest, RunsOfDifferentEstimatorsAreComparedWithAWarning) {
  std::vector<RunResults> a = Runs("client-seal", {1000, 1010, 990});
  std::vector<RunResults> b = Runs("client-seal", {1000, 1005, 995});
  for (auto* side : {&a, &b}) {
    for (RunResults& r : *side) r.method["micro_estimator"] = kMicroEstimator;
  }
  auto same = CompareRuns(a, b);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_TRUE(same->warnings.empty());
  for (RunResults& r : a) r.method = nlohmann::json::object();  // written before the key
  auto mixed = CompareRuns(a, b);
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  ASSERT_EQ(mixed->warnings.size(), 1u);
  EXPECT_NE(mixed->warnings[0].find("(fastest, median;"), std::string::npos) << mixed->warnings[0];
}

TEST(CompareRunsTest, OneRunASideGetsNoVerdict) {
  const RunResults a = SyntheticRun({Row("client-seal", 128, {100, 101, 99, 100, 102})}, 2e9);
  const RunResults b = SyntheticRun({Row("client-seal", 128, {150, 151, 149, 150, 152}),
                                     Row("client-seal", 4096, {900, 901, 902, 903, 904})},
                                    1e9);
  auto c = CompareRuns({a}, {b});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (const RowComparison& r : c->rows) {
    EXPECT_EQ(r.verdict, Verdict::kTooFewRuns) << r.key;
    EXPECT_FALSE(r.test.applicable);
  }
  EXPECT_DOUBLE_EQ(Find(*c, "client-seal 128 B")->ratio, 1.5);
  EXPECT_DOUBLE_EQ(Find(*c, "aes256-cbc-encrypt")->ratio, 0.5);
  ASSERT_EQ(c->only_b.size(), 1u);
  EXPECT_NE(c->only_b[0].find("client-seal 4 KiB"), std::string::npos) << c->only_b[0];
  // Three runs against one: still no variation on B's side to test against.
  auto three_one = CompareRuns(Runs("client-seal", {100, 101, 99}), {b});
  ASSERT_TRUE(three_one.ok());
  EXPECT_EQ(Find(*three_one, "client-seal 128 B")->verdict, Verdict::kTooFewRuns);
  // Copies of one run on each side: enough runs, but nothing varies.
  auto copies = CompareRuns({a, a}, {b, b});
  ASSERT_TRUE(copies.ok());
  EXPECT_EQ(Find(*copies, "client-seal 128 B")->verdict, Verdict::kNoSpread);
}

// e2e rows compare their runs' ops/s (higher is faster); a row's rounds
// inside one run are that run's figure, not samples.
TEST(CompareRunsTest, E2eRowsCompareTheirRunsOpsPerSecond) {
  auto run = [](double ops) {
    RunResults r = SyntheticRun({}, 1e9);
    nlohmann::json row = {{"server", "secmode"},
                          {"transport", "tcp-loopback"},
                          {"mode", "krb5p"},
                          {"engine", "native"},
                          {"enctype", "aes256"},
                          {"op", "getattr"},
                          {"size", 0},
                          {"connections", 4},
                          {"slots", 64},
                          {"crypto_threads", "parallel"},
                          {"ops_per_second", ops}};
    row["repeats"].push_back({{"ops_per_second", ops * 0.5}});
    r.e2e = nlohmann::json::array({row});
    return r;
  };
  auto c = CompareRuns({run(100), run(101), run(99)}, {run(150), run(152), run(149)});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const RowComparison* getattr = Find(*c, "getattr");
  ASSERT_NE(getattr, nullptr);
  EXPECT_EQ(getattr->verdict, Verdict::kFaster);
  EXPECT_DOUBLE_EQ(getattr->ratio, 1.5);
}

TEST(CompareRunsTest, AStricterAlphaTurnsADifferenceIntoNone) {
  auto a = Runs("client-seal", {100, 104, 96});
  auto b = Runs("client-seal", {110, 114, 106});
  auto loose = CompareRuns(a, b, 0.05);
  auto strict = CompareRuns(a, b, 0.001);
  ASSERT_TRUE(loose.ok() && strict.ok());
  EXPECT_EQ(Find(*loose, "client-seal")->verdict, Verdict::kSlower);
  EXPECT_EQ(Find(*strict, "client-seal")->verdict, Verdict::kSame);
  // The stricter level's interval is the wider one.
  EXPECT_LT(Find(*strict, "client-seal")->ratio_low, Find(*loose, "client-seal")->ratio_low);
}

// Synthetic runs as real ones vary: each run shifts every figure of a row
// by its own factor (the machine's state during that run), shared by that
// run's repetitions, which vary less around it.
class RunNoise {
 public:
  RunNoise(double run_sd, double repetition_sd) : run_sd_(run_sd), repetition_sd_(repetition_sd) {}
  // One run of `rows` micro rows whose true figures are 1000 * (1 + i % 7),
  // the rows from `slow_from` on `factor` times slower.
  RunResults Run(size_t rows, size_t slow_from = SIZE_MAX, double factor = 1) {
    std::normal_distribution<double> run(0, run_sd_), repetition(0, repetition_sd_);
    std::vector<MicroRow> micro;
    for (size_t i = 0; i < rows; ++i) {
      const double truth = 1000.0 * static_cast<double>(1 + i % 7) * (i >= slow_from ? factor : 1);
      const double shift = std::exp(run(rng_));
      std::vector<double> reps;
      for (int k = 0; k < 5; ++k) reps.push_back(truth * shift * std::exp(repetition(rng_)));
      micro.push_back(Row("leg" + std::to_string(i), 128, reps));
    }
    return SyntheticRun(std::move(micro), 1e9);
  }

 private:
  double run_sd_, repetition_sd_;
  std::mt19937_64 rng_{20261206};
};

// The fraction of micro rows called faster or slower.
double FlaggedFraction(const RunComparison& c) {
  size_t flagged = 0, n = 0;
  for (const RowComparison& r : c.rows) {
    if (r.table != "micro") continue;
    ++n;
    flagged += r.verdict == Verdict::kFaster || r.verdict == Verdict::kSlower;
  }
  return n ? static_cast<double>(flagged) / static_cast<double>(n) : -1;
}

// An A/A comparison of 3 + 3 runs of one distribution flags about alpha of
// its rows (400 rows: the binomial's standard deviation at 5% is 1.1%),
// where a test over the repetitions flagged most of them; 5 + 5 the same.
TEST(CompareRunsTest, AnAaComparisonOfRunsFlagsAboutAlpha) {
  RunNoise noise(0.05, 0.01);
  for (size_t per_side : {3, 5}) {
    std::vector<RunResults> a, b;
    for (size_t i = 0; i < per_side; ++i) {  // interleaved, as `secmode` would run them
      a.push_back(noise.Run(400));
      b.push_back(noise.Run(400));
    }
    auto c = CompareRuns(a, b);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    const double flagged = FlaggedFraction(*c);
    EXPECT_LE(flagged, 0.08) << per_side << " runs a side";
    EXPECT_GE(flagged, 0.01) << per_side << " runs a side";
  }
}

// A 10% slowdown of half the rows, with runs that vary 3% between them, is
// found in most of those rows with 3 + 3 runs, and the untouched half stays
// near alpha.
TEST(CompareRunsTest, APlantedSlowdownIsFoundInThreePlusThreeRuns) {
  RunNoise noise(0.03, 0.01);
  std::vector<RunResults> a, b;
  for (int i = 0; i < 3; ++i) {
    a.push_back(noise.Run(400));
    b.push_back(noise.Run(400, 200, 1.10));
  }
  auto c = CompareRuns(a, b);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  size_t slower = 0, wrong_way = 0, untouched_flagged = 0;
  for (const RowComparison& r : c->rows) {
    if (r.table != "micro") continue;
    const size_t i = std::stoul(r.key.substr(r.key.find("leg") + 3));
    const bool flagged = r.verdict == Verdict::kFaster || r.verdict == Verdict::kSlower;
    if (i < 200) {
      untouched_flagged += flagged;
    } else {
      slower += r.verdict == Verdict::kSlower;
      wrong_way += r.verdict == Verdict::kFaster;
    }
  }
  EXPECT_GE(slower, 120u);  // at least 60% of the 200 slowed rows
  EXPECT_EQ(wrong_way, 0u);
  EXPECT_LE(untouched_flagged, 16u);  // 8% of the 200 untouched rows
}

// The A/A summary of such runs: its false positives are the comparison's
// faster and slower rows, and each row's spread is over all six runs.
TEST(CompareRunsTest, SummarizeAaCountsFalsePositivesAndEachRowsSpread) {
  RunNoise noise(0.05, 0.01);
  std::vector<RunResults> a, b;
  for (int i = 0; i < 3; ++i) {
    a.push_back(noise.Run(100));
    b.push_back(noise.Run(100));
  }
  auto r = SummarizeAa(a, b, 0.05);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  size_t flagged = 0;
  for (const RowComparison& c : r->comparison.rows) {
    flagged += c.verdict == Verdict::kFaster || c.verdict == Verdict::kSlower;
  }
  // 100 micro rows; the bounds row is the same in every run, so untested.
  EXPECT_EQ(r->tested, 100u);
  EXPECT_EQ(r->false_positives, flagged);
  EXPECT_DOUBLE_EQ(r->false_positive_rate, static_cast<double>(flagged) / 100);
  ASSERT_EQ(r->rows.size(), 101u);
  std::vector<double> sds;
  for (const RowNoise& n : r->rows) {
    EXPECT_EQ(n.runs, 6u);
    if (n.table != "micro") continue;
    EXPECT_NEAR(n.single_run_ratio,
                std::exp(common::StudentTQuantile(5, 0.05) * n.log_sd * std::sqrt(2.0)), 1e-12);
    if (n.table == "micro") sds.push_back(n.log_sd);
  }
  // The runs' log figures vary by the run shift (sd 0.05) and the median of
  // five repetitions (sd 0.01 each).
  EXPECT_NEAR(common::Median(sds), 0.05, 0.015);
}

// Per table: the rows with a spread, their median and largest spread with
// the noisiest row, and the median and largest single-run change; a row of
// one run has no spread and a table of such rows is left out.
TEST(CompareRunsTest, NoiseByTableSummarizesEachTablesRowsWithASpread) {
  auto row = [](const char* table, const char* key, size_t runs, double sd, double single) {
    RowNoise n;
    n.table = table;
    n.key = key;
    n.runs = runs;
    n.log_sd = sd;
    n.single_run_ratio = single;
    return n;
  };
  const std::vector<RowNoise> rows = {
      row("micro", "m1", 6, 0.02, 1.05), row("micro", "m2", 6, 0.08, 1.20),
      row("micro", "m3", 6, 0.01, 1.02), row("e2e", "e1", 6, 0.10, 1.30),
      row("e2e", "e2", 1, 0.90, 9.00),   row("bounds", "b1", 1, 0.50, 3.00)};
  const std::vector<TableNoise> t = NoiseByTable(rows);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].table, "e2e");
  EXPECT_EQ(t[0].rows, 1u);
  EXPECT_DOUBLE_EQ(t[0].max_log_sd, 0.10);
  EXPECT_EQ(t[0].noisiest, "e1");
  EXPECT_EQ(t[1].table, "micro");
  EXPECT_EQ(t[1].rows, 3u);
  EXPECT_DOUBLE_EQ(t[1].median_log_sd, 0.02);
  EXPECT_DOUBLE_EQ(t[1].max_log_sd, 0.08);
  EXPECT_EQ(t[1].noisiest, "m2");
  EXPECT_DOUBLE_EQ(t[1].median_single_run_ratio, 1.05);
  EXPECT_DOUBLE_EQ(t[1].max_single_run_ratio, 1.20);
}

// The validation's verdicts in each run, taken A1 B1 A2 B2 ...: which
// points kept one verdict, how many each back-to-back pair kept, and rows
// a run's results.json should not have had left out.
TEST(CompareRunsTest, SummarizeAaSaysHowFarTheValidationVerdictsRepeat) {
  auto run = [](std::vector<nlohmann::json> rows) {
    RunResults r = SyntheticRun({Row("client-seal", 128, {100, 100, 100})}, 1e9);
    for (auto& row : rows) r.nconnect.push_back(std::move(row));
    return r;
  };
  auto point = [](const std::string& name, const std::string& verdict) {
    return nlohmann::json{{"kind", "validation"}, {"name", name}, {"verdict", verdict}};
  };
  const std::vector<RunResults> a = {
      run({point("p", "agrees"), point("q", "agrees")}),
      run({point("p", "agrees"), point("q", "undecided"), nlohmann::json{{"kind", "sweep"}}}),
      run({point("p", "disagrees"), point("q", "agrees")}),
  };
  const std::vector<RunResults> b = {
      run({point("p", "agrees"), point("q", "agrees"), nlohmann::json::array({1, 2})}),
      run({point("p", "agrees"), nlohmann::json{{"kind", "validation"}, {"name", 7}},
           nlohmann::json{{"kind", "validation"}, {"name", "r"}, {"verdict", false}}}),
  };
  auto r = SummarizeAa(a, b, 0.05);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const VerdictRepeats& v = r->validation;
  ASSERT_EQ(v.points.size(), 2u);
  EXPECT_EQ(v.points[0].name, "p");
  EXPECT_EQ(v.points[1].name, "q");
  // A1 B1 A2 B2 A3; B2 has no q.
  EXPECT_EQ(v.points[1].verdicts,
            (std::vector<std::string>{"agrees", "agrees", "undecided", "", "agrees"}));
  EXPECT_FALSE(v.points[0].same);  // p disagrees in A3
  EXPECT_FALSE(v.points[1].same);
  EXPECT_EQ(v.same, 0u);
  EXPECT_EQ(v.pair_points, (std::vector<size_t>{2, 2, 1, 1}));
  EXPECT_EQ(v.pair_same, (std::vector<size_t>{2, 1, 1, 0}));
  // Only p's agrees -> disagrees (B2 -> A3) turns a verdict over; q's
  // agrees -> undecided is a move to the rule's edge.
  EXPECT_EQ(v.pair_contradicted, (std::vector<size_t>{0, 0, 0, 1}));
  const nlohmann::json doc = AaJson({}, *r);
  EXPECT_EQ(doc["validation"]["same"], 0);
  EXPECT_EQ(doc["validation"]["pairs"][1],
            (nlohmann::json{{"points", 2}, {"same", 1}, {"contradicted", 0}}));
  EXPECT_EQ(doc["validation"]["pairs"][3]["contradicted"], 1);
  // Runs with no validation: nothing to say.
  auto none = SummarizeAa({run({}), run({})}, {run({}), run({})}, 0.05);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->validation.points.empty());
  EXPECT_TRUE(none->validation.pair_points.empty());
}

// noise.json as `secmode noise` writes it, from A/A runs of `rows` rows.
nlohmann::json NoiseDoc(size_t rows, const std::string& hostname) {
  RunNoise noise(0.05, 0.01);
  std::vector<RunResults> a, b;
  for (int i = 0; i < 3; ++i) {
    a.push_back(noise.Run(rows));
    b.push_back(noise.Run(rows));
  }
  for (auto* side : {&a, &b}) {
    for (RunResults& r : *side) r.machine.hostname = hostname;
  }
  auto r = SummarizeAa(a, b, 0.05);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  AaOptions o;
  o.run_args = {"--quick"};
  return AaJson(o, *r);
}

class NoiseFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tmp = common::MakeTempDirectory("secmode-noise-file-");
    ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();
    dir_ = *tmp;
  }
  void TearDown() override {
    if (!dir_.empty()) {
      EXPECT_TRUE(common::RemoveTree(dir_).ok());
    }
  }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

// noise.json read back: the rows and the machine its runs were made on.
TEST_F(NoiseFileTest, ReadsWhatSecmodeNoiseWrote) {
  const nlohmann::json doc = NoiseDoc(20, "host-1");
  EXPECT_EQ(doc["machine"]["hostname"], "host-1");
  auto f = ReadNoiseFile(Write("noise.json", doc.dump()));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(f->has_machine);
  EXPECT_EQ(f->hostname, "host-1");
  EXPECT_EQ(f->runs_per_side, 3u);
  ASSERT_EQ(f->rows.size(), doc["rows"].size());
  EXPECT_EQ(f->rows[0].key, doc["rows"][0]["key"]);
  EXPECT_DOUBLE_EQ(f->rows[0].log_sd, doc["rows"][0]["log_sd"].get<double>());
  // What a --publish run reports: the arguments and counts.
  EXPECT_EQ(f->run_args, (std::vector<std::string>{"--quick"}));
  EXPECT_EQ(f->tested, doc["tested"].get<size_t>());
  EXPECT_EQ(f->false_positives, doc["false_positives"].get<size_t>());
  // The validation's repeats, where the runs held a validation.
  nlohmann::json with = doc;
  with["validation"] = {
      {"points", 10},
      {"same", 7},
      {"pairs",
       {{{"points", 10}, {"same", 9}, {"contradicted", 1}}, {{"points", 10}, {"same", 8}}}}};
  auto v = ReadNoiseFile(Write("validation.json", with.dump()));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->validation_points, 10u);
  EXPECT_EQ(v->validation_same, 7u);
  EXPECT_EQ(v->pair_same, (std::vector<size_t>{9, 8}));
  EXPECT_EQ(v->pair_contradicted, (std::vector<size_t>{1, 0}));  // an older file: none said
}

// Where a noise.json's runs were made against this machine: every field
// that differs, named.
TEST_F(NoiseFileTest, SaysWhereItsMachineDiffersFromThisOne) {
  auto f = ReadNoiseFile(Write("noise.json", NoiseDoc(3, "host-1").dump()));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  common::MachineInfo m;
  m.hostname = f->hostname;
  m.cpu_model = f->cpu_model;
  m.logical_cpus = f->logical_cpus;
  m.kernel = f->kernel;
  m.build_type = f->build_type;
  m.secmode_commit = f->secmode_commit;
  EXPECT_TRUE(NoiseMachineDifferences(*f, m).empty());
  m.hostname = "host-2";
  m.secmode_commit = "abc";
  const std::vector<std::string> d = NoiseMachineDifferences(*f, m);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], "host host-1, here host-2");
  EXPECT_NE(d[1].find("secmode commit"), std::string::npos) << d[1];
  f->has_machine = false;
  ASSERT_EQ(NoiseMachineDifferences(*f, m).size(), 1u);
}

// Untrusted input: each bad file is refused with its cause and path.
TEST_F(NoiseFileTest, BadFilesAreClearErrors) {
  auto error = [&](const std::string& path) {
    auto f = ReadNoiseFile(path);
    EXPECT_FALSE(f.ok()) << path;
    return f.ok() ? std::string() : f.status().ToString();
  };
  EXPECT_NE(error(dir_ + "/missing.json").find("missing.json: no such file"), std::string::npos);
  EXPECT_NE(error(dir_).find("no such file"), std::string::npos);  // a directory
  EXPECT_NE(error(Write("text.json", "{\"schema\": ")).find("not valid JSON"), std::string::npos);
  // Another file of secmode's: a run's results.json.
  const std::string results = Write("results.json", ToJson(Runs("client-seal", {100})[0]).dump());
  const std::string foreign = error(results);
  EXPECT_NE(foreign.find("not a noise.json"), std::string::npos) << foreign;
  EXPECT_NE(foreign.find("secmode-results/1"), std::string::npos) << foreign;
  EXPECT_NE(error(Write("array.json", "[1, 2]")).find("no schema"), std::string::npos);
  // A field of the wrong type or range, named with its place.
  const nlohmann::json good = NoiseDoc(3, "h");
  auto with = [&](const char* name, const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json doc = good;
    change(doc);
    return error(Write(name, doc.dump()));
  };
  EXPECT_NE(with("sd.json", [](auto& d) { d["rows"][1]["log_sd"] = -0.1; }).find("rows[1].log_sd"),
            std::string::npos);
  EXPECT_NE(with("key.json", [](auto& d) { d["rows"][0]["key"] = 7; }).find("rows[0].key"),
            std::string::npos);
  EXPECT_NE(with("runs.json", [](auto& d) { d["rows"][2]["runs"] = "6"; }).find("rows[2].runs"),
            std::string::npos);
  EXPECT_NE(with("ratio.json", [](auto& d) { d["rows"][0]["single_run_ratio"] = 0.5; })
                .find("single_run_ratio"),
            std::string::npos);
  EXPECT_NE(with("rows.json", [](auto& d) { d["rows"] = "all"; }).find("rows: expected an array"),
            std::string::npos);
  EXPECT_NE(with("dup.json", [](auto& d) { d["rows"].push_back(d["rows"][0]); })
                .find("a second row of the same table and key"),
            std::string::npos);
  EXPECT_NE(with("machine.json", [](auto& d) { d["machine"] = 1; }).find("machine"),
            std::string::npos);
  EXPECT_NE(with("alpha.json", [](auto& d) { d["alpha"] = 2; }).find("alpha"), std::string::npos);
  EXPECT_NE(with("fp.json", [](auto& d) { d["false_positives"] = size_t{1} << 41; })
                .find("false_positives"),
            std::string::npos);
  EXPECT_NE(with("args.json", [](auto& d) { d["run_args"] = {1}; }).find("run_args"),
            std::string::npos);
  EXPECT_NE(with("pairs.json",
                 [](auto& d) {
                   d["validation"] = {
                       {"points", 2}, {"same", 1}, {"pairs", {{{"points", 2}, {"same", 3}}}}};
                 })
                .find("validation.pairs[0].same"),
            std::string::npos);
  // Too large to be one: refused before it is read.
  const std::string big = dir_ + "/big.json";
  std::ofstream(big) << "{";
  std::filesystem::resize_file(big, 65u << 20);
  EXPECT_NE(error(big).find("larger than 64 MiB"), std::string::npos);
}

// One run a side: each row is told the change that stands out of its own
// A/A spread, or of its table's noisiest row where the noise run lacks it;
// a table the noise run lacks gives none. No verdict changes.
TEST_F(NoiseFileTest, AddNoiseGivesOneRunRowsTheirAaThreshold) {
  auto f = ReadNoiseFile(Write("noise.json", NoiseDoc(20, "").dump()));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const RowNoise* leg3 = nullptr;
  double largest = 1;
  for (const RowNoise& n : f->rows) {
    if (n.key.find(" leg3 ") != std::string::npos) leg3 = &n;
    if (n.table == "micro") largest = std::max(largest, ChangeToStandOut(n.log_sd, 6, 0.05, 1, 1));
  }
  ASSERT_NE(leg3, nullptr);
  // Run A has leg3 (in the noise run), and leg99 (not in it); B's leg3 is
  // twice as slow, its leg99 0.1% slower; the bounds row is the noise run's
  // too, but it did not vary there.
  auto one = [](double leg3_ns, double leg99_ns) {
    RunResults r = SyntheticRun({Row("leg3", 128, {leg3_ns}), Row("leg99", 128, {leg99_ns})}, 1e9);
    r.e2e = nlohmann::json::array({{{"server", "s"}, {"op", "getattr"}, {"ops_per_second", 5.0}}});
    return r;
  };
  const std::vector<RunResults> a = {one(4000, 1000)}, b = {one(8000, 1001)};
  auto c = CompareRuns(a, b);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  AddNoise(*f, a, b, &*c);
  EXPECT_EQ(c->noise.path, f->path);
  EXPECT_EQ(c->noise.runs_per_side, 3u);
  EXPECT_TRUE(c->noise.warnings.empty());  // the runs' machine is the noise run's
  const RowComparison* own = Find(*c, " leg3 ");
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->verdict, Verdict::kTooFewRuns);
  EXPECT_EQ(own->noise_from, "row");
  EXPECT_NEAR(own->noise_ratio, ChangeToStandOut(leg3->log_sd, leg3->runs, 0.05, 1, 1), 1e-12);
  EXPECT_NEAR(own->noise_ratio, leg3->single_run_ratio, 1e-12);  // the same alpha
  EXPECT_TRUE(own->BeyondNoise());                               // 30% against a spread of about 5%
  const RowComparison* table = Find(*c, " leg99 ");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->noise_from, "table");
  EXPECT_NEAR(table->noise_ratio, largest, 1e-12);
  EXPECT_FALSE(table->BeyondNoise());
  const RowComparison* e2e = Find(*c, "getattr");
  ASSERT_NE(e2e, nullptr);
  EXPECT_EQ(e2e->noise_ratio, 0);  // no e2e table in the noise run
  EXPECT_FALSE(e2e->BeyondNoise());
  // Three runs against one: the change to stand out is smaller than for
  // one against one, and a stricter alpha makes it larger.
  auto three = CompareRuns({a[0], a[0], a[0]}, b);
  auto strict = CompareRuns(a, b, 0.001);
  ASSERT_TRUE(three.ok() && strict.ok());
  AddNoise(*f, a, b, &*three);
  AddNoise(*f, a, b, &*strict);
  EXPECT_LT(Find(*three, " leg3 ")->noise_ratio, own->noise_ratio);
  EXPECT_GT(Find(*strict, " leg3 ")->noise_ratio, own->noise_ratio);
  // A row with a verdict is left alone.
  auto tested = CompareRuns(Runs("leg3", {100, 101, 99}), Runs("leg3", {100, 102, 98}));
  ASSERT_TRUE(tested.ok());
  AddNoise(*f, a, b, &*tested);
  for (const RowComparison& r : tested->rows) EXPECT_EQ(r.noise_ratio, 0) << r.key;
}

// A noise.json from another machine or build, or one that does not say,
// is named in a warning for each run and field that differ.
TEST_F(NoiseFileTest, AddNoiseWarnsWhenTheNoiseIsAnotherMachines) {
  const std::vector<RunResults> a = Runs("leg3", {100}), b = Runs("leg3", {110});
  auto other = ReadNoiseFile(Write("other.json", NoiseDoc(5, "elsewhere").dump()));
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto c = CompareRuns(a, b);
  ASSERT_TRUE(c.ok());
  AddNoise(*other, a, b, &*c);
  ASSERT_EQ(c->noise.warnings.size(), 2u);  // runs A and B, the host
  EXPECT_NE(c->noise.warnings[0].find("host elsewhere, run A with"), std::string::npos)
      << c->noise.warnings[0];
  nlohmann::json old = NoiseDoc(5, "");
  old.erase("machine");
  auto unknown = ReadNoiseFile(Write("old.json", old.dump()));
  ASSERT_TRUE(unknown.ok()) << unknown.status().ToString();
  EXPECT_FALSE(unknown->has_machine);
  AddNoise(*unknown, a, b, &*c);
  ASSERT_EQ(c->noise.warnings.size(), 1u);
  EXPECT_NE(c->noise.warnings[0].find("does not say which machine"), std::string::npos);
}

TEST(CompareRunsTest, BadInputIsAClearError) {
  const std::vector<RunResults> a = Runs("client-seal", {1, 2});
  EXPECT_NE(CompareRuns(a, a, 0).status().message().find("alpha"), std::string::npos);
  EXPECT_NE(CompareRuns(a, a, 1.5).status().message().find("alpha"), std::string::npos);
  EXPECT_NE(CompareRuns({}, a).status().message().find("side A"), std::string::npos);
  RunResults twice = a[0];
  twice.micro.push_back(twice.micro[0]);
  auto dup = CompareRuns(a, {a[0], twice});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("run B2 has two micro rows"), std::string::npos)
      << dup.status().ToString();
}

// A side on disk: one run directory, or a folder of them read in name
// order; anything else is an error naming the path.
TEST(CompareRunsTest, ReadRunSetTakesARunOrAFolderOfRuns) {
  namespace fs = std::filesystem;
  auto tmp = common::MakeTempDirectory("secmode-compare-");
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();
  const fs::path dir = *tmp;
  fs::create_directories(dir / "set" / "2-second");
  fs::create_directories(dir / "set" / "1-first");
  fs::create_directories(dir / "set" / "not-a-run");
  fs::create_directories(dir / "empty");
  const std::string text = ToJson(Runs("client-seal", {100})[0]).dump();
  for (const char* run : {"1-first", "2-second"}) {
    std::ofstream(dir / "set" / run / "results.json") << text;
  }
  auto one = ReadRunSet((dir / "set" / "1-first").string());
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->size(), 1u);
  auto set = ReadRunSet((dir / "set").string());
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->size(), 2u);
  auto empty = ReadRunSet((dir / "empty").string());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  EXPECT_FALSE(ReadRunSet((dir / "missing").string()).ok());
  EXPECT_TRUE(common::RemoveTree(*tmp).ok());
}

}  // namespace
}  // namespace secmode::harness
