// Old spellings the commands still accept (a renamed flag, the mode's
// enctype and engine given as flags of their own): each says on stderr
// what to write instead and then works as the new spelling does, so
// scripts keep running while their authors learn the one spelling.
#ifndef SECMODE_CLI_OLD_SPELLING_H_
#define SECMODE_CLI_OLD_SPELLING_H_

#include <CLI/CLI.hpp>
#include <string>

namespace secmode::cli {

// Prints "secmode <command>: <old> is an old spelling; write <instead>".
void TellOldSpelling(const std::string& command, const std::string& old_spelling,
                     const std::string& instead);

// Adds `old_name` to `cmd` as a hidden alias of the option `name` that
// stores into *value: given, it stores the same and tells its user to write
// `name` instead.
template <class T>
CLI::Option* AddOldName(CLI::App* cmd, const std::string& command, const std::string& old_name,
                        const std::string& name, T* value) {
  return cmd->add_option(old_name, *value)
      ->group("")
      ->each([command, old_name, name](const std::string& v) {
        TellOldSpelling(command, old_name + " " + v, name + " " + v);
      });
}

// The same for a flag.
inline CLI::Option* AddOldFlag(CLI::App* cmd, const std::string& command,
                               const std::string& old_name, const std::string& name, bool* value) {
  return cmd->add_flag(old_name, *value)
      ->group("")
      ->each([command, old_name, name](const std::string&) {
        TellOldSpelling(command, old_name, name);
      });
}

}  // namespace secmode::cli

#endif  // SECMODE_CLI_OLD_SPELLING_H_
