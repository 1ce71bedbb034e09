// `secmode probe`: an RPCSEC_GSS server's sequence window and its reaction
// to a call below it, measured with NULL calls (rpc/window_probe.h), against
// any server or, with --local, against a throwaway realm and secmode's own
// server with a chosen window and policy. Prints a short table on stderr and
// the report (every call as evidence) as JSON on stdout with --json.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/client_flags.h"
#include "common/format.h"
#include "gss/enctype.h"
#include "harness/local_rpc.h"
#include "harness/modes.h"
#include "harness/results.h"
#include "rpc/client_auth.h"
#include "rpc/server_core.h"
#include "rpc/window_probe.h"

namespace secmode::cli {

namespace {

struct ProbeArgs {
  rpc::ProbeOptions o;
  ClientFlags client;
  bool json = false;
};

void PrintTable(const rpc::ProbeReport& r) {
  std::cerr << "RPCSEC_GSS window of " << r.host << ":" << r.port << " (program " << r.program
            << " version " << r.version << ", " << r.mode << ", " << r.contexts_created
            << " contexts, " << common::Fmt("%.2f", r.seconds) << " s)\n";
  auto row = [](const std::string& k, const std::string& v) {
    std::cerr << "  " << k << std::string(k.size() < 26 ? 26 - k.size() : 1, ' ') << v << "\n";
  };
  row("advertised window", std::to_string(r.advertised_window));
  if (r.window > 0) {
    row("measured window",
        std::to_string(r.window) + (r.window_confirmed ? " (confirmed)" : " (NOT confirmed)"));
  } else {
    row("measured window", "above " + std::to_string(r.window_above));
  }
  row("far below the window", r.below_window);
  if (!r.below_window_reply.empty()) row("  what came back", r.below_window_reply);
  if (!r.below_window_edge.empty()) row("just below the window", r.below_window_edge);
  row("duplicate number", r.duplicate);
  row("0x7fffffff", r.at_maxseq_minus_1);
  row("0x80000000 (MAXSEQ)", r.at_maxseq);
  if (r.stray_replies > 0) {
    row("replies to no call", std::to_string(r.stray_replies) + " (" +
                                  std::to_string(r.stray_reply_bytes) + " bytes), dropped");
  }
  const std::string reaction = rpc::ModelReaction(r);
  if (r.window > 0 && !reaction.empty()) {
    std::cerr << "model it: secmode nconnect --window " << r.window << " --reaction " << reaction
              << "\n";
  } else if (r.window > 0) {
    std::cerr << "secmode nconnect has no reaction for '" << r.below_window << "'; its window is "
              << r.window << "\n";
  }
}

}  // namespace

CLI::App* AddProbeCommand(CLI::App& app) {
  auto a = std::make_shared<ProbeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "probe",
      "Measure an RPCSEC_GSS server's sequence window exactly and what it does with a call "
      "below it (silent drop, error reply, connection closed, context discarded), with NULL "
      "calls on contexts of their own; the result feeds secmode nconnect --window --reaction");
  AddClientFlags(cmd, &a->client, 2049, "krb5i", "krb5, krb5i or krb5p");
  cmd->add_option("--program", a->o.program, "RPC program (default 100003, NFS)");
  cmd->add_option("--version", a->o.version, "RPC program version (default 4)");
  cmd->add_option("--silence-ms", a->o.silence_ms,
                  "How long no reply counts as a silent drop; keep it well above the server's "
                  "round trip (default 1000)")
      ->check(CLI::Range(1, 600000));
  cmd->add_option("--max-window", a->o.max_window,
                  "Largest window looked for: a server accepting a call this far below its "
                  "highest number is reported as having a larger one (default 65536)")
      ->check(CLI::Range(2, 1 << 30));
  cmd->add_option("--connect-timeout-ms", a->o.connect_timeout_ms,
                  "Give up on a TCP connect after this long (default 5000)")
      ->check(CLI::Range(1, 600000));
  cmd->add_option("--init-timeout-ms", a->o.init_timeout_ms,
                  "Give up on an RPCSEC_GSS_INIT round trip, or on a call that must be answered, "
                  "after this long (default 10000)")
      ->check(CLI::Range(1, 600000));
  cmd->add_flag("--json", a->json, "Print the report, every call included, as JSON on stdout");
  cmd->callback([a] {
    rpc::ProbeOptions o = a->o;
    const ClientFlags& f = a->client;
    ApplyClientFlags("probe", f, &o);
    if (o.security == rpc::Security::kSys)
      FailUsage("probe", "mode sys has no sequence window: use krb5, krb5i or krb5p");
    harness::ModeEnvironment env;
    harness::LocalRpcServer local = StartLocalIfAsked("probe", f, o.engine, true, env);
    if (local.server) {
      rpc::LoadOptions aim;
      local.Aim(aim);
      o.host = aim.host;
      o.port = aim.port;
      o.ccache = aim.ccache;
      if (o.silence_ms == rpc::ProbeOptions().silence_ms) o.silence_ms = 200;  // loopback
    }
    auto r = rpc::ProbeWindow(o);
    if (local.server) local.server->Stop();
    if (!r.ok()) Fail("probe", r.status());
    if (a->json) std::cout << harness::ProbeReportJson(*r).dump(2) << "\n";
    PrintTable(*r);
  });
  return cmd;
}

}  // namespace secmode::cli
