// `secmode serve`: the NFSv4.1-shaped RPC server on real TCP
// (rpc/tcp_server.h) until SIGINT/SIGTERM or --seconds, with every limit of
// the server (connections, memory, reply and queue sizes, deadlines,
// contexts) a flag.
#include <sys/resource.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/old_spelling.h"
#include "gss/enctype.h"
#include "rpc/nfs.h"
#include "rpc/server_core.h"
#include "rpc/tcp_server.h"

namespace secmode::cli {

namespace {

struct ServeArgs {
  std::string address = "127.0.0.1";
  uint16_t port = 20049;
  std::string keytab, principal, engine = "mit", policy = "drop";
  uint32_t window = 128;
  int workers = 0;
  double seconds = 0;
  size_t max_record = rpc::kDefaultMaxRecord;
  size_t max_reply = rpc::kDefaultMaxReply;
  rpc::TcpServerOptions tcp;  // the limits' defaults
  size_t max_contexts = rpc::ServerOptions().max_contexts;
  double context_idle = rpc::ServerOptions().context_idle_seconds;
  bool no_replay_cache = false;
  double delay_ms = 0;
  double stats_every = 0;
};

// Room for max_connections descriptors (plus the realm's, the log's ...):
// the soft limit is raised toward the hard one if it is lower.
void RaiseDescriptorLimit(int max_connections) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  rlim_t want = static_cast<rlim_t>(max_connections) + 64;
  if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max) want = rl.rlim_max;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
    rl.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

// The server's counters and the TCP server's statistics, two lines: at the
// end, and every --stats-every seconds while it serves (then "held" and
// "open" are what the server holds at that moment).
void PrintStats(rpc::RpcServerCore& core, const rpc::TcpServer& server) {
  auto c = core.counters();
  std::cout << "calls " << c.calls << ", replies " << c.replies << ", duplicates " << c.duplicates
            << ", below window " << c.below_window << ", disconnects " << c.disconnects
            << ", contexts created " << c.contexts_created << ", discarded " << c.contexts_discarded
            << ", evicted " << c.contexts_evicted << ", expired " << c.contexts_expired
            << ", auth errors " << c.auth_errors << ", garbage args " << c.garbage_args
            << ", contexts held " << core.context_count() << "\n";
  auto t = server.stats();
  std::cout << "connections " << t.connections << " (" << t.open_connections << " open), refused "
            << t.refused << " (" << t.host_refused << " at the per-host limit), evicted "
            << t.evicted << ", broken streams " << t.bad_streams << ", closed idle "
            << t.idle_closed << ", first-record deadline " << t.first_record_timeouts
            << ", record deadline " << t.record_timeouts << ", send deadline " << t.send_timeouts
            << ", reset for memory " << t.memory_resets << " (peak " << (t.memory_peak >> 20)
            << " MiB held), accept errors " << t.accept_errors << ", thread failures "
            << t.thread_failures << std::endl;
}

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
  cmd->add_option("--reaction", a->policy,
                  "What to do with a call below the window or seen before: drop, drop-disconnect, "
                  "discard-context (default drop, RFC 2203's silent discard; secmode nconnect "
                  "defaults to drop-disconnect, what Linux nfsd does)");
  AddOldName(cmd, "serve", "--window-policy", "--reaction", &a->policy);
  cmd->add_option("--workers", a->workers,
                  "Worker threads (0 = handle calls on each connection's thread)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--seconds", a->seconds, "Stop after this long (default: until SIGINT/SIGTERM)");
  cmd->add_option("--max-record", a->max_record,
                  "Largest RPC record accepted, bytes (default 1 MiB + 64 KiB); a connection "
                  "announcing a bigger one is closed")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 30));
  cmd->add_option("--max-reply", a->max_reply,
                  "Most bytes of COMPOUND results one call may return (default 1 MiB + 4 KiB); an "
                  "operation that would go beyond ends the COMPOUND with NFS4ERR_REP_TOO_BIG")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 30));
  cmd->add_option("--max-connections", a->tcp.max_connections,
                  "Connections open at once (default 1024, or the descriptor limit less 64 if "
                  "that is lower); at the limit the connection idle longest with nothing pending "
                  "is closed for a new one, or the new one if none is idle (with a log line)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-connections-per-host", a->tcp.max_connections_per_host,
                  "Connections open at once from one client address (default 64, four Linux "
                  "mounts of nconnect=16); one more from it is closed at once, with a log line")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-memory", a->tcp.max_memory,
                  "Bytes all connections' buffers (reads, gathered replies, worker queues, "
                  "backlogs, delay lines) may hold (default 512 MiB, or a quarter of physical "
                  "memory if less); above it the connections holding the most stop being read "
                  "and are reset until the server is back under it, and memory that comes free "
                  "goes first to the waiting client address that holds the least; at least 4 x "
                  "--max-gather")
      ->check(CLI::Range(size_t{1} << 20, size_t{1} << 44));
  cmd->add_option("--max-gather", a->tcp.max_gather,
                  "Reply bytes gathered from one read before they are sent, and held by a "
                  "--delay-ms line, per connection (default 2 MiB); no call is executed while a "
                  "connection holds that many unsent")
      ->check(CLI::Range(size_t{4096}, size_t{1} << 30));
  cmd->add_option("--max-queue", a->tcp.max_queue,
                  "With --workers: calls of one connection handed to the workers and not yet "
                  "answered (default 1024); beyond, that connection is not read")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-queue-bytes", a->tcp.max_queue_bytes,
                  "With --workers: bytes of those calls (default 8 MiB)")
      ->check(CLI::Range(size_t{4096}, size_t{1} << 32));
  cmd->add_option("--max-backlog", a->tcp.max_backlog,
                  "With --workers: reply bytes waiting for a client that does not read (default "
                  "2 MiB); beyond, its calls are set aside until it reads")
      ->check(CLI::Range(size_t{4096}, size_t{1} << 32));
  cmd->add_option("--idle-timeout", a->tcp.idle_timeout_s,
                  "Close a connection that sends nothing for this many seconds (default 360, as "
                  "Linux nfsd; 0 = never)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--first-record-timeout", a->tcp.first_record_timeout_s,
                  "Close a connection that has sent not a byte this many seconds after it was "
                  "accepted (default 5; 0 = never); after its first byte, --record-timeout rules")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--record-timeout", a->tcp.record_timeout_s,
                  "Close a connection that has sent part of a record and completes none for this "
                  "many seconds (default 30; 0 = never)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--send-timeout", a->tcp.send_timeout_s,
                  "Close a connection that does not take a batch of its replies (--max-gather "
                  "bytes, --max-backlog with --workers) within this many seconds (default 30; 0 = "
                  "never)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--max-contexts", a->max_contexts,
                  "RPCSEC_GSS contexts held at once (default 16384); a new one beyond evicts the "
                  "least recently used of the principals holding the most, with a log line")
      ->check(CLI::Range(size_t{1}, size_t{1} << 24));
  cmd->add_option("--context-idle", a->context_idle,
                  "Forget an RPCSEC_GSS context unused for this many seconds (default 600; 0 = "
                  "never); its client gets RPCSEC_GSS_CREDPROBLEM and makes a new one")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--delay-ms", a->delay_ms,
                  "Hold every reply this long before it is sent: a one-way delay from server to "
                  "client, emulated (for a lab link's round trip where the kernel has no netem; "
                  "TCP does not see it). Not with --workers (default 0)")
      ->check(CLI::Range(0.0, 10000.0));
  cmd->add_option("--stats-every", a->stats_every,
                  "Print the counters and statistics printed at the end (with the contexts held "
                  "and the connections open at that moment) every this many seconds as well "
                  "(default 0: only at the end)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_flag("--no-replay-cache", a->no_replay_cache,
                "For tests only: run the GSS acceptor without MIT's replay cache, so a captured "
                "RPCSEC_GSS INIT can be replayed (KRB5RCACHENAME and KRB5RCACHETYPE in the "
                "environment are ignored)");
  cmd->callback([a] {
    auto engine = gss::ParseEngine(a->engine);
    if (!engine.ok()) Fail("serve", engine.status());
    auto policy = rpc::ParseWindowPolicy(a->policy);
    if (!policy.ok()) Fail("serve", policy.status());
    // The acceptor names its replay cache (rpc/server_core.h): MIT's
    // variables would otherwise choose it, KRB5RCACHENAME=none: or
    // KRB5RCACHETYPE=none turning it off.
    for (const char* var : {"KRB5RCACHENAME", "KRB5RCACHETYPE"}) {
      const char* value = std::getenv(var);
      if (value == nullptr) continue;
      std::cerr << "serve: ignoring " << var << "=" << value
                << ": the GSS acceptor names its own replay cache ("
                << (a->no_replay_cache ? "none:, --no-replay-cache"
                                       : "dfl:, in KRB5RCACHEDIR or /var/tmp")
                << ")" << std::endl;
    }
    if (a->no_replay_cache) {
      std::cerr << "serve: the replay cache is off (--no-replay-cache): captured RPCSEC_GSS INIT "
                   "calls can be replayed"
                << std::endl;
    }
    if (a->tcp.max_memory > 0 && a->tcp.max_memory / rpc::kMinMemoryPerGather < a->tcp.max_gather) {
      FailUsage("serve", "--max-memory (" + std::to_string(a->tcp.max_memory) +
                             ") must be at least " + std::to_string(rpc::kMinMemoryPerGather) +
                             " x --max-gather (" + std::to_string(a->tcp.max_gather) +
                             "): a connection's first call reserves 2 x --max-gather");
    }
    // SIGINT and SIGTERM (cli/interrupt.h), before the server's threads
    // start: serve's ordinary end, quiet, exit status 0 once it stopped.
    Interrupt interrupt("serve", "");
    rpc::ServerOptions so;
    so.keytab = a->keytab;
    so.principal = a->principal;
    so.replay_cache = !a->no_replay_cache;
    so.engine = *engine;
    so.window = a->window;
    so.policy = *policy;
    so.max_contexts = a->max_contexts;
    so.context_idle_seconds = a->context_idle;
    rpc::MemoryNfsServer nfs(a->max_reply);
    auto core = rpc::RpcServerCore::Create(so, {nfs.Program()});
    if (!core.ok()) Fail("serve", core.status());
    RaiseDescriptorLimit(a->tcp.max_connections > 0 ? a->tcp.max_connections : 1024);
    rpc::TcpServerOptions to = a->tcp;
    to.address = a->address;
    to.port = a->port;
    to.workers = a->workers;
    to.max_record = a->max_record;
    if (!std::isfinite(a->delay_ms)) FailUsage("serve", "--delay-ms must be a number of ms");
    to.reply_delay_us = static_cast<uint32_t>(std::llround(a->delay_ms * 1000));
    auto server = rpc::TcpServer::Start(to, core->get());
    if (!server.ok()) Fail("serve", server.status());
    std::cout << "serving on " << a->address << ":" << (*server)->port()
              << (a->keytab.empty() ? " (AUTH_SYS)" : " (AUTH_SYS, RPCSEC_GSS)")
              << (to.reply_delay_us > 0 ? ", replies held " + std::to_string(to.reply_delay_us) +
                                              " us (emulated delay)"
                                        : std::string())
              << std::endl;
    using Clock = std::chrono::steady_clock;
    const auto stats_every =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a->stats_every));
    const auto t0 = Clock::now();
    auto next_stats = t0 + stats_every;
    while (interrupt.signal() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const auto now = Clock::now();
      if (a->stats_every > 0 && now >= next_stats) {
        PrintStats(**core, **server);
        next_stats = now + stats_every;
      }
      if (a->seconds > 0 && std::chrono::duration<double>(now - t0).count() >= a->seconds) break;
    }
    (*server)->Stop();
    PrintStats(**core, **server);
  });
  return cmd;
}

}  // namespace secmode::cli
