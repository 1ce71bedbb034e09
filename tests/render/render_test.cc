// Renderers draw from results alone: a report drawn from a saved
// results.json is the one drawn when the run was written; ratios come from
// the rows of the run; the validation table counts verdicts; bad run
// directories are refused with the reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "common/files.h"
#include "common/format.h"
#include "harness/results.h"
#include "render/report.h"
#include "render/report_html.h"
#include "render/report_lab.h"
#include "render/report_noise.h"
#include "render/report_validation.h"
#include "render/run_dir.h"
#include "tests/support/private_tmpfs.h"

namespace secmode::render {

using common::CsvField;
using common::Fmt;
using common::SizeLabel;
using common::SkewLabel;
namespace {

using nlohmann::json;

harness::MicroRow Row(const std::string& mode, const std::string& leg, size_t size, double ns) {
  harness::LegMeasurement m;
  m.ns_per_op = ns;
  m.bytes_per_second = static_cast<double>(size) * 1e9 / ns;
  m.p50_ns = static_cast<uint64_t>(ns);
  m.p99_ns = m.p999_ns = static_cast<uint64_t>(ns) + 1;
  m.samples = 10;
  const bool krb = mode != "sys";
  return {mode, krb ? "native" : "none", krb ? "aes256-cts-hmac-sha1-96" : "", leg, size, 1, m};
}

harness::RunResults Sample() {
  harness::RunResults r;
  // A machine unlike the one running the test: the report must show what
  // the results say, not what this process sees.
  r.machine = common::ReadMachineInfo();
  r.machine.cpu_model = "Test CPU 9000";
  r.machine.logical_cpus = 77;
  r.machine.tsc_ghz = 1.234;
  r.method["cycle_source"] = "test-ticks";
  r.command = "render_test";
  r.started_at = "2026-11-30T10:00:00Z";
  r.finished_at = "2026-11-30T10:01:00Z";
  for (const char* leg : {"client-seal", "server-open", "server-seal", "client-open"}) {
    r.micro.push_back(Row("sys", leg, 4096, 250));
    r.micro.push_back(Row("krb5p", leg, 4096, 750));
  }
  r.bounds.push_back({"smb-enc-aes-128-gcm seal+open", 1u << 20, 2e9});
  r.bounds.push_back({"evp-aes-128-gcm encrypt+decrypt", 1u << 20, 2.5e9});
  r.sections["smb"] = {{"size", 1u << 20},
                       {"rounds", 3},
                       {"seconds_per_round", 0.03},
                       {"target", 0.9},
                       {"pairs",
                        {{{"smb", "smb-enc-aes-128-gcm seal+open"},
                          {"raw", "evp-aes-128-gcm encrypt+decrypt"},
                          {"targeted", true}}}},
                       {"cores", 2},
                       {"multichannel", json::array()}};
  json e2e_sys = harness::LoadReportJson({});
  e2e_sys["mode"] = "sys";
  e2e_sys["op"] = "read";
  e2e_sys["size"] = 4096;
  e2e_sys["ops_per_second"] = 1000.0;
  e2e_sys["engine"] = "none";
  e2e_sys["enctype"] = "";
  e2e_sys["server_window_drops"] = 0;
  json e2e_p = e2e_sys;
  e2e_p["mode"] = "krb5p";
  e2e_p["engine"] = "native";
  e2e_p["enctype"] = "aes256-cts-hmac-sha1-96";
  e2e_p["ops_per_second"] = 250.0;
  r.e2e = {e2e_sys, e2e_p};
  r.sections["e2e"] = {{"connections", 4}, {"slots", 64}, {"window", 128}};
  r.sections["gss"] = {
      {"comparison",
       {{{"enctype", "aes256-cts-hmac-sha1-96"},
         {"size", 128},
         {"bound_ns", 500.0},
         {"engines_ns", {{"mit", 4000.0}, {"mit-iov", 3900.0}, {"native", 1000.0}}},
         {"iterations", 10}}}}};
  return r;
}

TEST(FormatTest, SizesAndNumbers) {
  EXPECT_EQ(SizeLabel(128), "128 B");
  EXPECT_EQ(SizeLabel(4096), "4 KiB");
  EXPECT_EQ(SizeLabel(1u << 20), "1 MiB");
  EXPECT_EQ(SizeLabel(1000), "1000 B");
  EXPECT_EQ(Fmt("%.2f", 1.0 / 3), "0.33");
  EXPECT_EQ(SkewLabel(0), "no skew");
  EXPECT_EQ(SkewLabel(2000000), "2 ms skew");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"x\""), "\"say \"\"x\"\"\"");
}

