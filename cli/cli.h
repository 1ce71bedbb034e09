// The `secmode` command line: each Add*Command registers one subcommand on
// the app and returns it; main.cc lists them. Commands parse flags, call the libraries and
// print; they compute nothing themselves.
//
// Exit status of every subcommand: 0 ok, 1 failure at run time, 2 bad usage
// (a flag or value refused before any work started). Fail() picks 1 or 2
// from the Status code: kInvalidArgument is bad usage, everything else a
// run-time failure.
#ifndef SECMODE_CLI_CLI_H_
#define SECMODE_CLI_CLI_H_

#include <CLI/CLI.hpp>
#include <string>

#include "common/status.h"

namespace secmode::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// The exit-status paragraph of `secmode --help`.
inline constexpr const char* kExitStatusHelp =
    "Exit status (every subcommand): 0 ok, 1 failure at run time (what was measured is still "
    "written), 2 bad usage (an unknown flag, a value out of range, an unknown mode).";

// Throws the CLI11 error that main turns into "secmode <command>: <cause>"
// and exit status 2 (kInvalidArgument) or 1 (anything else).
[[noreturn]] void Fail(const std::string& command, const common::Status& status);
// Bad usage found by the command itself (exit status 2).
[[noreturn]] void FailUsage(const std::string& command, const std::string& message);

// Set by main before parsing: the whole command line, recorded in results.
void SetCommandLine(std::string command_line);
const std::string& CommandLine();

CLI::App* AddRunCommand(CLI::App& app);       // command_run.cc
CLI::App* AddModesCommand(CLI::App& app);     // command_run.cc
CLI::App* AddReportCommand(CLI::App& app);    // command_report.cc
CLI::App* AddCompareCommand(CLI::App& app);   // command_compare.cc
CLI::App* AddNoiseCommand(CLI::App& app);     // command_compare.cc
CLI::App* AddMergeCommand(CLI::App& app);     // command_merge.cc
CLI::App* AddNconnectCommand(CLI::App& app);  // command_nconnect.cc
CLI::App* AddServeCommand(CLI::App& app);     // command_serve.cc
CLI::App* AddLoadCommand(CLI::App& app);      // command_load.cc
CLI::App* AddSmbLoadCommand(CLI::App& app);   // command_smb_load.cc
CLI::App* AddProbeCommand(CLI::App& app);     // command_probe.cc
CLI::App* AddPredictCommand(CLI::App& app);   // command_predict.cc
CLI::App* AddLabCommand(CLI::App& app);       // command_lab.cc
CLI::App* AddTraceCommand(CLI::App& app);     // command_trace.cc

}  // namespace secmode::cli

#endif  // SECMODE_CLI_CLI_H_
