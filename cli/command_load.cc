// `secmode load`: the nconnect load generator on real TCP (rpc/load.h)
// against a server, or with --local against a throwaway realm and an
// in-process server (harness/local_rpc.h). Prints the run as JSON on stdout
// and one summary line on stderr. A run that fails part way (the server
// died, a deadline passed) still prints what it measured, with "failure"
// set, and exits 1.
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/cli.h"
#include "cli/client_flags.h"
#include "cli/old_spelling.h"
#include "common/format.h"
#include "gss/enctype.h"
#include "harness/local_rpc.h"
#include "harness/modes.h"
#include "harness/results.h"
#include "rpc/client_auth.h"
#include "rpc/load.h"
#include "rpc/nfs.h"
#include "rpc/server_core.h"

namespace secmode::cli {

namespace {

struct LoadArgs {
  rpc::LoadOptions o;
  ClientFlags client;
  std::string op = "getattr";
  std::string server_kind = "secmode", read_path = "export/read", write_path = "export/write";
  double delay_ms = 0;
};

}  // namespace

CLI::App* AddLoadCommand(CLI::App& app) {
  auto a = std::make_shared<LoadArgs>();
  CLI::App* cmd = app.add_subcommand(
      "load",
      "Drive an RPC server with NFSv4.1-shaped calls over N connections (nconnect) and "
      "report ops/s, MB/s, latency percentiles, retransmits, window drops");
  AddClientFlags(cmd, &a->client, 20049, "sys", "sys, krb5, krb5i or krb5p");
  cmd->add_option("--connections", a->o.connections,
                  "TCP connections, the NFS client's nconnect (default 4)");
  AddOldName(cmd, "load", "--nconnect", "--connections", &a->o.connections);
  cmd->add_flag("--context-per-connection", a->o.context_per_connection,
                "One GSS context per connection instead of one shared by all");
  cmd->add_option("--slots", a->o.slots, "Outstanding calls (default 64)");
  cmd->add_option("--op", a->op, "getattr, read or write");
  cmd->add_option("--size", a->o.size, "READ/WRITE size in bytes (default 4096)");
  cmd->add_option("--seconds", a->o.seconds, "Measured duration (default 2)");
  cmd->add_option("--warmup", a->o.warmup_seconds,
                  "Time before the measured duration, in seconds: calls complete but do not count "
                  "(default 0.2; give a link with a long round trip or queue a few of them)")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_flag("--reencode", a->o.reencode,
                "Re-encode a call whose sequence number fell out of the window before sending");
  cmd->add_option("--timeout-ms", a->o.timeout_ms, "Retransmit timeout (default 1000)");
  cmd->add_option("--connect-timeout-ms", a->o.connect_timeout_ms,
                  "Give up on a TCP connect (each connection, reconnect and the short "
                  "connections of context set-up and DESTROY) after this long; 0 = no limit "
                  "(default 5000)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--init-timeout-ms", a->o.init_timeout_ms,
                  "Give up on one RPCSEC_GSS_INIT / CONTINUE_INIT round trip after this long; "
                  "0 = no limit (default 10000)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--deadline", a->o.deadline_seconds,
                  "End the whole run with an error after this many seconds, whatever it is "
                  "waiting for (at least --seconds and the 0.2 s warm-up; default 0 = those "
                  "plus 30 s, plus 0.1 s per context to create)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--destroy-timeout-ms", a->o.destroy_timeout_ms,
                  "At the end, time allowed for ending the run's RPCSEC_GSS contexts on the "
                  "server with RPCSEC_GSS_DESTROY (best effort); 0 = leave them (default 5000)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--delay-ms", a->delay_ms,
                  "Hold every call this long before it is written: a one-way delay from client "
                  "to server, emulated (for a lab link's round trip where the kernel has no "
                  "netem; TCP does not see it); the latencies include it (default 0)")
      ->check(CLI::Range(0.0, 10000.0));
  cmd->add_option("--skew-connection", a->o.skew_connection, "Connection whose sends are delayed");
  cmd->add_option("--skew-delay-us", a->o.skew_delay_us, "Delay of that connection's sends");
  cmd->add_option("--server-kind", a->server_kind,
                  "secmode (secmode serve: no set-up) or nfs41 (any NFSv4.1 server: a session "
                  "is created first and destroyed at the end; --slots must not exceed the slots "
                  "it grants) (default secmode)");
  cmd->add_option("--read-path", a->read_path,
                  "With --server-kind nfs41: the file READ and GETATTR use, from the server's "
                  "root (default export/read)");
  cmd->add_option("--write-path", a->write_path,
                  "With --server-kind nfs41: the file WRITE uses (default export/write)");
  cmd->callback([a] {
    rpc::LoadOptions o = a->o;
    const ClientFlags& f = a->client;
    // Refuses a bad mode before a realm or server is started for it.
    ApplyClientFlags("load", f, &o);
    if (!std::isfinite(a->delay_ms)) FailUsage("load", "--delay-ms must be a number of ms");
    o.delay_us = static_cast<uint32_t>(std::llround(a->delay_ms * 1000));
    auto op = rpc::ParseNfsOp(a->op);
    if (!op.ok()) Fail("load", op.status());
    o.op = *op;
    if (a->server_kind == "nfs41") {
      if (f.local) FailUsage("load", "--local starts secmode's own server: no --server-kind nfs41");
      o.nfs41 = true;
      auto rp = rpc::SplitNfsPath(a->read_path);
      if (!rp.ok()) Fail("load", rp.status().Annotate("--read-path"));
      auto wp = rpc::SplitNfsPath(a->write_path);
      if (!wp.ok()) Fail("load", wp.status().Annotate("--write-path"));
      o.nfs41_options.read_path = *rp;
      o.nfs41_options.write_path = *wp;
    } else if (a->server_kind != "secmode") {
      FailUsage("load", "unknown --server-kind '" + a->server_kind + "' (known: secmode, nfs41)");
    }
    harness::ModeEnvironment env;
    harness::LocalRpcServer local =
        StartLocalIfAsked("load", f, o.engine, o.security != rpc::Security::kSys, env);
    if (local.server) local.Aim(o);
    rpc::LocalServer* server = local.server.get();
    std::optional<rpc::LoadReport> measured;
    auto result = rpc::RunLoad(o, &measured);
    if (server) server->Stop();
    // A failure before any call was sent has nothing to report.
    if (!result.ok() && !measured) Fail("load", result.status());
    const rpc::LoadReport* r = result.ok() ? &*result : &*measured;
    nlohmann::json j = harness::LoadReportJson(*r);
    j["delay_us"] = o.delay_us;
    j["contexts_destroyed"] = r->contexts_destroyed;
    j["contexts_gone"] = r->contexts_gone;
    j["contexts_left"] = r->contexts_left;
    if (!r->destroy_error.empty()) j["destroy_error"] = r->destroy_error;
    if (o.nfs41) {
      j["nfs41"] = {{"server", r->nfs41_server},
                    {"session_slots", r->session_slots},
                    {"session_close_error", r->session_close_error}};
    }
    if (!result.ok()) j["failure"] = result.status().ToString();
    if (server) {
      auto c = server->counters();
      const rpc::TcpServerStats st = server->stats();
      j["server"] = {{"thread_cpu_ns", st.threads.cpu_ns},
                     {"reads", st.reads},
                     {"sleeps", st.threads.sleeps},
                     {"preemptions", st.threads.preemptions},
                     {"run_queue_wait_ns", st.threads.run_queue_wait_ns},
                     {"runs", st.threads.runs},
                     {"calls", c.calls},
                     {"duplicates", c.duplicates},
                     {"below_window", c.below_window},
                     {"disconnects", c.disconnects},
                     {"contexts_created", c.contexts_created},
                     {"contexts_destroyed", c.contexts_destroyed},
                     {"contexts_discarded", c.contexts_discarded},
                     {"contexts_held", server->core().context_count()}};
    }
    std::cout << j.dump(2) << "\n";
    std::cerr << r->mode << " " << r->op << (r->size ? " " + std::to_string(r->size) + " B" : "")
              << ": " << static_cast<uint64_t>(r->ops_per_second) << " ops/s, " << r->mb_per_second
              << " MB/s, p50/p90/p99/p99.9 " << r->p50_us << "/" << r->p90_us << "/" << r->p99_us
              << "/" << r->p999_us << " us, retransmits " << r->retransmits << ", timeouts "
              << r->timeouts << ", disconnects " << r->disconnects << " ("
              << common::Fmt("%.1f", r->reconnects_per_second) << " reconnects/s, "
              << common::Fmt("%.3f", r->reconnect_wait_seconds)
              << " s waited before them, summed over the connections)"
              << ", context re-creations " << r->context_recreations << ", errors " << r->errors
              << "\n";
    if (!r->destroy_error.empty()) {
      std::cerr << "contexts left on the server: " << r->contexts_left << " (" << r->destroy_error
                << ")\n";
    }
    if (!result.ok()) Fail("load", result.status());
  });
  return cmd;
}

}  // namespace secmode::cli