// The lab's tables name each protocol's points in its own terms, and a
// point outside the tolerance carries each end's CPU per operation, the
// model's beside the measured, where the run measured them.
TEST(RenderTest, LabPointsNameTheirProtocolsDepthAndTheCpuBehindADisagreement) {
  const nlohmann::json row = {
      {"link", "no added delay, unshaped"},
      {"mode", "smb-plain"},
      {"op", "write"},
      {"size", 1048576},
      {"iodepth", 64},
      {"numjobs", 1},
      {"connections", 4},
      {"assumptions_hold", false},
      {"why_not", "CPU-bound"},
      {"ratio", 2.0},
      {"within_tolerance", false},
      {"predicted",
       {{"iops", 100.0}, {"client_cpu_us_per_op", 300.0}, {"server_cpu_us_per_op", 1500.0}}},
      {"measured",
       {{"iops", 200.0}, {"client_cpu_us_per_op", 280.0}, {"server_thread_us_per_op", 600.0}}}};
  nlohmann::json smb = {
      {"protocol", "smb"}, {"server", "Samba 4.17 AD DC"}, {"rows", nlohmann::json::array({row})}};
  const std::string md = render::LabMarkdown(smb);
  EXPECT_NE(md.find("smb-plain write 1 MiB 4 channels x 16 in flight"), std::string::npos) << md;
  EXPECT_NE(md.find("model / measured: client 300 / 280 us, server 1500 / 600 us (its session "
                    "thread)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("QUERY_INFO"), std::string::npos) << md;
  nlohmann::json nfs_row = row;
  nfs_row["mode"] = "krb5p";
  nfs_row["measured"] = {{"iops", 200.0}};
  const nlohmann::json nfs = {{"rows", nlohmann::json::array({nfs_row})}};
  const std::string nfs_md = render::LabMarkdown(nfs);
  EXPECT_NE(nfs_md.find("krb5p write 1 MiB iodepth 64 numjobs 1"), std::string::npos) << nfs_md;
  EXPECT_EQ(nfs_md.find("model / measured"), std::string::npos) << nfs_md;
  EXPECT_NE(nfs_md.find("GETATTR"), std::string::npos) << nfs_md;
}

TEST(RenderTest, PredictedFromTheLegsSaysWhereAnEngineSerialisesItsCalls) {
  harness::RunResults r = Sample();
  const json native = {{"mode", "krb5p"},
                       {"engine", "native"},
                       {"op", "getattr"},
                       {"crypto_threads", "parallel"},
                       {"measured_over_predicted", 0.95},
                       {"within", true}};
  r.sections["e2e"]["from_legs"] = {{"tolerance", 0.15}, {"rows", json::array({native})}};
  auto only_native = RenderRun(r);
  ASSERT_TRUE(only_native.ok()) << only_native.status().ToString();
  ASSERT_NE(only_native->report_md.find("### Predicted from the legs"), std::string::npos);
  EXPECT_EQ(only_native->report_md.find("serialises the calls of one context"), std::string::npos);
  json mit = native;
  mit["engine"] = "mit";
  mit["crypto_threads"] = "serialised";
  mit["measured_over_predicted"] = 0.74;
  mit["within"] = false;
  r.sections["e2e"]["from_legs"]["rows"].push_back(mit);
  auto with_mit = RenderRun(r);
  ASSERT_TRUE(with_mit.ok()) << with_mit.status().ToString();
  EXPECT_NE(with_mit->report_md.find("serialises the calls of one context"), std::string::npos);
  EXPECT_NE(with_mit->report_md.find("| krb5p::mit | getattr |"), std::string::npos)
      << with_mit->report_md;
  EXPECT_NE(with_mit->report_md.find("(outside) | - | - |"), std::string::npos)
      << with_mit->report_md;
  // Its run with a context per connection, in the last two columns.
  r.sections["e2e"]["from_legs"]["rows"][1]["context_per_connection"] = {
      {"measured_ops_per_second", 123456.0},
      {"server_window_drops", 0},
      {"measured_over_predicted", 0.91},
      {"within", true}};
  auto per_connection = RenderRun(r);
  ASSERT_TRUE(per_connection.ok()) << per_connection.status().ToString();
  EXPECT_NE(per_connection->report_md.find("(outside) | 123456 (0 drops) | 0.91 |"),
            std::string::npos)
      << per_connection->report_md;
  // One sys run: no range, whatever the row holds.
  r.sections["e2e"]["from_legs"]["rows"][1]["sys_cpu_ns_per_call"] = 5510.0;
  r.sections["e2e"]["from_legs"]["rows"][1]["sys_runs"] = 1;
  r.sections["e2e"]["from_legs"]["rows"][1]["sys_cpu_ns_per_call_range"] = {5510.0, 5510.0};
  auto single = RenderRun(r);
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  EXPECT_NE(single->report_md.find("| 5.51 |"), std::string::npos) << single->report_md;
  EXPECT_EQ(single->report_md.find("5.51 ["), std::string::npos) << single->report_md;
  // A baseline that is the median of three sys runs shows their range.
  r.sections["e2e"]["from_legs"]["rows"][1]["sys_cpu_ns_per_call"] = 5510.0;
  r.sections["e2e"]["from_legs"]["rows"][1]["sys_runs"] = 3;
  r.sections["e2e"]["from_legs"]["rows"][1]["sys_cpu_ns_per_call_range"] = {5270.0, 6620.0};
  auto ranged = RenderRun(r);
  ASSERT_TRUE(ranged.ok()) << ranged.status().ToString();
  EXPECT_NE(ranged->report_md.find("| 5.51 [5.27, 6.62] |"), std::string::npos)
      << ranged->report_md;
  // A row that is the median of its rounds shows its runs' range beside its figure.
  r.sections["e2e"]["from_legs"]["rows"][1]["measured_cpu_ns_per_call"] = 7100.0;
  r.sections["e2e"]["from_legs"]["rows"][1]["runs"] = 3;
  r.sections["e2e"]["from_legs"]["rows"][1]["measured_cpu_ns_per_call_range"] = {6900.0, 8800.0};
  auto rounds = RenderRun(r);
  ASSERT_TRUE(rounds.ok()) << rounds.status().ToString();
  EXPECT_NE(rounds->report_md.find("| 7.10 [6.90, 8.80] |"), std::string::npos)
      << rounds->report_md;
  // Which runs the figures are, as the section recorded it.
  EXPECT_EQ(rounds->report_md.find("rounds it ran in"), std::string::npos) << rounds->report_md;
  r.sections["e2e"]["rounds"] = 3;
  auto in_rounds = RenderRun(r);
  ASSERT_TRUE(in_rounds.ok()) << in_rounds.status().ToString();
  EXPECT_NE(in_rounds->report_md.find("median run by busy CPU per call, of the 3 rounds it ran in"),
            std::string::npos)
      << in_rounds->report_md;
  EXPECT_NE(in_rounds->report_md.find("ran in 3 rounds"), std::string::npos)
      << in_rounds->report_md;
  // Rows without `pairs` (predicted from the sys row) do not claim pairing.
  EXPECT_EQ(in_rounds->report_md.find("predicted from the sys run of its round"),
            std::string::npos);
  // Runs paired with the sys run just before each: the text says so, and
  // the ratio shows its pairs' range (one pair: none).
  r.sections["e2e"]["from_legs"]["rows"][1]["pairs"] = 3;
  r.sections["e2e"]["from_legs"]["rows"][1]["measured_over_predicted_range"] = {0.70, 0.93};
  r.sections["e2e"]["from_legs"]["rows"][1]["context_per_connection"]["pairs"] = 1;
  r.sections["e2e"]["from_legs"]["rows"][1]["context_per_connection"]
            ["measured_over_predicted_range"] = {0.91, 0.91};
  auto paired = RenderRun(r);
  ASSERT_TRUE(paired.ok()) << paired.status().ToString();
  EXPECT_NE(paired->report_md.find("predicted from the sys run of its round"), std::string::npos)
      << paired->report_md;
  EXPECT_EQ(paired->report_md.find("of the 3 rounds it ran in"), std::string::npos);
  EXPECT_NE(paired->report_md.find("| 0.74 [0.70, 0.93] |"), std::string::npos)
      << paired->report_md;
  EXPECT_NE(paired->report_md.find("| 123456 (0 drops) | 0.91 |"), std::string::npos)
      << paired->report_md;
  r.sections["e2e"].erase("rounds");
  r.sections["e2e"]["from_legs"]["rows"][1]["context_per_connection"]["measured_over_predicted"] =
      0.8;
  r.sections["e2e"]["from_legs"]["rows"][1]["context_per_connection"]["within"] = false;
  auto outside = RenderRun(r);
  ASSERT_TRUE(outside.ok()) << outside.status().ToString();
  EXPECT_NE(outside->report_md.find("| 123456 (0 drops) | 0.80 (outside) |"), std::string::npos)
      << outside->report_md;
}

TEST(RenderTest, RatiosComeFromTheRowsOfTheRun) {
  auto rendered = RenderRun(Sample());
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  const Rendered& r = *rendered;
  // krb5p's four legs cost 3x sys's at 4 KiB: the x sys column says so.
  EXPECT_NE(r.report_md.find("| 3000 | 2730.7 | 3.00 |"), std::string::npos) << r.report_md;
  // e2e: 250 / 1000 ops/s.
  EXPECT_NE(r.report_md.find("| 0.25 |"), std::string::npos) << r.report_md;
  // SMB: 2.0 / 2.5 GB/s against a 0.9 target.
  EXPECT_NE(r.report_md.find("| 0.800 | NOT met |"), std::string::npos) << r.report_md;
  // gss: native 1000 ns vs bound 500 (0.50), mit 4x native, target <= 0.5 x mit met.
  EXPECT_NE(r.report_md.find("| 128 B | 4000 | 3900 | 1000 | 500 | 0.50 | 4.00 | 3.90 |"),
            std::string::npos)
      << r.report_md;
  EXPECT_NE(r.report_md.find("- met: native 128 B aes256-cts-hmac-sha1-96 seal+open <= 0.5 x mit"),
            std::string::npos);
  // The machine and method of the results, not of this process.
  EXPECT_NE(r.report_md.find("Test CPU 9000 (77 logical CPUs)"), std::string::npos);
  EXPECT_NE(r.report_md.find("1.234 GHz (test-ticks)"), std::string::npos);
  // Sections that did not run are not drawn.
  EXPECT_EQ(r.report_md.find("## nconnect"), std::string::npos);
  EXPECT_EQ(std::count(r.micro_csv.begin(), r.micro_csv.end(), '\n'), 9);
  const std::string summary = SummaryTable(Sample());
  EXPECT_NE(summary.find("3.00"), std::string::npos) << summary;
}

TEST(RenderTest, ValidationTableCountsVerdicts) {
  harness::RunResults r = Sample();
  auto row = [](const char* name, bool v, bool g, bool asserted) {
    return json{{"kind", "validation"},
                {"name", name},
                {"asserted", asserted},
                {"assert_goodput", asserted},
                {"note", "why not"},
                {"scenario", {{"nconnect", 4}, {"slots", 16}}},
                {"simulated", json::object()},
                {"measured", json::object()},
                {"violations_agree", v},
                {"goodput_agree", g},
                {"detail", "d"}};
  };
  r.nconnect = {row("a", true, true, true), row("b", false, true, true),
                row("c", true, false, false)};
  r.sections["nconnect-validation"] = {
      {"mode", "krb5p:aes256-cts-hmac-sha1-96:mit"},
      {"tolerance", {{"violation_factor", 1.5}, {"violation_slack", 5}, {"goodput_factor", 1.3}}},
      {"calibration", json::object()}};
  auto rendered = RenderRun(r);
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  const std::string md = rendered->report_md;
  // Rows without "verdict" (an older results.json): the two-valued
  // reading, labelled as such.
  EXPECT_NE(md.find("| agree (two-valued) |"), std::string::npos) << md;
  EXPECT_NE(md.find("DISAGREE (violations; two-valued)"), std::string::npos);
  EXPECT_NE(md.find("DISAGREE (goodput; two-valued)"), std::string::npos);
  EXPECT_NE(md.find("1 of 3 agree by the two-valued rule of an older results.json"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("its verdicts are two-valued"), std::string::npos) << md;
  EXPECT_NE(md.find("widened by a factor 1.50 or within 5 events"), std::string::npos) << md;
  EXPECT_NE(md.find("- c: why not"), std::string::npos) << md;
  EXPECT_EQ(md.find("- a: why not"), std::string::npos) << md;
  // A point that disagrees is listed with its diagnosis, or its detail.
  EXPECT_NE(md.find("- b (disagree): d"), std::string::npos) << md;
  // Fewer than two slot counts of one shared no-skew series: no collapse plot.
  EXPECT_EQ(md.find("### The collapse"), std::string::npos) << md;
  EXPECT_EQ(md.find("seeds"), std::string::npos) << md;  // one seed: nothing to say
}

// Rows judged over their runs' spread: each verdict of the three counted
// apart, the undecided one listed with the interval that straddles its limit.
TEST(RenderTest, ValidationCountsUndecidedPointsApart) {
  harness::RunResults r = Sample();
  auto row = [](const std::string& name, const char* verdict, const char* goodput) {
    return json{{"kind", "validation"},
                {"name", name},
                {"scenario", {{"nconnect", 4}, {"slots", 16}}},
                {"measured_runs", json::array({json{{"violations", 0}, {"ops_per_s", 900.0}},
                                               json{{"violations", 0}, {"ops_per_s", 1400.0}}})},
                {"verdict", verdict},
                {"verdict_intervals",
                 {{"violations", {{"verdict", "agrees"}, {"measured", {0, 0}}, {"limit", {0, 0}}}},
                  {"goodput_ratio",
                   {{"verdict", goodput}, {"measured", {0.9, 1.4}}, {"limit", {0.77, 1.3}}}}}},
                {"violations_agree", true},
                {"goodput_agree", true},
                {"detail", "d"}};
  };
  r.nconnect =
      json::array({row("a", "agrees", "agrees"), row("b", "agrees", "agrees"),
                   row("c", "disagrees", "disagrees"), row("u", "undecided", "undecided")});
  r.sections["nconnect-validation"] = {
      {"mode", "krb5p"},
      {"calibration", json::object()},
      {"verdicts", {{"agrees", 2}, {"disagrees", 1}, {"undecided", 1}}}};
  auto md = ValidationMarkdown(r);
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  EXPECT_NE(md->find("2 agree, 1 disagrees, 1 undecided."), std::string::npos) << *md;
  EXPECT_NE(md->find("| undecided (goodput) |"), std::string::npos) << *md;
  EXPECT_NE(md->find("| DISAGREES (goodput) |"), std::string::npos) << *md;
  EXPECT_NE(md->find("(900..1400)"), std::string::npos) << *md;  // the runs' goodput range
  EXPECT_NE(md->find("- u (undecided): the runs straddle the limit: goodput measured/sim "
                     "0.90..1.40 over the runs against 0.77..1.30"),
            std::string::npos)
      << *md;
  EXPECT_EQ(md->find("two-valued"), std::string::npos) << *md;
  // The calibration's passes are said when there were several.
  EXPECT_EQ(md->find("was measured 3 times"), std::string::npos) << *md;
  r.sections["nconnect-validation"]["calibration_passes"] = 3;
  // A row judged by its median's interval says so.
  r.nconnect[3]["verdict_intervals"]["order"] = 2;
  md = ValidationMarkdown(r);
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  EXPECT_NE(md->find("- u (undecided): the runs' median straddles the limit: goodput "
                     "measured/sim 0.90..1.40 (the runs' median) against 0.77..1.30"),
            std::string::npos)
      << *md;
  EXPECT_NE(md->find("What the model is fed was measured 3 times, spread over the runs' "
                     "rounds"),
            std::string::npos)
      << *md;
  // A point whose runs shared the machine says so, in its cell and its line.
  r.nconnect[3]["verdict_intervals"]["machine_shared"] = true;
  r.nconnect[3]["verdict_intervals"]["others_fraction"] = 0.56;
  md = ValidationMarkdown(r);
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  EXPECT_NE(md->find("| undecided (machine shared) |"), std::string::npos) << *md;
  EXPECT_EQ(md->find("is undecided whatever its intervals say"), std::string::npos) << *md;
  r.sections["nconnect-validation"]["calm_runs"] = {
      {"max_steal", 0.1}, {"max_others", 0.1}, {"attempts", 4}};
  md = ValidationMarkdown(r);
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  EXPECT_NE(md->find("A point whose real runs other processes ran 10% or more of the machine's "
                     "CPU time in (all its runs together"),
            std::string::npos)
      << *md;
  EXPECT_NE(md->find("- u (undecided): other processes ran 56% of the machine's CPU time while "
                     "its runs were measured"),
            std::string::npos)
      << *md;
}

// `secmode noise` on runs that held the validation: how far its verdicts
// repeated, the points that changed with their verdict in each run, names
// from the runs' files made safe for a terminal.
TEST(RenderTest, NoiseTextSaysHowFarTheValidationVerdictsRepeated) {
  harness::AaResult r;
  r.validation.points = {{"steady", {"agrees", "agrees", "agrees"}, true},
                         {"edge\x1b[2J", {"agrees", "undecided", ""}, false}};
  r.validation.same = 1;
  r.validation.pair_points = {2, 1};
  r.validation.pair_same = {1, 1};
  r.validation.pair_contradicted = {0, 0};
  const std::string text = NoiseText(r);
  EXPECT_NE(text.find("Validation verdicts: 1 of 2 points had one verdict in every run; "
                      "back-to-back runs kept the verdict of 1 of 2, 1 of 1 points and turned "
                      "it over (agrees to disagrees or back) on 0, 0; every other change"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("agrees, undecided, -\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("steady:"), std::string::npos) << text;  // one verdict: not listed
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(NoiseText(harness::AaResult()).find("Validation verdicts"), std::string::npos);
}

// A `--publish` run's noise floor (harness::NoiseFloorJson of a noise.json)
// drawn from results.json alone: the A/A counts, each table's spread with
// its noisiest row, the validation's repeats; the file's strings escaped.
TEST(RenderTest, PublishedRunShowsItsNoiseFloor) {
  harness::NoiseFile f;
  f.path = "/tmp/n`oise.json";
  f.runs_per_side = 3;
  f.run_args = {"--quick"};
  f.tested = 400;
  f.false_positives = 8;
  f.rows = {{"micro", "sys client-seal 64 KiB", "ns/op", 6, 100, 90, 110, 0.25, 1.9},
            {"micro", "krb5p | <b>x</b>", "ns/op", 6, 100, 90, 110, 0.05, 1.1},
            {"micro", "krb5i one run", "ns/op", 1, 100, 100, 100, 0, 1},
            {"e2e", "row", "ops/s", 6, 100, 90, 110, 0.10, 1.3}};
  f.validation_points = 10;
  f.validation_same = 7;
  f.pair_points = {10, 10};
  f.pair_same = {9, 8};
  f.pair_contradicted = {0, 1};
  harness::RunResults r = Sample();
  r.sections["noise-floor"] = harness::NoiseFloorJson(f);
  EXPECT_EQ(r.sections["noise-floor"]["tables"][1]["rows"], 2);  // the one-run row has no spread
  auto out = RenderRun(r);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::string& md = out->report_md;
  EXPECT_NE(md.find("## Noise floor on this machine"), std::string::npos) << md;
  EXPECT_NE(md.find("3 + 3 runs of `secmode run --quick`"), std::string::npos) << md;
  EXPECT_NE(md.find("called 8 of 400 rows faster or slower at alpha 0.05 (2.0%"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| micro | 2 | 15.0% | 25.0% (sys client-seal 64 KiB) | 50.0% |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| e2e | 1 | 10.0% | 10.0% (row) | 30.0% |"), std::string::npos) << md;
  EXPECT_NE(md.find("7 of 10 points had one verdict in every run; back-to-back runs kept the "
                    "verdict of 9 of 10, 8 of 10 points and turned it over (agrees to disagrees "
                    "or back) on 0, 1;"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("<b>"), std::string::npos) << md;
  EXPECT_NE(md.find("``/tmp/n`oise.json``"), std::string::npos) << md;
  EXPECT_TRUE(out->warnings.empty());
  // A crafted section of the wrong types: an error naming results.json.
  r.sections["noise-floor"]["tables"] = json::array({{{"rows", "many"}}});
  auto bad = RenderRun(r);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("results.json"), std::string::npos);
}

TEST(RenderTest, ValidationMarkdownIsTheReportsPartFromItsHeading) {
  harness::RunResults r = Sample();
  auto none = ValidationMarkdown(r);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, "");
  // json::array, not a braced list: `{json{...}}` is an array with g++ and
  // a copy of the one object with clang.
  r.nconnect = json::array({json{{"kind", "validation"},
                                 {"name", "a"},
                                 {"scenario", {{"nconnect", 4}, {"slots", 16}}},
                                 {"violations_agree", true},
                                 {"goodput_agree", false},
                                 {"detail", "d"}}});
  r.sections["nconnect-validation"] = {{"mode", "krb5p"}, {"calibration", json::object()}};
  auto rendered = RenderRun(r);
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  auto part = ValidationMarkdown(r);
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  const size_t at = rendered->report_md.find("## nconnect simulator vs real sockets");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(*part, rendered->report_md.substr(at));
  r.sections["nconnect-validation"]["calibration"] = "not an object";
  EXPECT_EQ(ValidationMarkdown(r).status().code(), common::Code::kCorrupt);
}

TEST(RenderTest, ValidationShowsTheModelsSeedsMeanAndRange) {
  harness::RunResults r = Sample();
  json row = json::object();
  row["kind"] = "validation";
  row["name"] = "a";
  row["scenario"] = json::object();
  row["scenario"]["nconnect"] = 4;
  row["scenario"]["slots"] = 16;
  row["simulated"] = json::object();
  row["simulated"]["violations"] = 7;
  row["simulated"]["ops_per_s"] = 1000.0;
  json seeds = json::object();
  seeds["seeds"] = 5;
  seeds["violations"] = json::array({7, 0, 0, 3, 2});
  seeds["violations_mean"] = 2.4;
  seeds["violations_min"] = 0.0;
  seeds["violations_max"] = 7.0;
  seeds["ops_per_s_mean"] = 1234.0;
  row["simulated_seeds"] = seeds;
  row["measured"] = json::object();
  row["violations_agree"] = true;
  row["goodput_agree"] = true;
  row["detail"] = "d";
  r.nconnect.clear();
  r.nconnect.push_back(row);
  r.sections["nconnect-validation"] = {
      {"mode", "krb5p:aes256-cts-hmac-sha1-96:native"},
      {"model_seeds", 5},
      {"tolerance", {{"violation_factor", 1.5}, {"violation_slack", 5}, {"goodput_factor", 1.3}}},
      {"calibration", json::object()}};
  auto rendered = RenderRun(r);
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  const std::string md = rendered->report_md;
  EXPECT_NE(md.find("| 2.4 (0..7, 5 seeds) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1234 |"), std::string::npos) << md;  // the seeds' mean goodput
  EXPECT_NE(md.find("and 5 times in the model (seeds"), std::string::npos) << md;
  // A results.json without the rule for the model's zero took every run;
  // one that names the median rule says it.
  EXPECT_NE(md.find("Where the model predicts zero violations every real run must show zero"),
            std::string::npos)
      << md;
  r.sections["nconnect-validation"]["tolerance"]["model_zero"] = "median run";
  auto median = RenderRun(r);
  ASSERT_TRUE(median.ok()) << median.status().ToString();
  EXPECT_NE(median->report_md.find("Where the model predicts zero violations the median real run "
                                   "must show zero and no run more than 5"),
            std::string::npos)
      << median->report_md;
  EXPECT_EQ(median->report_md.find("every real run must show zero"), std::string::npos);
}

TEST(RenderTest, MergedShardsAndHostsAreSaidAndEachRowCarriesItsHost) {
  // A validation joined from shards of two hosts, and e2e rows of two hosts
  // (suite/merge.h): a host column in both tables, the shards and hosts
  // listed, and each e2e ratio taken to sys on the same host.
  harness::RunResults r = Sample();
  auto row = [](const char* name, const char* host) {
    return json{{"kind", "validation"},
                {"name", name},
                {"host", host},
                {"asserted", false},
                {"scenario", json::object()},
                {"simulated", json::object()},
                {"measured", json::object()},
                {"violations_agree", true},
                {"goodput_agree", true}};
  };
  r.nconnect = {row("a", "alpha"), row("b", "beta")};
  r.sections["nconnect-validation"] = {
      {"mode", "krb5p"},
      {"calibration", json::object()},
      {"shards",
       {{{"index", 0}, {"host", "alpha"}, {"cpu_model", "A"}, {"points", 1}, {"agree", 1}},
        {{"index", 1}, {"host", "beta"}, {"cpu_model", "B"}, {"points", 1}, {"agree", 1}}}}};
  json beta_sys = r.e2e[0], beta_p = r.e2e[1];
  for (json* e : {&r.e2e[0], &r.e2e[1]}) (*e)["host"] = "alpha";
  beta_sys["host"] = beta_p["host"] = "beta";
  beta_sys["ops_per_second"] = 2000.0;
  beta_p["ops_per_second"] = 1600.0;
  r.e2e.push_back(beta_sys);
  r.e2e.push_back(beta_p);
  r.sections["e2e"]["hosts"] = {{{"host", "alpha"}, {"cpu_model", "A"}, {"rows", 2}},
                                {{"host", "beta"}, {"cpu_model", "B"}, {"rows", 2}}};
  auto rendered = RenderRun(r);
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  const std::string md = rendered->report_md;
  EXPECT_NE(md.find("This validation ran in 2 shards"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | beta | B |"), std::string::npos) << md;
  EXPECT_NE(md.find("| host | nconnect |"), std::string::npos) << md;
  EXPECT_NE(md.find("| beta | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Joined by `secmode merge` from one run per host"), std::string::npos) << md;
  EXPECT_NE(md.find("| host | server | mode |"), std::string::npos) << md;
  // alpha: 250 / 1000; beta: 1600 / 2000, never 1600 / 1000.
  EXPECT_NE(md.find("| 0.25 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.80 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| 1.60 |"), std::string::npos) << md;
}

// The simulator's speed says how it was timed: the median of several runs
// after a cold one (with their range and the cold run's speed), or one run
// (results.json from before the runs were repeated).
TEST(RenderTest, SimulatorSpeedSaysHowItWasTimed) {
  harness::RunResults r = Sample();
  const json grid = {{"base", {{"ops", 1000}, {"seed", 1}}},
                     {"nconnect", {4}},
                     {"window", {32}},
                     {"slots", {16}},
                     {"io_size", {4096}},
                     {"skew_ns", {0}},
                     {"reactions", {"drop-disconnect"}}};
  const json repeated = {{"rpcs", 200000},
                         {"cpu_seconds", 0.04},
                         {"wall_seconds", 0.05},
                         {"rpcs_per_second", 5.0e6},
                         {"runs", 5},
                         {"min_rpcs_per_second", 4.9e6},
                         {"max_rpcs_per_second", 5.1e6},
                         {"cold_rpcs_per_second", 4.5e6}};
  json every = repeated;
  every["rpcs_per_second"] = 4.0e6;
  every["cores"] = 2;
  r.sections["nconnect"] = {
      {"grid", grid}, {"simulator_speed", repeated}, {"simulator_speed_every_mechanism", every}};
  auto rendered = RenderRun(r);
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  std::string md = rendered->report_md;
  EXPECT_NE(md.find("| simulator speed | 5.00 M simulated RPCs per CPU-second on one core "
                    "(default scenario, median of 5 runs of 200000 RPCs after a cold one, "
                    "4.90-5.10 M; the cold run 4.50 M; the median run 0.040 s of thread CPU "
                    "time, 0.050 s wall); 4.00 M with every mechanism of the thread model on "
                    "(receiver and server threads, batches, 2 cores with a run queue each, time "
                    "slice and wakeup preemption; median of 5 runs of 200000 RPCs after a cold "
                    "one, 4.90-5.10 M; the cold run 4.50 M;"),
            std::string::npos)
      << md;
  // Runs spread over the sweep say so; the block above (no "interleaved")
  // is an older run's.
  json spread = repeated;
  spread["interleaved"] = true;
  r.sections["nconnect"]["simulator_speed"] = spread;
  rendered = RenderRun(r);
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  EXPECT_NE(rendered->report_md.find("(default scenario, median of 5 runs of 200000 RPCs spread "
                                     "over the sweep after a cold one, 4.90-5.10 M;"),
            std::string::npos)
      << rendered->report_md;
  r.sections["nconnect"] = {{"grid", grid},
                            {"simulator_speed",
                             {{"rpcs", 200000},
                              {"cpu_seconds", 0.04},
                              {"wall_seconds", 0.05},
                              {"rpcs_per_second", 5.0e6}}}};
  rendered = RenderRun(r);
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  md = rendered->report_md;
  EXPECT_NE(md.find("(default scenario, 200000 RPCs in 0.040 s of thread CPU time, 0.050 s "
                    "wall) |"),
            std::string::npos)
      << md;
}

TEST(RenderTest, CollapsePlotDrawsTheSharedNoSkewSeries) {
  harness::RunResults r = Sample();
  auto row = [](int64_t slots, double sim_ops, double real_ops) {
    const json scenario = {{"nconnect", 4}, {"slots", slots},
                           {"window", 32},  {"reaction", "drop-disconnect"},
                           {"skew_ns", 0},  {"per_connection_context", false}};
    const json real = {{"ops_per_s", real_ops}, {"violations", slots}, {"p99_ns", 2000000}};
    return json{
        {"kind", "validation"},
        {"name", "s" + std::to_string(slots)},
        {"scenario", scenario},
        {"simulated", {{"ops_per_s", sim_ops}, {"violations", 2 * slots}, {"p99_ns", 1000000}}},
        {"measured", real},
        {"measured_runs", json::array({real, real})},
        {"violations_agree", false},
        {"goodput_agree", true},
        {"diagnosis", "model over-counts violations"},
        {"detail", "d"}};
  };
  r.nconnect = {row(8, 1000, 900), row(128, 300, 400)};
  r.sections["nconnect-validation"] = {{"calibration", json::object()}};
  auto rendered = RenderRun(r);
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  const std::string md = rendered->report_md;
  EXPECT_NE(md.find("- s128 (disagree): model over-counts violations"), std::string::npos) << md;
  ASSERT_NE(md.find("### The collapse"), std::string::npos) << md;
  bool drawn = false;
  for (const auto& [name, body] : rendered->files) {
    if (name != "nconnect-collapse.svg") continue;
    drawn = true;
    EXPECT_NE(body.find("<svg"), std::string::npos);
    EXPECT_NE(body.find("window 32, drop-disconnect"), std::string::npos);
  }
  // gnuplot is one of the packages the build installs; without it the
  // report says the plot could not be drawn.
  EXPECT_TRUE(drawn || md.find("could not be drawn") != std::string::npos) << md;
}

TEST(RunDirTest, SavedRunRendersTheSameReport) {
  auto tmp = common::MakeTempDirectory("secmode-render-test-");
  ASSERT_TRUE(tmp.ok());
  auto files = WriteRunDirectory(*tmp + "/run", Sample());
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->written.front(), "results.json");
  // What was written is what the results in memory draw: nothing is lost
  // on the way through results.json.
  auto direct = RenderRun(Sample());
  ASSERT_TRUE(direct.ok());
  auto written = common::ReadFile(*tmp + "/run/report.md");
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*written, direct->report_md);
  auto again = RenderSavedRun(*tmp + "/run", *tmp + "/again");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  for (const char* f : {"report.md", "report.html", "micro.csv"}) {
    auto a = common::ReadFile(*tmp + "/run/" + f);
    auto b = common::ReadFile(*tmp + "/again/" + f);
    ASSERT_TRUE(a.ok() && b.ok()) << f;
    EXPECT_EQ(*a, *b) << f;
  }
  EXPECT_FALSE(std::filesystem::exists(*tmp + "/again/results.json"));
  common::RemoveTree(*tmp);
}

TEST(RunDirTest, BadRunDirectoriesAreRefusedWithTheReason) {
  auto tmp = common::MakeTempDirectory("secmode-render-test-");
  ASSERT_TRUE(tmp.ok());
  auto none = RenderSavedRun(*tmp);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), common::Code::kInvalidArgument);
  EXPECT_NE(none.status().message().find("no results.json"), std::string::npos);
  ASSERT_TRUE(common::WriteFileAtomically(*tmp + "/results.json", "{\"schema\": 3").ok());
  auto broken = RenderSavedRun(*tmp);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("not valid JSON"), std::string::npos);
  ASSERT_TRUE(
      common::WriteFileAtomically(*tmp + "/results.json", "{\"schema\": \"secmode-results/9\"}")
          .ok());
  auto newer = RenderSavedRun(*tmp);
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("secmode-results/9"), std::string::npos);
  // Nothing was written next to the refused file.
  EXPECT_FALSE(std::filesystem::exists(*tmp + "/report.md"));
  common::RemoveTree(*tmp);
}

TEST(RunDirTest, ResultsWithoutSectionsAreNotDrawnOverTheirReport) {
  auto tmp = common::MakeTempDirectory("secmode-render-test-");
  ASSERT_TRUE(tmp.ok());
  harness::RunResults old = Sample();
  old.sections = json::object();  // as written before sections existed
  ASSERT_TRUE(WriteRunDirectory(*tmp + "/run", old).ok());
  ASSERT_TRUE(common::WriteFileAtomically(*tmp + "/run/report.md", "the complete old report").ok());
  auto in_place = RenderSavedRun(*tmp + "/run");
  ASSERT_FALSE(in_place.ok());
  EXPECT_NE(in_place.status().message().find("--out"), std::string::npos);
  EXPECT_EQ(*common::ReadFile(*tmp + "/run/report.md"), "the complete old report");
  auto elsewhere = RenderSavedRun(*tmp + "/run", *tmp + "/new");
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.status().ToString();
  ASSERT_FALSE(elsewhere->warnings.empty());
  EXPECT_NE(common::ReadFile(*tmp + "/new/report.md")->find("are not drawn"), std::string::npos);
  common::RemoveTree(*tmp);
}

TEST(RenderTest, AValueOfTheWrongTypeIsAnErrorNamingIt) {
  harness::RunResults r = Sample();
  r.sections["gss"]["comparison"][0]["bound_ns"] = "fast";
  auto rendered = RenderRun(r);
  ASSERT_FALSE(rendered.ok());
  EXPECT_EQ(rendered.status().code(), common::Code::kCorrupt);
  EXPECT_NE(rendered.status().message().find("results.json"), std::string::npos);
}

// A run whose report cannot be drawn keeps its results.json, and the
// error says that it did.
TEST(RunDirTest, AReportThatCannotBeDrawnKeepsResultsJsonAndSaysSo) {
  auto tmp = common::MakeTempDirectory("secmode-render-test-");
  ASSERT_TRUE(tmp.ok());
  harness::RunResults r = Sample();
  r.sections["gss"]["comparison"][0]["bound_ns"] = "fast";
  auto files = WriteRunDirectory(*tmp + "/run", r);
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find(*tmp + "/run/results.json is saved"), std::string::npos)
      << files.status().ToString();
  EXPECT_TRUE(std::filesystem::exists(*tmp + "/run/results.json"));
  EXPECT_FALSE(std::filesystem::exists(*tmp + "/run/report.md"));
  common::RemoveTree(*tmp);
}

// Every file of a directory and its contents.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    auto text = common::ReadFile(e.path().string());
    files[e.path().filename().string()] = text.ok() ? *text : "unreadable";
  }
  return files;
}

