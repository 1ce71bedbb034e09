// What every command shares (cli.h): its failure and the command line it
// records.
#include "cli/cli.h"

namespace secmode::cli {

namespace {

std::string& CommandLineStorage() {
  static std::string s;
  return s;
}

}  // namespace

void SetCommandLine(std::string command_line) { CommandLineStorage() = std::move(command_line); }
const std::string& CommandLine() { return CommandLineStorage(); }

void Fail(const std::string& command, const common::Status& status) {
  const int code = status.code() == common::Code::kInvalidArgument ? kExitUsage : kExitFailure;
  throw CLI::RuntimeError("secmode " + command + ": " + status.ToString(), code);
}

void FailUsage(const std::string& command, const std::string& message) {
  throw CLI::RuntimeError("secmode " + command + ": " + message, kExitUsage);
}

}  // namespace secmode::cli
