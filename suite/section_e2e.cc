// Suite section "e2e": short end-to-end runs of every RPC mode (sys, krb5,
// krb5i, krb5p) over real loopback TCP against an in-process server
// (rpc/tcp_server.h) with the run's realm: NFSv4.1-shaped GETATTR and 4 KiB
// / 1 MiB READ and WRITE, 4 connections sharing one GSS context, 64
// outstanding calls (16 for 1 MiB, to bound memory). Rows go to
// results.json "e2e"; the report gets a table with krb5*/sys ratios.
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench/sections.h"
#include "gss/enctype.h"
#include "rpc/load.h"
#include "rpc/local_server.h"
#include "rpc/nfs.h"
#include "rpc/server_core.h"
#include "rpc/tcp_server.h"

namespace secmode::bench {

using common::Status;

namespace {

struct Case {
  rpc::NfsOp op;
  uint32_t size;
};
constexpr Case kCases[] = {{rpc::NfsOp::kGetattr, 0},
                           {rpc::NfsOp::kRead, 4096},
                           {rpc::NfsOp::kWrite, 4096},
                           {rpc::NfsOp::kRead, 1u << 20},
                           {rpc::NfsOp::kWrite, 1u << 20}};
const char* const kModes[] = {"sys", "krb5", "krb5i", "krb5p"};
// Load shape of every row; the report text is built from these, so it
// always states what ran.
constexpr int kConnections = 4;
constexpr int kSlots = 64;
constexpr int kSlotsLargeIo = 16;  // 1 MiB rows: bounds memory
// The default rows: every RPC family with MIT's library, and the krb5
// families again with the native engine (keys from the same kind of context,
// RFC 4121 in OpenSSL: what the Linux kernel's data path does).
const char* const kDefaultRows[] = {"sys",          "krb5",          "krb5i",        "krb5p",
                                    "krb5::native", "krb5i::native", "krb5p::native"};

std::string Fmt(const char* f, double v) {
  char b[64];
  snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

Status RunE2eSection(SectionContext& ctx) {
  SECMODE_ASSIGN_OR_RETURN(gss::Realm * realm, ctx.env.GetRealm());
  // One in-process server per GSS engine, so both ends of a row use the
  // engine the mode names.
  using Server = rpc::LocalServer;
  std::map<std::string, std::unique_ptr<Server>> servers;
  auto server_for = [&](const std::string& engine_name) -> common::Result<Server*> {
    auto it = servers.find(engine_name);
    if (it != servers.end()) return it->second.get();
    rpc::ServerOptions so;
    so.keytab = realm->service_keytab();
    if (engine_name != "none") {
      SECMODE_ASSIGN_OR_RETURN(so.engine, gss::ParseEngine(engine_name));
    }
    SECMODE_ASSIGN_OR_RETURN(auto s, rpc::LocalServer::Start(so));
    return servers.emplace(engine_name, std::move(s)).first->second.get();
  };

  // --modes restricts this section too (and picks enctype and engine); by
  // default kDefaultRows.
  std::vector<ModeName> modes;
  if (ctx.options.modes.empty()) {
    for (const char* m : kDefaultRows) {
      SECMODE_ASSIGN_OR_RETURN(ModeName n, ParseModeName(m));
      modes.push_back(n);
    }
  } else {
    for (const auto& text : ctx.options.modes) {
      SECMODE_ASSIGN_OR_RETURN(ModeName n, ParseModeName(text));
      for (const char* m : kModes) {
        if (n.family == m) modes.push_back(n);
      }
    }
  }
  if (modes.empty()) return Status::Ok();
  const double seconds = ctx.options.quick ? 0.4 : 3.0;
  const double warmup = ctx.options.quick ? 0.1 : 0.3;
  std::map<std::string, double> sys_ops;  // "op/size" -> ops/s of sys
  std::ostringstream md;
  md << "## End to end: NFSv4.1-shaped calls over ONC RPC on loopback TCP\n\n"
     << "In-process server, " << kConnections
     << " connections sharing one RPCSEC_GSS context (one sequence counter), " << kSlots
     << " outstanding calls (" << kSlotsLargeIo << " for 1 MiB), " << seconds
     << " s per row (longer, up to " << (ctx.options.quick ? 2.5 : 10)
     << " s, until 20 calls completed) after " << warmup
     << " s warm-up; client re-encodes calls that fell out of the window before sending (as Linux "
        "does); the mode column names enctype and engine (both ends use it). Client and server "
        "share the machine's cores, so each row is the cost of both ends.\n\n"
     << "| mode | op | size | ops/s | MB/s | p50 us | p99 us | p99.9 us | ops/s vs sys | window "
        "drops | retransmits | errors |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  Status first_failure;
  for (const Case& c : kCases) {
    for (const ModeName& name : modes) {
      const char* mode = name.family.c_str();
      const bool sys = name.family == "sys";
      SECMODE_ASSIGN_OR_RETURN(Server * server, server_for(name.engine));
      rpc::LoadOptions o;
      o.port = server->port();
      o.mode = name.family;
      o.ccache = realm->ccache();
      if (!sys) {
        SECMODE_ASSIGN_OR_RETURN(gss::Enctype enctype, gss::ParseEnctype(name.enctype));
        SECMODE_ASSIGN_OR_RETURN(o.engine, gss::ParseEngine(name.engine));
        o.enctype = static_cast<int32_t>(enctype);
      }
      o.op = c.op;
      o.size = c.size ? c.size : 4096;
      o.connections = kConnections;
      o.slots = c.size >= (1u << 20) ? kSlotsLargeIo : kSlots;
      o.seconds = seconds;
      o.warmup_seconds = warmup;
      o.min_ops = 20;
      o.max_seconds = ctx.options.quick ? 2.5 : 10;
      // Linux clients since about v5.0 re-encode a call whose sequence
      // number fell out of the window before it was sent.
      o.reencode = true;
      auto before = server->counters();
      auto r = rpc::RunLoad(o);
      auto after = server->counters();
      uint64_t window_drops =
          (after.duplicates + after.below_window) - (before.duplicates + before.below_window);
      std::string key = std::string(rpc::NfsOpName(c.op)) + "/" + std::to_string(c.size);
      if (!r.ok()) {
        ctx.log << "\n  e2e " << mode << " " << key << " failed: " << r.status().ToString();
        if (first_failure.ok())
          first_failure = r.status().Annotate(std::string("e2e ") + mode + " " + key);
        continue;
      }
      if (sys) sys_ops[key] = r->ops_per_second;
      double ratio = sys_ops.count(key) && sys_ops[key] > 0 ? r->ops_per_second / sys_ops[key] : 0;
      ctx.results.e2e.push_back({{"mode", r->mode},
                                 {"engine", name.engine},
                                 {"enctype", name.enctype},
                                 {"op", r->op},
                                 {"size", r->size},
                                 {"connections", r->connections},
                                 {"slots", r->slots},
                                 {"shared_context", r->shared_context},
                                 {"transport", "tcp-loopback"},
                                 {"seconds", r->seconds},
                                 {"ops", r->ops},
                                 {"ops_per_second", r->ops_per_second},
                                 {"mb_per_second", r->mb_per_second},
                                 {"p50_us", r->p50_us},
                                 {"p90_us", r->p90_us},
                                 {"p99_us", r->p99_us},
                                 {"p999_us", r->p999_us},
                                 {"retransmits", r->retransmits},
                                 {"timeouts", r->timeouts},
                                 {"disconnects", r->disconnects},
                                 {"context_recreations", r->context_recreations},
                                 {"reencodes", r->reencodes},
                                 {"server_window_drops", window_drops},
                                 {"errors", r->errors}});
      md << "| " << name.ToString() << " | " << r->op << " | "
         << (c.size == 0            ? std::string("-")
             : c.size >= (1u << 20) ? "1 MiB"
                                    : "4 KiB")
         << " | " << Fmt("%.0f", r->ops_per_second) << " | " << Fmt("%.1f", r->mb_per_second)
         << " | " << Fmt("%.0f", r->p50_us) << " | " << Fmt("%.0f", r->p99_us) << " | "
         << Fmt("%.0f", r->p999_us) << " | " << (ratio > 0 ? Fmt("%.2f", ratio) : "-") << " | "
         << window_drops << " | " << r->retransmits << " | " << r->errors << " |\n";
      if (r->errors > 0 && first_failure.ok()) {
        first_failure = Status::Internal(std::string("e2e ") + mode + " " + key + ": " +
                                         std::to_string(r->errors) +
                                         " failed replies, first: " + r->first_error);
      }
    }
  }
  uint64_t calls = 0, contexts = 0, drops = 0;
  for (auto& [engine, srv] : servers) {
    srv->Stop();
    auto counters = srv->counters();
    calls += counters.calls;
    contexts += counters.contexts_created;
    drops += counters.duplicates + counters.below_window;
  }
  const uint32_t window = rpc::ServerOptions{}.window;
  md << "\nWindow drops: calls the server discarded as below its " << window
     << "-call window or duplicate (RFC 2203 5.3.3.1, counted by the server over the whole run, "
        "warm-up included). With one context shared by "
     << kConnections << " connections, a call queued on one connection is overtaken by " << window
     << " newer calls on the others whenever that connection's client or server thread is "
        "descheduled: the nconnect effect the sim section models. Re-encoding before sending "
        "cannot help when the delay is after sending. The client resends a dropped call after its "
     << rpc::LoadOptions{}.timeout_ms
     << " ms timeout; in a short run some are still waiting for it when the run ends.\n";
  md << "\nServers: " << calls << " calls, " << contexts << " contexts created, " << drops
     << " window drops.\n";
  ctx.results.report_sections.push_back(md.str());
  return first_failure;
}

}  // namespace secmode::bench
