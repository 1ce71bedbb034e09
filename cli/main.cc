// The `secmode` command line.
#include <CLI/CLI.hpp>
#include <iostream>

#include "bench/cli.h"

#ifndef SECMODE_VERSION
#define SECMODE_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  secmode::bench::SetCommandLine(command_line);

  CLI::App app{
      "secmode: what does a security mode cost? Measures NFS RPCSEC_GSS (sys, krb5, krb5i, krb5p) "
      "and SMB3 signing/encryption with real Kerberos contexts and real crypto."};
  app.set_version_flag("--version", std::string("secmode ") + SECMODE_VERSION);
  app.require_subcommand(1);
  secmode::bench::AddRunCommand(app);
  secmode::bench::AddModesCommand(app);
  secmode::bench::AddNconnectCommand(app);
  secmode::bench::AddServeCommand(app);
  secmode::bench::AddLoadCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    std::cerr << e.what() << "\n";
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
