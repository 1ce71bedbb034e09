// `secmode run` and `secmode modes`.
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "common/files.h"
#include "harness/modes.h"
#include "render/report.h"
#include "render/run_dir.h"
#include "suite/suite.h"

namespace secmode::cli {

namespace {

struct RunArgs {
  suite::SuiteOptions suite;
  std::string out_dir;
};

}  // namespace

CLI::App* AddRunCommand(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand(
      "run",
      "Measure every mode's four legs (client-seal, server-open, server-seal, client-open) "
      "at 128 B, 4 KiB, 64 KiB and 1 MiB, then the sections (engines vs bounds, SMB, end to "
      "end, nconnect sweep and validation); write results.json, micro.csv, report.md");
  run->add_option("--out", args->out_dir,
                  "Output directory (default: results/runs/<UTC timestamp>-<hostname>)");
  run->add_flag("--quick", args->suite.quick,
                "Short measurements: every mode and size, noisier numbers, a small nconnect grid, "
                "no extra-enctype krb5p rows");
  run->add_flag("--full", args->suite.full,
                "The wide nconnect validation grid (648 points, 3 real runs each: hours) instead "
                "of the default 8 points");
  run->add_option("--modes", args->suite.modes,
                  "Modes to measure, e.g. sys krb5p:aes128-cts-hmac-sha256-128:mit "
                  "(default: every registered mode; see `secmode modes`)")
      ->delimiter(',');
  run->add_option("--sizes", args->suite.sizes,
                  "Payload sizes in bytes (default: 128,4096,65536,1048576)")
      ->delimiter(',')
      ->check(CLI::Range(size_t{0}, size_t{64} << 20));
  run->callback([args] {
    suite::SuiteOptions& o = args->suite;
    o.command = CommandLine();
    if (o.quick && o.full)
      Fail("run", common::Status::InvalidArgument("--quick and --full: choose one"));
    common::Status valid = suite::ValidateOptions(o);
    if (!valid.ok()) Fail("run", valid);
    const std::string dir = args->out_dir.empty() ? render::DefaultOutDir() : args->out_dir;
    // An unusable output directory is refused before minutes of measuring.
    common::Status made = common::MakeDirectories(dir);
    if (!made.ok()) Fail("run", made);
    auto results = suite::RunSuite(o, std::cout);
    if (!results.ok()) Fail("run", results.status());
    auto files = render::WriteRunDirectory(dir, *results);
    if (!files.ok()) Fail("run", files.status());
    for (const auto& w : files->warnings) std::cerr << "secmode run: " << w << "\n";
    std::cout << "\n" << render::SummaryTable(*results) << "\n";
    std::cout << "results:";
    for (const auto& f : files->written) std::cout << " " << dir << "/" << f;
    std::cout << "\n";
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
