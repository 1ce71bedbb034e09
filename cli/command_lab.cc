// `secmode lab`: the workload model against the two-host lab
// (suite/lab_validation.h): costs from a saved run (--results, default the
// newest), the grid measured in network namespaces made here, the table on
// stdout (or the JSON with --json), the document to --out atomically.
// SIGINT or SIGTERM stop it after the point it is measuring (what was
// measured is still printed and written, exit status 130 / 143); a second
// signal ends it at once, and the lab's reaper removes the namespaces.
#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/saved_run.h"
#include "common/files.h"
#include "harness/modes.h"
#include "harness/results.h"
#include "lab/net_lab.h"
#include "render/report_lab.h"
#include "suite/lab_validation.h"

namespace secmode::cli {

namespace {

constexpr const char* kCmd = "lab";
std::atomic<int> g_signal{0};

void OnSignal(int sig) {
  g_signal = sig;
  std::signal(sig, SIG_DFL);  // a second one ends it at once
}

struct LabArgs {
  std::string results, out;
  bool quick = false, full = false, json = false;
  std::vector<std::string> modes;
};

}  // namespace

CLI::App* AddLabCommand(CLI::App& app) {
  auto a = std::make_shared<LabArgs>();
  CLI::App* cmd = app.add_subcommand(
      "lab",
      "Check the workload model (secmode predict) on a two-host lab made here: network "
      "namespaces joined by a veth pair, bandwidth shaped by tc tbf, round trips emulated by "
      "serve/load --delay-ms; needs root");
  AddResultsOption(cmd, &a->results);
  cmd->add_flag("--quick", a->quick, "The quick grid (3 links, about a minute with two modes)");
  cmd->add_flag("--full", a->full,
                "The whole grid: RTT 0/1/20/200 ms x unshaped/1 Gbit/100 Mbit x 4 KiB/1 MiB x "
                "read/write x iodepth 1/64 x numjobs 1/4 (768 points, about 45 minutes)");
  cmd->add_option("--modes", a->modes,
                  "Families to check besides sys: krb5 krb5i krb5p (default: every one the run "
                  "measured with the native engine)");
  cmd->add_flag("--json", a->json, "Print the JSON document instead of the tables");
  cmd->add_option("--out", a->out, "Also write the JSON to this file (atomically)");
  cmd->callback([a] {
    if (a->quick && a->full) FailUsage(kCmd, "--quick and --full exclude each other");
    std::vector<std::string> families;
    if (!a->modes.empty()) {
      families.push_back("sys");
      for (const std::string& m : a->modes) {
        if (m == "sys") continue;
        if (m != "krb5" && m != "krb5i" && m != "krb5p") {
          FailUsage(kCmd, "unknown --modes family '" + m + "' (known: krb5, krb5i, krb5p)");
        }
        families.push_back(m);
      }
    }
    const std::string why = lab::LabUnavailableReason();
    if (!why.empty()) Fail(kCmd, common::Status::Unavailable("no lab: " + why));
    std::string path = a->results;
    const harness::RunResults run = ReadSavedRunOrFail(kCmd, &path);
    harness::ModeEnvironment env;
    auto realm = env.GetRealm();
    if (!realm.ok()) Fail(kCmd, realm.status());
    suite::LabValidationOptions o;
    o.grid = a->quick ? suite::LabGrid::kQuick
                      : a->full ? suite::LabGrid::kFull : suite::LabGrid::kDefault;
    o.families = families;
    o.cost_source = path;
    o.log = &std::cerr;
    o.interrupt = &g_signal;
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    auto doc = suite::RunLabValidation(run, *realm, o);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (!doc.ok()) Fail(kCmd, doc.status());
    (*doc)["source"] = path;
    if (!a->out.empty()) {
      if (auto s = common::WriteFileAtomically(a->out, doc->dump(1) + "\n"); !s.ok()) {
        Fail(kCmd, s.Annotate("--out"));
      }
    }
    std::cout << (a->json ? doc->dump(1) + "\n" : render::LabMarkdown(*doc));
    if (g_signal != 0) std::exit(128 + g_signal);
  });
  return cmd;
}

}  // namespace secmode::cli
