// `secmode run` and `secmode modes`.
#include <iostream>

#include "bench/cli.h"
#include "bench/modes.h"
#include "bench/suite.h"

namespace secmode::bench {

namespace {
std::string& CommandLineStorage() {
  static std::string s;
  return s;
}
}  // namespace

void SetCommandLine(std::string command_line) { CommandLineStorage() = std::move(command_line); }
const std::string& CommandLine() { return CommandLineStorage(); }

void AddRunCommand(CLI::App& app) {
  auto opts = std::make_shared<SuiteOptions>();
  CLI::App* run = app.add_subcommand(
      "run",
      "Measure every mode's four legs (client-seal, server-open, server-seal, client-open) "
      "at 128 B, 4 KiB, 64 KiB and 1 MiB and write results.json, micro.csv, report.md");
  run->add_option("--out", opts->out_dir,
                  "Output directory (default: results/runs/<UTC timestamp>-<hostname>)");
  run->add_flag("--quick", opts->quick,
                "Short measurements: every mode and size, noisier numbers, a small nconnect grid, "
                "no extra-enctype krb5p rows");
  run->add_option("--modes", opts->modes,
                  "Modes to measure, e.g. sys krb5p:aes128-cts-hmac-sha256-128:mit "
                  "(default: every registered mode; see `secmode modes`)")
      ->delimiter(',');
  run->add_option("--sizes", opts->sizes,
                  "Payload sizes in bytes (default: 128,4096,65536,1048576)")
      ->delimiter(',')
      ->check(CLI::Range(size_t{0}, size_t{64} << 20));
  run->callback([opts] {
    opts->command = CommandLine();
    auto dir = RunSuite(*opts, std::cout);
    if (!dir.ok()) throw CLI::RuntimeError("secmode run: " + dir.status().ToString(), 1);
    std::cout << "results: " << *dir << "/results.json, " << *dir << "/report.md, " << *dir
              << "/micro.csv\n";
  });
}

void AddModesCommand(CLI::App& app) {
  CLI::App* modes = app.add_subcommand("modes", "List the registered security modes");
  modes->callback([] {
    for (const auto& m : RegisteredModes()) {
      std::string engines;
      for (const auto& e : m.engines) engines += (engines.empty() ? "" : ",") + e;
      std::cout << m.family << (m.kerberos ? "[:ENCTYPE[:ENGINE]]" : "") << "\n    "
                << m.description << "\n    engines: " << engines << "\n";
    }
  });
}

}  // namespace secmode::bench
