// AddOldFlagName: a flag's old name, kept so that command lines written with
// it still work. It sets what the new name sets and says on standard error
// what to write instead; --help does not list it.
#ifndef SECMODE_CLI_FLAG_ALIAS_H_
#define SECMODE_CLI_FLAG_ALIAS_H_

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "common/format.h"

namespace secmode::cli {

// `old_name` on `cmd` as another name of the string option `new_name`,
// which stores into `target` (which must outlive the parse).
inline void AddOldFlagName(CLI::App* cmd, const std::string& old_name, const std::string& new_name,
                           std::string& target) {
  cmd->add_option_function<std::string>(
         old_name,
         [cmd, old_name, new_name, &target](const std::string& value) {
           std::cerr << "secmode " << cmd->get_name() << ": " << old_name << " is now " << new_name
                     << "; write " << new_name << " " << common::TerminalText(value) << "\n";
           target = value;
         })
      ->group("");
}

}  // namespace secmode::cli

#endif  // SECMODE_CLI_FLAG_ALIAS_H_