// A previous run in DIR/run on a private tmpfs (tests/support/private_tmpfs.h),
// then `spoil` (fills the disk or makes it read-only), then a second run
// written over it must fail naming a file of DIR/run and `errno_name`, and
// leave the previous run's files exactly as they were.
void SecondRunFailsAndKeepsTheFirst(
    const std::string& errno_name,
    const std::function<common::Status(const std::string& mount, const std::string& run,
                                       const harness::RunResults& second)>& spoil) {
  constexpr size_t kSize = 4 << 20;
  auto mp = common::MakeTempDirectory("secmode-render-tmpfs-");
  ASSERT_TRUE(mp.ok());
  const std::string mount = *mp;
  auto outcome = secmode::testing::InPrivateTmpfs(mount, kSize, [&]() -> std::string {
    const std::string run = mount + "/run";
    auto first = WriteRunDirectory(run, Sample());
    if (!first.ok()) return "the first run: " + first.status().ToString();
    const auto before = Snapshot(run);
    if (before.count("results.json") == 0 || before.count("report.md") == 0) {
      return "the first run lacks results.json or report.md";
    }
    // A second run much larger than the first, so the first's files cannot
    // make room for the second's when they are replaced one by one.
    harness::RunResults second = Sample();
    second.command = "render_test, the second run";
    for (size_t size = 8192; size < 8192 + 64; ++size) {
      for (const char* leg : {"client-seal", "server-open", "server-seal", "client-open"}) {
        second.micro.push_back(Row("sys", leg, size, 250));
        second.micro.push_back(Row("krb5p", leg, size, 750));
      }
    }
    common::Status spoiled = spoil(mount, run, second);
    if (!spoiled.ok()) return "spoiling the tmpfs: " + spoiled.ToString();
    auto again = WriteRunDirectory(run, second);
    if (again.ok()) return "the second run was written";
    const std::string m = again.status().message();
    if (m.find("cannot write " + run + "/") != 0) return "no file named: " + m;
    if (m.find("(" + errno_name + ")") == std::string::npos) return "no " + errno_name + ": " + m;
    if (Snapshot(run) != before) return "the first run's files changed: " + m;
    return "";
  });
  common::RemoveTree(mount);
  if (outcome.skipped) GTEST_SKIP() << "no private tmpfs: " << outcome.failure;
  EXPECT_EQ(outcome.failure, "");
}

