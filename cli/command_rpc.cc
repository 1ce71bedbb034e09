// `secmode serve` and `secmode load`: the RPC server and the nconnect load
// generator on real TCP (rpc/tcp_server.h, rpc/load.h).
#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench/cli.h"
#include "gss/enctype.h"
#include "gss/realm.h"
#include "rpc/load.h"
#include "rpc/local_server.h"
#include "rpc/nfs.h"
#include "rpc/server_core.h"
#include "rpc/tcp_server.h"

namespace secmode::bench {

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

struct LoadArgs {
  rpc::LoadOptions o;
  std::string engine = "mit", enctype, op = "getattr", policy = "drop";
  bool local = false;
  uint32_t window = 128;
};

nlohmann::json ReportJson(const rpc::LoadReport& r) {
  return {{"mode", r.mode},
          {"op", r.op},
          {"size", r.size},
          {"connections", r.connections},
          {"slots", r.slots},
          {"shared_context", r.shared_context},
          {"seconds", r.seconds},
          {"ops", r.ops},
          {"ops_per_second", r.ops_per_second},
          {"mb_per_second", r.mb_per_second},
          {"p50_us", r.p50_us},
          {"p90_us", r.p90_us},
          {"p99_us", r.p99_us},
          {"p999_us", r.p999_us},
          {"retransmits", r.retransmits},
          {"timeouts", r.timeouts},
          {"disconnects", r.disconnects},
          {"context_recreations", r.context_recreations},
          {"reencodes", r.reencodes},
          {"stale_replies", r.stale_replies},
          {"errors", r.errors},
          {"first_error", r.first_error}};
}

}  // namespace

void AddServeCommand(CLI::App& app) {
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
    if (!engine.ok()) throw CLI::RuntimeError("secmode serve: " + engine.status().ToString(), 2);
    auto policy = rpc::ParseWindowPolicy(a->policy);
    if (!policy.ok()) throw CLI::RuntimeError("secmode serve: " + policy.status().ToString(), 2);
    rpc::ServerOptions so;
    so.keytab = a->keytab;
    so.principal = a->principal;
    so.engine = *engine;
    so.window = a->window;
    so.policy = *policy;
    rpc::MemoryNfsServer nfs;
    auto core = rpc::RpcServerCore::Create(so, {nfs.Program()});
    if (!core.ok()) throw CLI::RuntimeError("secmode serve: " + core.status().ToString(), 1);
    rpc::TcpServerOptions to;
    to.address = a->address;
    to.port = a->port;
    to.workers = a->workers;
    to.max_record = a->max_record;
    auto server = rpc::TcpServer::Start(to, core->get());
    if (!server.ok()) throw CLI::RuntimeError("secmode serve: " + server.status().ToString(), 1);
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
}

