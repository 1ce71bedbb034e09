// `secmode trace FILE`: what a capture of real ONC RPC traffic did
// (trace/rpc_trace.h): calls and replies per connection, and for every
// RPCSEC_GSS context its sequence numbers in capture order, their lag and
// what windows of 16, 32, 64, 128 (and --window) would have dropped. Prints
// a table, or the trace as JSON on stdout with --json.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "trace/rpc_trace.h"

namespace secmode::cli {

namespace {

struct TraceArgs {
  std::string file;
  std::vector<uint16_t> rpc_ports;
  uint32_t window = 0;
  bool json = false;
};

}  // namespace

CLI::App* AddTraceCommand(CLI::App& app) {
  auto a = std::make_shared<TraceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "trace",
      "Read a capture (pcap or pcapng, e.g. tcpdump -s 0 -w nfs.pcap port 2049) of ONC RPC "
      "over TCP and say what it did: calls and replies per connection, and for each RPCSEC_GSS "
      "context the lag of its sequence numbers in capture order and the calls a server window "
      "of 16, 32, 64 or 128 would have dropped");
  cmd->add_option("file", a->file, "The capture file")->required();
  cmd->add_option("--rpc-port", a->rpc_ports,
                  "A server port carrying ONC RPC, besides 2049 (repeat for more); a connection "
                  "on other ports is read when its first bytes are an RPC call")
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--window", a->window,
                  "A server window to count would-be drops for, besides 16, 32, 64 and 128 (at "
                  "most 4096)")
      ->check(CLI::Range(1u, trace::kMaxWindow));
  cmd->add_flag("--json", a->json, "Print the trace as JSON on stdout instead of the table");
  cmd->callback([a] {
    trace::TraceOptions o;
    o.rpc_ports.insert(a->rpc_ports.begin(), a->rpc_ports.end());
    if (a->window > 0 &&
        std::find(o.windows.begin(), o.windows.end(), a->window) == o.windows.end()) {
      o.windows.push_back(a->window);
      std::sort(o.windows.begin(), o.windows.end());
    }
    auto t = trace::TraceCapture(a->file, o);
    if (!t.ok()) Fail("trace", t.status());
    const nlohmann::json j = trace::TraceJson(*t, o);
    if (a->json) {
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << trace::TraceText(j);
    }
  });
  return cmd;
}

}  // namespace secmode::cli
