#include "cli/scenario_flags.h"

#include "cli/old_spelling.h"
#include "rpc/window_policy.h"

namespace secmode::cli {

void AddScenarioFlags(CLI::App* cmd, ScenarioFlags& flags) {
  sim::Scenario& s = flags.s;
  cmd->add_option("--connections", s.nconnect, "TCP connections, the NFS client's nconnect")
      ->capture_default_str();
  AddOldName(cmd, "nconnect", "--nconnect", "--connections", &s.nconnect);
  cmd->add_option("--slots", s.slots, "Requests outstanding at once")->capture_default_str();
  cmd->add_option("--window", s.window, "Server's RPCSEC_GSS sequence window")
      ->capture_default_str();
  cmd->add_option("--reaction", flags.reaction,
                  "Server reaction to a number below the window: drop, drop-disconnect, "
                  "discard-context (the default is what Linux nfsd does; secmode serve's is drop)")
      ->capture_default_str();
  cmd->add_option("--op", flags.op, "read or write (which direction carries the I/O)")
      ->capture_default_str();
  cmd->add_option("--io-size", s.io_size, "I/O size in bytes")->capture_default_str();
  cmd->add_flag("--context-per-connection", s.per_connection_context,
                "One GSS context (sequence counter) per connection instead of one shared");
  AddOldFlag(cmd, "nconnect", "--per-connection-context", "--context-per-connection",
             &s.per_connection_context);
  cmd->add_flag("--resend-any-connection", s.resend_any_connection,
                "Resend a lost connection's calls round-robin over all connections (secmode's "
                "load generator) instead of on the reconnected one (Linux)");
  cmd->add_flag("--context-lock-wakes-one", s.context_lock_wakes_one,
                "With the thread model: the receivers waiting for a re-created context go on one "
                "after another, as a mutex's waiters (secmode's load generator), instead of all "
                "at once (Linux)");
  cmd->add_flag("--reencode", s.reencode,
                "Re-number calls that fell out of the window at transmit");
  cmd->add_option("--spread-cap", s.spread_cap,
                  "Cap on (number - lowest outstanding number); 0: none")
      ->capture_default_str();
  cmd->add_option("--cost-fixed-ns", s.cost_fixed_ns, "Crypto cost per message, fixed part")
      ->capture_default_str();
  cmd->add_option("--cost-ns-per-byte", s.cost_ns_per_byte, "Crypto cost per message byte")
      ->capture_default_str();
  cmd->add_option("--gss-setup-cpu-ns", s.gss_setup_cpu_ns,
                  "With --thread-model: the part of --gss-setup-ns that is CPU, spent on a core "
                  "by the thread that re-creates the context")
      ->capture_default_str();
  cmd->add_option("--reconnect-cpu-ns", s.reconnect_cpu_ns,
                  "With --thread-model: the part of --reconnect-ns that is CPU, spent on a core "
                  "by the receiver that reconnects")
      ->capture_default_str();
  cmd->add_option("--reconnect-server-cpu-ns", s.reconnect_server_cpu_ns,
                  "With --thread-model: the server's CPU per reconnect (accept, the new "
                  "connection's thread, the old one's end), spent by that connection's server "
                  "thread before it reads a call")
      ->capture_default_str();
  cmd->add_option("--gss-setup-ns", s.gss_setup_ns, "Cost of creating a new GSS context")
      ->capture_default_str();
  cmd->add_option("--retransmit-timeout-ns", s.retransmit_timeout_ns, "Client retransmit timeout")
      ->capture_default_str();
  cmd->add_option("--reconnect-ns", s.reconnect_ns, "Reconnect time beyond one RTT")
      ->capture_default_str();
  cmd->add_option("--bandwidth", s.bandwidth_bytes_per_s,
                  "Bytes per second per connection and direction")
      ->capture_default_str();
  cmd->add_option("--rtt-ns", s.rtt_ns, "Base round-trip time")->capture_default_str();
  cmd->add_option("--jitter-dist", flags.jitter_dist, "constant, exponential or lognormal")
      ->capture_default_str();
  cmd->add_option("--jitter-ns", s.jitter_ns, "Mean one-way extra delay")->capture_default_str();
  cmd->add_option("--skew-connection", s.skew_conn, "The lagging connection")
      ->capture_default_str();
  AddOldName(cmd, "nconnect", "--skew-conn", "--skew-connection", &s.skew_conn);
  cmd->add_option("--skew-ns", s.skew_ns, "How much that connection lags")->capture_default_str();
  cmd->add_option("--skew-where", flags.skew_where,
                  "client (held before the socket) or network (on the wire)")
      ->capture_default_str();
  cmd->add_option("--server-threads", s.server_threads, "Server worker threads")
      ->capture_default_str();
  cmd->add_option("--server-order", flags.server_order,
                  "arrival (one FIFO) or round-robin (per-connection queues, checked at pickup)")
      ->capture_default_str();
  cmd->add_option("--service-dist", flags.service_dist, "constant, exponential or lognormal")
      ->capture_default_str();
  cmd->add_option("--service-ns", s.service_ns, "Mean server service time besides crypto")
      ->capture_default_str();
  cmd->add_flag("--thread-model", s.thread_model,
                "Model threads and cores: a receiver thread per connection on the client, a "
                "thread per connection on the server, per-wakeup batches, a round-robin "
                "scheduler on --cores cores");
  cmd->add_option("--cores", s.cores,
                  "With --thread-model: cores shared by client and server "
                  "threads (0: one per thread)")
      ->capture_default_str();
  cmd->add_option("--slice-ns", s.slice_ns, "With --thread-model: the scheduler's time slice")
      ->capture_default_str();
  cmd->add_option("--wakeup-preempt-ns", s.wakeup_preempt_ns,
                  "With --thread-model: a woken thread takes the core of one that has run this "
                  "long (0: waits for a slice to end)")
      ->capture_default_str();
  cmd->add_option("--skew-sender-ns", s.skew_sender_ns,
                  "With --thread-model and a client-side skew: CPU per call of a delay-line "
                  "thread that writes the skewed connection's calls when due (0: no such thread)")
      ->capture_default_str();
  cmd->add_option("--idle-wake-ns", s.idle_wake_ns,
                  "With --thread-model and cores: a thread woken onto an idle core starts this "
                  "long after its wakeup (0: at once)")
      ->capture_default_str();
  cmd->add_option("--idle-wake-after-ns", s.idle_wake_after_ns,
                  "With --thread-model, cores and --per-core-queues: idle lengths in ns, rising, "
                  "comma-separated, after which a woken thread starts --idle-wake-curve-ns later "
                  "(linear in between; none: --idle-wake-ns whatever the idle time)")
      ->delimiter(',');
  cmd->add_option("--idle-wake-curve-ns", s.idle_wake_curve_ns,
                  "With --idle-wake-after-ns: the wakeup in ns after each of those idle lengths")
      ->delimiter(',');
  cmd->add_option("--woken-first-share", s.woken_first_share,
                  "With --thread-model and cores: the share of wakeups after which the woken "
                  "thread waits ahead of threads descheduled with work left (0: in order of "
                  "arrival)")
      ->capture_default_str();
  cmd->add_option("--busy-wake-ns", s.busy_wake_ns,
                  "With --thread-model, cores and wakeup preemption: a woken thread's "
                  "preemption of a busy core lands this long after its wakeup, the quantiles "
                  "in ns at 0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999 and 1, "
                  "comma-separated (none: at the wakeup)")
      ->delimiter(',');
  cmd->add_option("--pause-per-s", s.pause_per_s,
                  "With --thread-model and cores: pauses per second of a busy core that no "
                  "modelled thread causes (interrupts, the hypervisor); 0: none")
      ->capture_default_str();
  cmd->add_option("--pause-ns", s.pause_ns,
                  "With --pause-per-s: the pauses' durations in ns, the quantiles at 0, 0.1, "
                  "0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999 and 1, comma-separated")
      ->delimiter(',');
  cmd->add_option("--preempt-victim", flags.preempt_victim,
                  "With --thread-model: whose core a waking thread takes: longest (the thread "
                  "that has run longest) or waker (the thread whose write woke it)")
      ->capture_default_str();
  cmd->add_flag("--per-core-queues", s.per_core_queues,
                "With --thread-model and --cores: a run queue per core; an idle core takes a "
                "thread waiting on another only once it has been off its core --migrate-ns");
  cmd->add_option("--migrate-ns", s.migrate_ns,
                  "With --per-core-queues: how long a thread's cache stays hot")
      ->capture_default_str();
  cmd->add_flag("!--no-batching", s.batching,
                "With --thread-model: handle and write each item on its own, not per wakeup");
  cmd->add_option("--read-bytes", s.read_bytes,
                  "With --thread-model: bytes a thread reads per wakeup, its batch (0: all "
                  "its socket holds)")
      ->capture_default_str();
  cmd->add_option("--client-call-ns", s.client_call_ns,
                  "With --thread-model: client CPU per call besides crypto")
      ->capture_default_str();
  cmd->add_option("--client-read-ns", s.client_read_ns,
                  "With --thread-model: a client receiver's CPU per read of its socket (per "
                  "batch, whatever it holds)")
      ->capture_default_str();
  cmd->add_option("--server-read-ns", s.server_read_ns,
                  "With --thread-model: a server thread's CPU per read of its socket (per batch)")
      ->capture_default_str();
  cmd->add_option("--seed", s.seed, "Random seed (same seed, same result)")->capture_default_str();
  cmd->add_option("--ops", s.ops, "Stop after this many completed operations")
      ->capture_default_str();
  cmd->add_option("--duration-ns", s.duration_ns, "Also stop at this simulated time (0: no)")
      ->capture_default_str();
}

common::Result<sim::Scenario> ResolveScenario(const ScenarioFlags& flags) {
  sim::Scenario s = flags.s;
  auto reaction = rpc::ParseWindowPolicy(flags.reaction);
  if (!reaction.ok()) return reaction.status();
  s.reaction = *reaction;
  auto op = sim::ParseOp(flags.op);
  if (!op.ok()) return op.status();
  s.op = *op;
  auto jd = sim::ParseDist(flags.jitter_dist);
  if (!jd.ok()) return jd.status().Annotate("jitter-dist");
  s.jitter_dist = *jd;
  auto sd = sim::ParseDist(flags.service_dist);
  if (!sd.ok()) return sd.status().Annotate("service-dist");
  s.service_dist = *sd;
  auto so = sim::ParseServerOrder(flags.server_order);
  if (!so.ok()) return so.status();
  s.server_order = *so;
  auto pv = sim::ParsePreemptVictim(flags.preempt_victim);
  if (!pv.ok()) return pv.status();
  s.preempt_victim = *pv;
  auto sw = sim::ParseSkewWhere(flags.skew_where);
  if (!sw.ok()) return sw.status();
  s.skew_where = *sw;
  common::Status valid = s.Validate();
  if (!valid.ok()) return valid;
  return s;
}

}  // namespace secmode::cli