void AddLoadCommand(CLI::App& app) {
  auto a = std::make_shared<LoadArgs>();
  CLI::App* cmd = app.add_subcommand(
      "load",
      "Drive an RPC server with NFSv4.1-shaped calls over N connections (nconnect) and "
      "report ops/s, MB/s, latency percentiles, retransmits, window drops");
  cmd->add_option("--host", a->o.host, "Server host (default 127.0.0.1)");
  cmd->add_option("--port", a->o.port, "Server port (default 20049)")->default_val(20049);
  cmd->add_option("--mode", a->o.mode, "sys, krb5, krb5i or krb5p");
  cmd->add_option("--engine", a->engine, "GSS engine (mit, native)");
  cmd->add_option("--enctype", a->enctype, "Kerberos enctype (default: the KDC's choice)");
  cmd->add_option("--ccache", a->o.ccache, "Credential cache (default: KRB5CCNAME / default)");
  cmd->add_option("--target", a->o.target, "GSS host-based service name (default nfs@localhost)");
  cmd->add_option("--nconnect", a->o.connections, "TCP connections (default 4)");
  cmd->add_flag("--context-per-connection", a->o.context_per_connection,
                "One GSS context per connection instead of one shared by all");
  cmd->add_option("--slots", a->o.slots, "Outstanding calls (default 64)");
  cmd->add_option("--op", a->op, "getattr, read or write");
  cmd->add_option("--size", a->o.size, "READ/WRITE size in bytes (default 4096)");
  cmd->add_option("--seconds", a->o.seconds, "Measured duration (default 2)");
  cmd->add_flag("--reencode", a->o.reencode,
                "Re-encode a call whose sequence number fell out of the window before sending");
  cmd->add_option("--timeout-ms", a->o.timeout_ms, "Retransmit timeout (default 1000)");
  cmd->add_option("--skew-connection", a->o.skew_connection, "Connection whose sends are delayed");
  cmd->add_option("--skew-delay-us", a->o.skew_delay_us, "Delay of that connection's sends");
  cmd->add_flag("--local", a->local,
                "Start a throwaway realm and an in-process server on loopback and load that");
  cmd->add_option("--window", a->window, "With --local: the server's sequence window");
  cmd->add_option("--window-policy", a->policy, "With --local: the server's window policy");
  cmd->callback([a] {
    rpc::LoadOptions o = a->o;
    auto engine = gss::ParseEngine(a->engine);
    if (!engine.ok()) throw CLI::RuntimeError("secmode load: " + engine.status().ToString(), 2);
    o.engine = *engine;
    if (!a->enctype.empty()) {
      auto e = gss::ParseEnctype(a->enctype);
      if (!e.ok()) throw CLI::RuntimeError("secmode load: " + e.status().ToString(), 2);
      o.enctype = static_cast<int32_t>(*e);
    }
    auto op = rpc::ParseNfsOp(a->op);
    if (!op.ok()) throw CLI::RuntimeError("secmode load: " + op.status().ToString(), 2);
    o.op = *op;
    std::unique_ptr<gss::Realm> realm;
    std::unique_ptr<rpc::LocalServer> server;
    if (a->local) {
      auto policy = rpc::ParseWindowPolicy(a->policy);
      if (!policy.ok()) throw CLI::RuntimeError("secmode load: " + policy.status().ToString(), 2);
      rpc::ServerOptions so;
      so.engine = o.engine;
      so.window = a->window;
      so.policy = *policy;
      if (o.mode != "sys") {
        auto r = gss::Realm::Start();
        if (!r.ok()) throw CLI::RuntimeError("secmode load: " + r.status().ToString(), 1);
        realm = std::move(r).value();
        so.keytab = realm->service_keytab();
        o.ccache = realm->ccache();
      }
      auto s = rpc::LocalServer::Start(so);
      if (!s.ok()) throw CLI::RuntimeError("secmode load: " + s.status().ToString(), 1);
      server = std::move(s).value();
      o.host = "127.0.0.1";
      o.port = server->port();
    }
    auto r = rpc::RunLoad(o);
    if (server) server->Stop();
    if (!r.ok()) throw CLI::RuntimeError("secmode load: " + r.status().ToString(), 1);
    nlohmann::json j = ReportJson(*r);
    if (server) {
      auto c = server->counters();
      j["server"] = {{"duplicates", c.duplicates},
                     {"below_window", c.below_window},
                     {"disconnects", c.disconnects},
                     {"contexts_created", c.contexts_created},
                     {"contexts_discarded", c.contexts_discarded}};
    }
    std::cout << j.dump(2) << "\n";
    std::cerr << r->mode << " " << r->op << (r->size ? " " + std::to_string(r->size) + " B" : "")
              << ": " << static_cast<uint64_t>(r->ops_per_second) << " ops/s, " << r->mb_per_second
              << " MB/s, p50/p90/p99/p99.9 " << r->p50_us << "/" << r->p90_us << "/" << r->p99_us
              << "/" << r->p999_us << " us, retransmits " << r->retransmits << ", timeouts "
              << r->timeouts << ", disconnects " << r->disconnects << ", context re-creations "
              << r->context_recreations << ", errors " << r->errors << "\n";
  });
}

}  // namespace secmode::bench
