// `secmode run` and `secmode modes`.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/run_directory.h"
#include "cli/terminal_progress.h"
#include "common/files.h"
#include "common/format.h"
#include "harness/aa_test.h"
#include "harness/modes.h"
#include "render/report.h"
#include "render/run_dir.h"
#include "suite/nconnect_validation.h"
#include "suite/suite.h"

namespace secmode::cli {

namespace {

struct RunArgs {
  suite::SuiteOptions suite;
  std::string out_dir;
  std::string publish;  // a noise.json
  bool json = false;
};

// The run's summary for --json: where it went, what it wrote, what failed,
// and per mode and size the round trip and its ratio to sys.
nlohmann::json RunSummaryJson(const std::string& dir, const harness::RunResults& r,
                              const std::vector<std::string>& written, int signal) {
  return {{"out_dir", dir},
          {"files", written},
          {"errors", r.errors},
          {"interrupted", signal ? nlohmann::json(suite::SignalName(signal)) : nullptr},
          {"micro_rows", r.micro.size()},
          {"noise", r.noise},
          {"secmode_commit", r.machine.secmode_commit}};
}

}  // namespace

CLI::App* AddRunCommand(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand(
      "run",
      "Measure every mode's four legs (client-seal, server-open, server-seal, client-open) "
      "at 128 B, 4 KiB, 64 KiB and 1 MiB, then the sections (engines vs bounds, SMB, end to "
      "end, nconnect sweep and validation); write results.json, micro.csv, report.md, report.html");
  run->add_option("--out", args->out_dir,
                  "Output directory (default: results/runs/<UTC timestamp>-<hostname>)");
  run->add_flag("--quick", args->suite.quick,
                "Short measurements (planning figure: about 3 minutes on the 2-vCPU machine of the "
                "README's reference run): every mode and size, noisier "
                "numbers, a small nconnect grid");
  run->add_flag("--full", args->suite.full,
                "Everything: krb5p micro rows for every enctype and engine (the default has the "
                "default enctype's, and every enctype in the engines-vs-bound table) and the "
                "nconnect validation's " +
                    suite::ValidationGridChoice() + " (planning figure: hours)");
  run->add_option("--modes", args->suite.modes,
                  "Modes to measure, e.g. sys krb5p:aes128-cts-hmac-sha256-128:mit "
                  "(default: every registered mode; see `secmode modes`)")
      ->delimiter(',');
  run->add_flag("--json", args->json,
                "Print the run's summary as JSON on stdout (output directory, files written, "
                "errors, noise) instead of the table; the progress then goes to stderr");
  run->add_option("--repetitions", args->suite.repetitions,
                  "Repetitions of every micro figure; the figure is the fastest of them, their "
                  "coefficient of variation is beside it and over 5% flags it as noisy (default: " +
                      std::to_string(suite::kRepetitions) + ", --quick " +
                      std::to_string(suite::kQuickRepetitions) + ")")
      ->check(CLI::Range(size_t{1}, suite::kMaxRepetitions));
  run->add_option("--pin", args->suite.pin_cpu,
                  "Pin the thread measuring the micro figures to this CPU (0-based, one the "
                  "process may run on); the sections' threads and servers stay unpinned. "
                  "results.json method.pinned_cpu records it (default: not pinned)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--publish", args->publish,
                  "The run you publish: attach the A/A test `secmode noise` made on this machine "
                  "with this build (its noise.json) to results.json, and the report shows it as "
                  "the noise floor of every figure and verdict (compare's false-positive rate, "
                  "each table's run-to-run spread, how far validation verdicts repeat). Refused "
                  "before measuring if the file is not a noise.json or was made on another host, "
                  "CPU, kernel, build type or secmode commit");
  run->add_option("--sizes", args->suite.sizes,
                  "Payload sizes in bytes (default: 128,4096,65536,1048576)")
      ->delimiter(',')
      ->check(CLI::Range(size_t{0}, size_t{64} << 20));
  run->footer(
      "Interrupted (SIGINT, e.g. Ctrl-C, or SIGTERM), `secmode run` stops after the step it is "
      "in (a round of the micro table, an end-to-end run, or any other section: the nconnect "
      "validation finishes its grid first), writes what was measured (results.json `errors` "
      "lists what was not, each with \"interrupted\"; report.md says so), removes its realm and "
      "servers, and exits with status 130 (SIGINT) or 143 (SIGTERM). A second signal ends it at "
      "once, by that signal, writing nothing.");
  run->callback([args] {
    suite::SuiteOptions& o = args->suite;
    o.command = CommandLine();
    if (o.quick && o.full)
      Fail("run", common::Status::InvalidArgument("--quick and --full: choose one"));
    if (!args->publish.empty()) {
      auto noise = harness::ReadNoiseFile(args->publish);
      if (!noise.ok()) Fail("run", noise.status().Annotate("--publish"));
      o.noise_floor = std::move(noise).value();
    }
    common::Status valid = suite::ValidateOptions(o);
    if (!valid.ok()) Fail("run", valid);
    const std::string dir = args->out_dir.empty() ? render::DefaultOutDir() : args->out_dir;
    // An unusable output directory is refused before minutes of measuring
    // (a full disk shows only when the results are written).
    common::Status made = common::MakeDirectories(dir);
    if (made.ok()) made = common::CheckWritableDirectory(dir);
    if (!made.ok()) Fail("run", made);
    // SIGINT and SIGTERM (cli/interrupt.h): the suite stops after its step.
    Interrupt interrupt("run", "stopping after the current step and writing what was measured");
    o.interrupt = interrupt.interrupt();
    // On a terminal: a progress line with the log above it. Otherwise (and
    // with --json) stdout holds the summary alone and the log goes to stderr.
    std::unique_ptr<TerminalProgress> progress;
    if (!args->json && isatty(STDOUT_FILENO)) {
      progress = std::make_unique<TerminalProgress>(std::cout);
      o.progress = progress.get();
    }
    auto results = suite::RunSuite(o, progress ? progress->log() : std::cerr);
    o.progress = nullptr;
    progress.reset();
    if (!results.ok()) Fail("run", results.status());
    // The micro table first: a run whose results cannot be written keeps it
    // on the terminal.
    if (!args->json) std::cout << "\n" << render::SummaryTable(*results) << "\n";
    const std::vector<std::string> written =
        WriteRunDirectoryOrFail("run", dir, *results, "the run directory is not complete");
    if (args->json) {
      std::cout << RunSummaryJson(dir, *results, written, interrupt.signal()).dump(2) << "\n";
    } else {
      PrintWritten("results:", written);
    }
    interrupt.ExitIfInterrupted("what was measured before is in " + dir + "/results.json");
    if (!results->errors.empty()) {
      Fail("run", common::Status::Internal(std::to_string(results->errors.size()) +
                                           " mode(s) or section(s) failed; what was measured is "
                                           "in " +
                                           dir + "/results.json"));
    }
  });
  return run;
}

CLI::App* AddModesCommand(CLI::App& app) {
  CLI::App* modes = app.add_subcommand("modes", "List the registered security modes");
  modes->callback([] {
    for (const auto& m : harness::RegisteredModes()) {
      std::string engines;
      for (const auto& e : m.engines) engines += (engines.empty() ? "" : ",") + e;
      std::cout << m.family << (m.kerberos ? "[:ENCTYPE[:ENGINE]]" : "") << "\n    "
                << m.description << "\n    engines: " << engines << "\n";
    }
  });
  return modes;
}

}  // namespace secmode::cli
