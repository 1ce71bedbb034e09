// `secmode run --quick` keeps its shape across changes of layout: every key
// path of results.json that a quick run had before (quick_run_shape.txt) is
// still there, new keys live only under "sections" (or are listed below),
// and report.md has the same headings in the same order (new ones only
// where listed). Numbers are not
// compared; the whole quick suite runs (label "suite", not run under asan).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/files.h"
#include "harness/results.h"
#include "harness/workload_inputs.h"
#include "render/run_dir.h"
#include "suite/suite.h"

namespace secmode::suite {
namespace {

using nlohmann::json;

void Paths(const json& v, const std::string& at, std::set<std::string>& out) {
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) Paths(x, at.empty() ? k : at + "." + k, out);
  } else if (v.is_array()) {
    out.insert(at + "[]");
    for (const auto& x : v) Paths(x, at + "[]", out);
  } else {
    out.insert(at);
  }
}

TEST(RunShapeTest, QuickRunKeepsEveryKeyAndHeading) {
  std::ifstream fixture(SECMODE_SHAPE_FIXTURE);
  ASSERT_TRUE(fixture) << SECMODE_SHAPE_FIXTURE;
  std::set<std::string> keys;
  std::vector<std::string> headings;
  for (std::string line; std::getline(fixture, line);) {
    if (line.rfind("key ", 0) == 0) keys.insert(line.substr(4));
    if (line.rfind("heading ", 0) == 0) headings.push_back(line.substr(8));
  }
  ASSERT_GT(keys.size(), 100u);
  ASSERT_GT(headings.size(), 10u);

  SuiteOptions o;
  o.quick = true;
  o.command = "run_shape_test";
  std::ostringstream log;
  auto run = RunSuite(o, log);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(run->errors.empty()) << run->errors.dump() << "\n" << log.str();
  auto tmp = common::MakeTempDirectory("secmode-shape-test-");
  ASSERT_TRUE(tmp.ok());
  ASSERT_TRUE(render::WriteRunDirectory(*tmp, *run).ok());
  // The run's new parts are there: micro figures with their repetitions,
  // the fingerprint's commit, the noise, and the scaling rows.
  ASSERT_FALSE(run->micro.empty());
  for (const auto& row : run->micro) {
    EXPECT_EQ(row.m.repetitions_ns.size(), kQuickRepetitions) << row.mode << " " << row.leg;
  }
  // The tests build from a git checkout: a full commit id (machine_test covers the rest).
  EXPECT_TRUE(run->machine.secmode_commit.size() == 40 || run->machine.secmode_commit == "unknown")
      << run->machine.secmode_commit;
  EXPECT_TRUE(run->noise.contains("steal_fraction"));
  // Every job of the predictions section under sys and each krb5 family,
  // and, where the run measured SMB end to end, under smb-plain and each SMB
  // mode it measured.
  size_t nfs_rows = 0, smb_rows = 0;
  for (const auto& row : run->predictions) {
    (row.value("baseline", "") == "smb-plain" ? smb_rows : nfs_rows)++;
  }
  EXPECT_EQ(nfs_rows, 6u * 4u) << run->sections["predictions"].dump();
  std::set<std::string> smb_modes;
  for (const auto& m : run->micro) {
    if (m.threads == 1 && m.mode.rfind("smb-", 0) == 0 && m.mode != "smb-plain") {
      smb_modes.insert(m.mode);
    }
  }
  // Where SMB ran end to end, every row measured Samba's threads, and the
  // SMB predictions take the session thread's CPU from them.
  for (const auto& row : run->sections["smb-e2e"].value("rows", json::array())) {
    EXPECT_TRUE(row.value("server_thread_core_share", json()).is_number()) << row.dump();
  }
  if (run->sections["predictions"].contains("smb_environment")) {
    EXPECT_NE(run->sections["predictions"]["smb_environment"]
                  .value("protocol_cost_source", "")
                  .find("thread serving the session"),
              std::string::npos);
    // Jobs whose operation the smb-e2e section did not run are listed.
    const size_t skipped =
        run->sections["predictions"]["smb_environment"].value("skipped_jobs", json::array()).size();
    EXPECT_LT(skipped, 6u);
    EXPECT_EQ(smb_rows, (6u - skipped) * (1 + smb_modes.size()));
  } else {
    EXPECT_EQ(smb_rows, 0u);
    EXPECT_TRUE(run->sections["predictions"].contains("smb_not_run"));
  }
  // Every row under load against secmode's server ran in the quick run's
  // two rounds, and so did its controls (a failed run would be logged and
  // missing here); the row shows its median run, which for two is the
  // cheaper by busy CPU per call (of those that have the figure). Rows one call at a time and
  // nfs-ganesha's ran once.
  const int cpus = run->machine.logical_cpus;
  auto check_rounds = [&](const json& row) {
    ASSERT_EQ(row.value("repeats", json::array()).size(), 1u) << row.dump();
    const json& other = row["repeats"][0];
    EXPECT_EQ(row.value("round", -1) + other.value("round", -1), 1) << row.dump();
    // A short run can lack the machine's idle time (idle_fraction -1), so
    // no figure: then the run with one is shown.
    auto own = harness::BusyCpuNsPerCall(row, cpus),
         theirs = harness::BusyCpuNsPerCall(other, cpus);
    EXPECT_TRUE(own || !theirs) << row.dump();
    if (own && theirs) {
      EXPECT_LE(*own, *theirs) << row.dump();
    }
  };
  size_t rows_in_rounds = 0;
  for (const auto& row : run->e2e) {
    if (row.value("server", "") != "secmode" || row.value("connections", 0) <= 1) {
      EXPECT_FALSE(row.contains("repeats")) << row.dump();
      continue;
    }
    ++rows_in_rounds;
    check_rounds(row);
    // A GSS load with more calls outstanding than the window holds has the
    // wide-window control (a failed one would be logged and missing here).
    const bool over_window = row.value("connections", 0) * row.value("slots", 0) >
                             run->sections["e2e"].value("window", 0);
    EXPECT_EQ(row.contains("wide_window"), row.value("mode", "") != "sys" && over_window)
        << row.dump();
    for (const char* control : {"wide_window", "context_per_connection"}) {
      if (row.contains(control)) check_rounds(row[control]);
    }
    // Each run of a GSS row had a sys run of its load just before it.
    if (row.value("mode", "") == "sys") {
      EXPECT_FALSE(row.contains("sys_just_before")) << row.dump();
    } else {
      const json before = row.value("sys_just_before", json::array());
      ASSERT_EQ(before.size(), 2u) << row.dump();
      for (int round = 0; round < 2; ++round) {
        EXPECT_EQ(before[round].value("round", -1), round) << row.dump();
        EXPECT_EQ(before[round].value("mode", ""), "sys") << row.dump();
        EXPECT_EQ(before[round].value("op", ""), row.value("op", "")) << row.dump();
        EXPECT_EQ(before[round].value("slots", 0), row.value("slots", 0)) << row.dump();
      }
    }
  }
  EXPECT_EQ(rows_in_rounds, 5u * 7u);
  EXPECT_EQ(run->sections["e2e"].value("rounds", 0), 2);
  ASSERT_TRUE(run->sections.contains("scaling"));
  EXPECT_FALSE(run->sections["scaling"]["rows"].empty());
  auto text = common::ReadFile(*tmp + "/results.json");
  auto report = common::ReadFile(*tmp + "/report.md");
  common::RemoveTree(*tmp);
  ASSERT_TRUE(text.ok() && report.ok());

  std::set<std::string> now;
  Paths(json::parse(*text), "", now);
  for (const auto& k : keys) EXPECT_TRUE(now.count(k)) << "results.json lost " << k;
  // Keys added since: the sections' own data, the nconnect rows' (the
  // model's inputs and outputs grow with the model; the validation's
  // attribution and ablation), and these few fields.
  const std::set<std::string> added = {
      "e2e[].first_error", "e2e[].stale_replies", "method.cycle_source",
      "nconnect[].assert_goodput", "e2e[].crypto_threads", "e2e[].receiver_cpu_ns",
      "e2e[].idle_fraction", "e2e[].sender_cpu_ns", "e2e[].sender_calls", "e2e[].server",
      "e2e[].receiver_reads", "e2e[].steal_fraction", "e2e[].receiver_sleeps",
      "e2e[].receiver_preemptions", "e2e[].receiver_run_queue_wait_ns", "e2e[].receiver_runs",
      "e2e[].reconnects_per_second", "e2e[].reconnect_wait_seconds",
      // repetitions and the longer fingerprint
      "micro[].repetitions_ns[]", "micro[].cv", "micro[].noisy", "machine.compiler_flags",
      "machine.secmode_commit", "machine.secmode_tree", "method.repetitions", "method.warmup_ops",
      "method.noisy_cv", "method.micro_figure", "method.micro_estimator", "method.pinned_cpu",
      "method.sources",
      "e2e[].window", "e2e[].round",
      // the predicted workloads (sim/workload_model.h)
      "predictions[].mode", "predictions[].job", "predictions[].workload", "predictions[].iops",
      "predictions[].mb_per_s", "predictions[].mean_latency_ms",
      "predictions[].p99_latency_ms_estimate", "predictions[].bottleneck",
      "predictions[].tcp_window_limited", "predictions[].iops_change_pct",
      "predictions[].latency_change_ms", "predictions[].baseline"};
  for (const auto& k : now) {
    // machine.libraries.<file name> and noise.* name what this machine has;
    // a prediction's demands and utilisations are keyed by station; an e2e
    // row's run against the wide window (and with a context per connection),
    // its runs in later rounds and the sys runs just before them have the
    // row's own fields.
    if (keys.count(k) || added.count(k) || k.rfind("sections.", 0) == 0 ||
        k.rfind("nconnect[].", 0) == 0 || k.rfind("machine.libraries.", 0) == 0 ||
        k.rfind("noise.", 0) == 0 || k.rfind("predictions[].demand_us.", 0) == 0 ||
        k.rfind("predictions[].utilisation.", 0) == 0 || k.rfind("e2e[].wide_window.", 0) == 0 ||
        k.rfind("e2e[].context_per_connection.", 0) == 0 || k.rfind("e2e[].repeats[]", 0) == 0 ||
        k.rfind("e2e[].sys_just_before[]", 0) == 0) {
      continue;
    }
    ADD_FAILURE() << "results.json has a key outside `sections` that the shape does not list: "
                  << k;
  }
  // Every heading of before, in the same order; new ones only where listed.
  const std::set<std::string> new_headings = {
      "## Core scaling",
      "### Where the violations come from",
      "### How the closed connections were replaced under load",
      "### How contexts were re-created under load",
      "### The model's paths beside the real ones",
      "### How the threads ran",
      "### What each mechanism changes (ablation)",
      "### Points that disagree, and what their evidence shows",
      "### Points that disagree or are undecided, and what their evidence shows",
      "### The collapse: slots against the window",
      "## RPCSEC_GSS sequence windows of real servers (secmode probe)",
      "### Beside the published Azure NetApp Files figures",
      "### Predicted from the legs",
      "## Predicted workloads (secmode predict)",
      "### NFS, 4k-randread-qd64: randread bs=4096 iodepth=64 numjobs=1 libaio",
      "### NFS, 4k-randwrite-qd64: randwrite bs=4096 iodepth=64 numjobs=1 libaio",
      "### NFS, 1m-read-qd16: read bs=1048576 iodepth=16 numjobs=1 libaio",
      "### NFS, 1m-write-qd16: write bs=1048576 iodepth=16 numjobs=1 libaio",
      "### NFS, metadata-qd64: metadata iodepth=64 numjobs=1 libaio",
      "### NFS, 4k-randread-qd1: randread bs=4096 iodepth=1 numjobs=1 psync",
      "### SMB, 4k-randread-qd64: randread bs=4096 iodepth=64 numjobs=1 libaio",
      "### SMB, 4k-randwrite-qd64: randwrite bs=4096 iodepth=64 numjobs=1 libaio",
      "### SMB, 1m-read-qd16: read bs=1048576 iodepth=16 numjobs=1 libaio",
      "### SMB, 1m-write-qd16: write bs=1048576 iodepth=16 numjobs=1 libaio",
      "### SMB, metadata-qd64: metadata iodepth=64 numjobs=1 libaio",
      "### SMB, 4k-randread-qd1: randread bs=4096 iodepth=1 numjobs=1 psync",
      "## The workload model on a two-host lab",
      "## The SMB workload model on a two-host lab",
      "## SMB3 end to end against Samba",
      "### How much of the change the crypto explains",
      "### Where the CPU goes"};
  std::istringstream lines(*report);
  size_t next = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#", 0) != 0) continue;
    if (next < headings.size() && line == headings[next]) {
      ++next;
    } else if (!new_headings.count(line)) {
      ADD_FAILURE() << "report.md has a heading the shape does not list here: " << line;
    }
  }
  EXPECT_EQ(next, headings.size()) << "report.md lost a heading or its order: "
                                   << (next < headings.size() ? headings[next] : "");
}

}  // namespace
}  // namespace secmode::suite
