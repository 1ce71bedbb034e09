// Subcommands of the `secmode` CLI. Each Add*Command registers one
// subcommand on the app; main.cc lists them. Errors are printed as
// "secmode: <cause>" with a non-zero exit status.
#ifndef SECMODE_BENCH_CLI_H_
#define SECMODE_BENCH_CLI_H_

#include <CLI/CLI.hpp>
#include <string>

namespace secmode::bench {

// Set by main before parsing: the whole command line, recorded in results.
void SetCommandLine(std::string command_line);
const std::string& CommandLine();

void AddRunCommand(CLI::App& app);
void AddModesCommand(CLI::App& app);
void AddNconnectCommand(CLI::App& app);
void AddServeCommand(CLI::App& app);  // cli_rpc.cc
void AddLoadCommand(CLI::App& app);   // cli_rpc.cc

}  // namespace secmode::bench

#endif  // SECMODE_BENCH_CLI_H_
