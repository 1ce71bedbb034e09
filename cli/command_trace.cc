// `secmode trace FILE`: what a capture of real ONC RPC traffic did
// (trace/rpc_trace.h): calls and replies per connection, and for every
// RPCSEC_GSS context its sequence numbers in capture order, their lag and
// what windows of 16, 32, 64, 128 (and --window) would have dropped. Prints
// a table, or the trace as JSON on stdout with --json; --out DIR also writes
// a run directory whose results.json holds the trace as its section.
// --simulate sets the nconnect model beside the busiest context
// (trace/trace_model.h), with the thread model's scheduler probed on this
// machine; --recommend adds the slot count it takes as safe.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/run_directory.h"
#include "common/clock.h"
#include "common/format.h"
#include "common/machine.h"
#include "harness/results.h"
#include "harness/thread_model_calibration.h"
#include "render/report.h"
#include "trace/rpc_trace.h"
#include "trace/trace_model.h"

namespace secmode::cli {

namespace {

struct TraceArgs {
  std::string file;
  std::vector<uint16_t> rpc_ports, smb_ports;
  uint32_t window = 0;
  trace::CaptureSide side = trace::CaptureSide::kUnknown;
  bool json = false;
  std::string out_dir;
  bool simulate = false, recommend = false;
  int cores = 0;
};

constexpr int kModelSeeds = 3;

// --simulate: the scenario of the trace's busiest context, on the thread
// model with a run queue per core (as `secmode nconnect --recommend` runs
// it), the scheduler's parameters probed on this machine.
trace::TraceModel ModelOf(trace::RpcTrace& t, const trace::TraceOptions& o, const TraceArgs& a) {
  sim::Scenario base;
  base.thread_model = true;
  base.per_core_queues = true;
  base.cores = a.cores > 0 ? a.cores : common::LogicalCpus();
  const trace::CaptureSide side =
      o.side != trace::CaptureSide::kUnknown ? o.side : trace::GuessSide(t).side;
  auto from = trace::ScenarioFromTrace(t, side, a.window, base);
  if (!from.ok()) Fail("trace", from.status());
  harness::ThreadModelProbes probes;
  probes.slice_threads = 2 * from->scenario.nconnect;
  auto calibration = harness::CalibrateThreadModel(probes);
  if (!calibration.ok()) Fail("trace", calibration.status());
  calibration->ApplyTo(from->scenario);
  from->assumptions.push_back(
      {"cores", std::to_string(base.cores),
       std::string(a.cores > 0 ? "given (--cores)"
                               : "this machine's (--cores for the traced machines')") +
           "; the client's and the server's threads share them"});
  for (const harness::ThreadModelCalibration::Row& row : calibration->Rows()) {
    from->assumptions.push_back({row.parameter, "measured here", row.how + ", on this machine"});
  }
  auto model = trace::ModelTrace(std::move(*from), kModelSeeds, a.recommend);
  if (!model.ok()) Fail("trace", model.status());
  return std::move(*model);
}

}  // namespace

CLI::App* AddTraceCommand(CLI::App& app) {
  auto a = std::make_shared<TraceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "trace",
      "Read a capture (pcap or pcapng, e.g. tcpdump -s 0 -w nfs.pcap port 2049) of ONC RPC "
      "over TCP and say what it did: calls and replies per connection, and for each RPCSEC_GSS "
      "context the lag of its sequence numbers in capture order and the calls a server window "
      "of 16, 32, 64 or 128 would have dropped; and of SMB2/3 (port 445): each session over "
      "its channels, its signed and encrypted messages, credits and commands");
  cmd->add_option("file", a->file, "The capture file")->required();
  cmd->add_option("--rpc-port", a->rpc_ports,
                  "A server port carrying ONC RPC, besides 2049 (repeat for more); a connection "
                  "on other ports is read when its first bytes are an RPC call")
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--smb-port", a->smb_ports,
                  "A server port carrying SMB2/3, besides 445 (repeat for more): its sessions, "
                  "channels, signed and encrypted messages, credits and commands")
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--window", a->window,
                  "A server window to count would-be drops for, besides 16, 32, 64 and 128 (at "
                  "most 4096)")
      ->check(CLI::Range(1u, trace::kMaxWindow));
  const std::map<std::string, trace::CaptureSide> sides = {{"client", trace::CaptureSide::kClient},
                                                           {"server", trace::CaptureSide::kServer}};
  cmd->add_option("--side", a->side,
                  "Where the capture was taken, client or server: a lag is then in the client's "
                  "order of sending or the server's order of arrival (default: guessed from the "
                  "TCP handshakes' timing, and stated)")
      ->transform(CLI::CheckedTransformer(sides));
  CLI::Option* json =
      cmd->add_flag("--json", a->json, "Print the trace as JSON on stdout instead of the table");
  cmd->add_option("--out", a->out_dir,
                  "Also write a run directory: results.json (the trace as its section \"trace\", "
                  "with this machine and secmode) and report.md / report.html drawn from it "
                  "(`secmode report DIR` draws them again)")
      ->excludes(json);
  CLI::Option* simulate = cmd->add_flag(
      "--simulate", a->simulate,
      "Set the nconnect model beside the busiest RPCSEC_GSS context: its scenario from the "
      "trace (connections, slots, round trip, response time, I/O size, lagging connection, "
      "window, the server's reaction; the rest the model's; each assumption stated), the "
      "simulated lags and would-be drops beside the trace's, and the model's estimate of the "
      "drops the server's own check counts (its threads reorder calls after they arrive)");
  cmd->add_flag("--recommend", a->recommend,
                "With --simulate: also the largest safe slot count for this traffic and the "
                "alternatives (per-connection contexts, a spread cap, re-encode)")
      ->needs(simulate);
  cmd->add_option("--cores", a->cores,
                  "With --simulate: the cores of the traced client and server in the model "
                  "(default: this machine's)")
      ->check(CLI::Range(1, 1024))
      ->needs(simulate);
  cmd->callback([a] {
    trace::TraceOptions o;
    o.rpc_ports.insert(a->rpc_ports.begin(), a->rpc_ports.end());
    o.smb_ports.insert(a->smb_ports.begin(), a->smb_ports.end());
    o.side = a->side;
    if (a->window > 0 &&
        std::find(o.windows.begin(), o.windows.end(), a->window) == o.windows.end()) {
      o.windows.push_back(a->window);
      std::sort(o.windows.begin(), o.windows.end());
    }
    harness::RunResults results;
    if (!a->out_dir.empty()) results = NewRunResults();  // started now, before the reading
    // A long file's progress on stderr, when that is a terminal.
    trace::TraceProgress progress;
    bool shown = false;
    if (isatty(STDERR_FILENO)) {
      progress.report = [&shown](uint64_t read, uint64_t size) {
        std::cerr << "\rsecmode trace: read "
                  << common::Fmt("%.0f", static_cast<double>(read) / 1e6) << " of "
                  << common::Fmt("%.0f", static_cast<double>(size) / 1e6) << " MB ("
                  << common::Fmt("%.0f", size ? 100.0 * static_cast<double>(read) /
                                                    static_cast<double>(size)
                                              : 100.0)
                  << "%)" << std::flush;
        shown = true;
      };
    }
    auto t = trace::TraceCapture(a->file, o, progress);
    if (shown) std::cerr << "\r\033[K" << std::flush;
    if (!t.ok()) Fail("trace", t.status());
    nlohmann::json j = trace::TraceJson(*t, o);
    trace::TraceModel model;
    if (a->simulate) {
      model = ModelOf(*t, o, *a);
      j["model"] = trace::TraceModelJson(*t, model, o.windows);
    }
    if (a->json) {
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::cout << trace::TraceText(j);
    if (a->simulate) std::cout << trace::TraceModelText(j["model"]);
    if (model.recommended) std::cout << "\n" << model.recommendation.ToText(model.from.scenario);
    if (!a->out_dir.empty()) {
      results.sections[render::kTraceSection] = std::move(j);
      results.finished_at = common::UtcTimestamp();
      PrintWritten("results:", WriteRunDirectoryOrFail("trace", a->out_dir, results));
    }
  });
  return cmd;
}

}  // namespace secmode::cli
