#include "tests/support/tshark.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/files.h"
#include "common/subprocess.h"

namespace secmode::testing {

std::vector<std::vector<std::string>> RunTshark(const std::string& pcap,
                                                const std::vector<std::string>& args,
                                                const std::string& log) {
  // tshark's warnings go to a file of their own: written to the same file
  // as its rows, one can land inside a row where stdout's buffer was
  // flushed, cutting the row in two. The arguments reach tshark as sh's
  // positional parameters, never as shell text.
  const std::string warnings = log + ".stderr";
  common::Command cmd;
  cmd.argv = {"sh", "-c", "exec tshark \"$@\" 2>\"$0\"", warnings, "-n", "-r", pcap};
  cmd.argv.insert(cmd.argv.end(), args.begin(), args.end());
  cmd.log_path = log;
  cmd.env["HOME"] = log.substr(0, log.find_last_of('/'));
  std::remove(log.c_str());
  auto rc = common::RunAndWait(cmd, 60000);
  EXPECT_TRUE(rc.ok() && *rc == 0) << cmd.ToString() << "\n"
                                   << common::TailOfFile(log, 10)
                                   << common::TailOfFile(warnings, 10);
  std::ifstream in(log);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || !isdigit(static_cast<unsigned char>(line[0]))) continue;  // warnings
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    rows.push_back(cols);
  }
  return rows;
}

}  // namespace secmode::testing
