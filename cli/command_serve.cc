// `secmode serve`: the NFSv4.1-shaped RPC server on real TCP
// (rpc/tcp_server.h) until SIGINT/SIGTERM or --seconds.
#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli.h"
#include "gss/enctype.h"
#include "rpc/nfs.h"
#include "rpc/server_core.h"
#include "rpc/tcp_server.h"

namespace secmode::cli {

namespace {

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

struct ServeArgs {
  std::string address = "127.0.0.1";
  uint16_t port = 20049;
  std::string keytab, principal, engine = "mit", policy = "drop";
  uint32_t window = 128;
  int workers = 0;
  double seconds = 0;
  size_t max_record = rpc::kDefaultMaxRecord;
};

}  // namespace

CLI::App* AddServeCommand(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve NFSv4.1-shaped COMPOUND calls over ONC RPC on TCP (AUTH_SYS and, with "
      "--keytab, RPCSEC_GSS krb5/krb5i/krb5p) from memory");
  cmd->add_option("--address", a->address,
                  "Listen address (default 127.0.0.1; 0.0.0.0 or :: for all)");
  cmd->add_option("--port", a->port, "TCP port (default 20049; 0 = any free one, printed)");
  cmd->add_option("--keytab", a->keytab, "Service keytab for RPCSEC_GSS (none: AUTH_SYS only)");
  cmd->add_option("--principal", a->principal, "Service principal in the keytab (default: any)");
  cmd->add_option("--engine", a->engine, "GSS engine for message protection (mit, native)");
  cmd->add_option("--window", a->window, "RPCSEC_GSS sequence window (default 128)")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--window-policy", a->policy,
                  "What to do with a call below the window or seen before: drop, drop-disconnect, "
                  "discard-context");
  cmd->add_option("--workers", a->workers,
                  "Worker threads (0 = handle calls on each connection's thread)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--seconds", a->seconds, "Stop after this long (default: until SIGINT/SIGTERM)");
  cmd->add_option("--max-record", a->max_record,
                  "Largest RPC record accepted, bytes (default 1 MiB + 64 KiB); a connection "
                  "announcing a bigger one is closed");
  cmd->callback([a] {
    auto engine = gss::ParseEngine(a->engine);
    if (!engine.ok()) Fail("serve", engine.status());
    auto policy = rpc::ParseWindowPolicy(a->policy);
    if (!policy.ok()) Fail("serve", policy.status());
    rpc::ServerOptions so;
    so.keytab = a->keytab;
    so.principal = a->principal;
    so.engine = *engine;
    so.window = a->window;
    so.policy = *policy;
    rpc::MemoryNfsServer nfs;
    auto core = rpc::RpcServerCore::Create(so, {nfs.Program()});
    if (!core.ok()) Fail("serve", core.status());
    rpc::TcpServerOptions to;
    to.address = a->address;
    to.port = a->port;
    to.workers = a->workers;
    to.max_record = a->max_record;
    auto server = rpc::TcpServer::Start(to, core->get());
    if (!server.ok()) Fail("serve", server.status());
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    std::cout << "serving on " << a->address << ":" << (*server)->port()
              << (a->keytab.empty() ? " (AUTH_SYS)" : " (AUTH_SYS, RPCSEC_GSS)") << std::endl;
    auto t0 = std::chrono::steady_clock::now();
    while (!g_stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (a->seconds > 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >=
              a->seconds) {
        break;
      }
    }
    (*server)->Stop();
    auto c = (*core)->counters();
    std::cout << "calls " << c.calls << ", replies " << c.replies << ", duplicates " << c.duplicates
              << ", below window " << c.below_window << ", disconnects " << c.disconnects
              << ", contexts created " << c.contexts_created << ", discarded "
              << c.contexts_discarded << ", auth errors " << c.auth_errors << ", garbage args "
              << c.garbage_args << "\n";
  });
  return cmd;
}

}  // namespace secmode::cli