TEST(RunDirTest, DiskFullKeepsThePreviousRun) {
  SecondRunFailsAndKeepsTheFirst(
      "ENOSPC", [](const std::string& mount, const std::string&, const harness::RunResults&) {
        return secmode::testing::FillUp(mount);
      });
}

// Room for the new results.json (and a page more), not for the rest: the
// new results.json must not replace the old one beside an old report.md.
TEST(RunDirTest, DiskFullAfterResultsJsonKeepsThePreviousRun) {
  SecondRunFailsAndKeepsTheFirst("ENOSPC", [](const std::string& mount, const std::string&,
                                              const harness::RunResults& second) {
    SECMODE_RETURN_IF_ERROR(secmode::testing::FillUp(mount));
    const size_t json = harness::ToJson(second).dump(2).size() + 1;
    const size_t room = (json + 4095) / 4096 * 4096 + 4096;
    const std::string filler = mount + "/filler";
    const auto size = std::filesystem::file_size(filler);
    if (size < room || truncate(filler.c_str(), static_cast<off_t>(size - room)) != 0) {
      return common::Status::IoError("cannot make room in " + filler);
    }
    return common::Status::Ok();
  });
}

TEST(RunDirTest, ReadOnlyDirectoryKeepsThePreviousRun) {
  SecondRunFailsAndKeepsTheFirst(
      "EROFS", [](const std::string& mount, const std::string&, const harness::RunResults&) {
        return secmode::testing::RemountReadOnly(mount, 4 << 20);
      });
}

