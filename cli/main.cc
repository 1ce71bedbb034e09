// The `secmode` executable: parses the command line and runs one subcommand.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <iostream>
#include <sstream>

#include "cli/cli.h"
#include "common/format.h"

#ifndef SECMODE_VERSION
#define SECMODE_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  using namespace secmode::cli;
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  SetCommandLine(command_line);

  CLI::App app{
      "secmode: what does a security mode cost? Measures NFS RPCSEC_GSS (sys, krb5, krb5i, krb5p) "
      "and SMB3 signing/encryption with real Kerberos contexts and real crypto."};
  app.set_version_flag("--version", std::string("secmode ") + SECMODE_VERSION);
  app.require_subcommand(1);
  std::string known;
  std::vector<std::string> names;
  for (CLI::App* sub :
       {AddRunCommand(app), AddModesCommand(app), AddReportCommand(app), AddCompareCommand(app),
        AddNoiseCommand(app), AddMergeCommand(app), AddNconnectCommand(app), AddServeCommand(app),
        AddLoadCommand(app), AddSmbLoadCommand(app), AddProbeCommand(app), AddPredictCommand(app),
        AddLabCommand(app), AddTraceCommand(app)}) {
    // The convention first, then what the subcommand adds to it.
    const std::string own = sub->get_footer();
    sub->footer(std::string(kExitStatusHelp) + (own.empty() ? "" : "\n\n" + own));
    known += (known.empty() ? "" : ", ") + sub->get_name();
    names.push_back(sub->get_name());
  }
  // Set after the subcommands are added: CLI11 gives a new subcommand its
  // parent's footer, and each has the convention once already.
  app.footer(kExitStatusHelp);
  // CLI11 reports an unknown command word only as "a subcommand is
  // required"; name it.
  if (argc > 1 && argv[1][0] != '-' &&
      std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    std::cerr << "secmode: unknown command '" << argv[1] << "' (known: " << known << ")\n"
              << "Run with --help for more information.\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    // A cause may quote a file (a results.json from elsewhere): each of its
    // lines as plain text.
    std::istringstream cause(e.what());
    for (std::string line; std::getline(cause, line);) {
      std::cerr << secmode::common::TerminalText(line) << "\n";
    }
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the cause and the usage hint
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "secmode: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}
