// tshark as an independent judge in tests: runs it on a pcap and returns
// its field rows.
#ifndef SECMODE_TESTS_SUPPORT_TSHARK_H_
#define SECMODE_TESTS_SUPPORT_TSHARK_H_

#include <string>
#include <vector>

namespace secmode::testing {

// `tshark -n -r PCAP ARGS...` (HOME set to the log's directory, so no
// user profile leaks in), its output in `log` and its warnings in `log` +
// ".stderr" (apart, so that none can cut a row); the rows of tab-separated
// fields (`-T fields` output), skipping lines that do not start with a digit
// (tshark's warnings when run as root). A failed run is a GoogleTest
// failure naming the command.
std::vector<std::vector<std::string>> RunTshark(const std::string& pcap,
                                                const std::vector<std::string>& args,
                                                const std::string& log);

}  // namespace secmode::testing

#endif  // SECMODE_TESTS_SUPPORT_TSHARK_H_