// report.html says what report.md says: its tables with their rows, each
// plot inline (ids made unique per plot), a plot that was not drawn said
// so, the text escaped, and nothing fetched from elsewhere.
TEST(HtmlReportTest, TablesPlotsAndTextOfTheMarkdown) {
  const std::string md =
      "# secmode report <test> & co\n\nintro\n\n## Part one\n\n| mode | ns |\n|---|---:|\n"
      "| sys | 1,200 |\n| krb5p | 900 |\n\n![a plot](a.svg)\n\n## Part two\n\n"
      "![not drawn](b.svg)\n\n1 < 2\n";
  const std::string svg =
      "<?xml version=\"1.0\"?>\n<svg viewBox=\"0 0 10 10\">\n<defs><path id='gpPt0' d='M0,0'/>"
      "</defs><use xlink:href='#gpPt0'/><g id=\"gnuplot_plot_1\" fill=\"url(#grad)\"/></svg>";
  auto html = HtmlReport(md, {{"a.svg", svg}, {"notes.txt", "x"}});
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  const std::string& h = *html;
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(h.find("<title>secmode report &lt;test&gt; &amp; co</title>"), std::string::npos);
  EXPECT_NE(h.find("<td>krb5p</td>"), std::string::npos) << h;
  EXPECT_NE(h.find("<td align=\"right\">1,200</td>"), std::string::npos) << h;
  EXPECT_NE(h.find("<div class=\"table-wrap\"><table>"), std::string::npos);
  // The plot is inline, its prolog dropped, its ids and references prefixed.
  EXPECT_NE(h.find("<figure class=\"plot\" data-plot=\"a.svg\"><svg viewBox"), std::string::npos)
      << h;
  EXPECT_EQ(h.find("<?xml"), std::string::npos);
  EXPECT_NE(h.find("id='p1-gpPt0'"), std::string::npos);
  EXPECT_NE(h.find("xlink:href='#p1-gpPt0'"), std::string::npos);
  EXPECT_NE(h.find("id=\"p1-gnuplot_plot_1\""), std::string::npos);
  EXPECT_NE(h.find("url(#p1-grad)"), std::string::npos);
  EXPECT_EQ(h.find("<img"), std::string::npos);
  EXPECT_NE(h.find("The plot b.svg (not drawn) was not drawn"), std::string::npos);
  // Sections are numbered and listed; text is escaped.
  EXPECT_NE(h.find("<h2 id=\"s1\">Part one</h2>"), std::string::npos);
  EXPECT_NE(h.find("<li><a href=\"#s2\">Part two</a></li>"), std::string::npos);
  EXPECT_NE(h.find("1 &lt; 2"), std::string::npos);
  // Self-contained: no external stylesheet, script, image or font.
  for (const char* external : {"<link", "<script src", "@import", "https://", "url(http"}) {
    EXPECT_EQ(h.find(external), std::string::npos) << external;
  }
}

