#include "cli/old_spelling.h"

#include <iostream>

namespace secmode::cli {

void TellOldSpelling(const std::string& command, const std::string& old_spelling,
                     const std::string& instead) {
  std::cerr << "secmode " << command << ": " << old_spelling << " is an old spelling; write "
            << instead << "\n";
}

}  // namespace secmode::cli