// The legs' paragraph says how the run measured its open legs and sources
// from its own results.json (escaped), not how this build would: an older
// run's method, a crafted one, and one that says nothing.
TEST(RenderTest, TheLegsParagraphSaysTheRunsOwnMethod) {
  harness::RunResults r = Sample();
  r.method = {{"open_legs", "open tokens sealed beforehand in batches"},
              {"sources", "one <b>place</b>"}};
  auto said = RenderRun(r);
  ASSERT_TRUE(said.ok()) << said.status().ToString();
  EXPECT_NE(said->report_md.find("Open legs: open tokens sealed beforehand in batches."),
            std::string::npos);
  EXPECT_EQ(said->report_md.find("<b>place</b>"), std::string::npos) << "unescaped";
  EXPECT_EQ(said->report_md.find("sealed just before it"), std::string::npos);
  r.method = json::object();
  auto silent = RenderRun(r);
  ASSERT_TRUE(silent.ok());
  EXPECT_NE(silent->report_md.find("results.json does not say how its open legs were measured"),
            std::string::npos);
}

// How a figure was taken from its repetitions is what the run's own method
// says: the fastest; a run that does not say was written when it was the
// median; a value this secmode does not know is said to be unknown, not
// echoed.
TEST(RenderTest, TheFiguresEstimatorIsTheRunsOwn) {
  harness::RunResults r = Sample();
  for (auto& row : r.micro) row.m.repetitions_ns = {row.m.ns_per_op, row.m.ns_per_op * 1.01};
  r.method = {{"micro_estimator", harness::kMicroEstimator}, {"repetitions", 2}};
  auto fastest = RenderRun(r);
  ASSERT_TRUE(fastest.ok()) << fastest.status().ToString();
  EXPECT_NE(fastest->report_md.find("Each figure is the fastest of 2 repetitions"),
            std::string::npos)
      << fastest->report_md;
  EXPECT_NE(HeadlineMarkdown(r).find("each the fastest of its repetitions"), std::string::npos);
  r.method = json::object();
  auto older = RenderRun(r);
  ASSERT_TRUE(older.ok()) << older.status().ToString();
  EXPECT_NE(older->report_md.find("Each figure is the median of"), std::string::npos);
  EXPECT_NE(HeadlineMarkdown(r).find("each the median of its repetitions"), std::string::npos);
  r.method = {{"micro_estimator", "<b>mean</b>"}};
  auto crafted = RenderRun(r);
  ASSERT_TRUE(crafted.ok()) << crafted.status().ToString();
  EXPECT_EQ(crafted->report_md.find("<b>"), std::string::npos);
  EXPECT_NE(HeadlineMarkdown(r).find("by an estimator this secmode does not know"),
            std::string::npos);
}

}  // namespace
}  // namespace secmode::render
