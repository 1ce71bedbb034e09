// RunLoad: the `secmode load` generator as a library function. It opens
// `connections` TCP connections to an RPC server (nconnect) and keeps
// `slots` NFSv4.1-shaped COMPOUND calls outstanding, spread round-robin over
// the connections, each slot issuing its next call when its reply arrives.
//
// Security: `sys` (AUTH_SYS) or RPCSEC_GSS `krb5` / `krb5i` / `krb5p` with one
// context and one sequence counter shared by all connections (the Linux
// client's behaviour) or one context per connection.
//
// What happens around the sequence window is modelled as real clients do:
//  - timeout: a call without reply after timeout_ms is retransmitted with a
//    new sequence number (RFC 2203 5.3.3.1: a server silently drops
//    out-of-window calls);
//  - disconnect: when the server closes a connection the client reconnects
//    and retransmits what was outstanding on it; at once after a connection
//    that answered calls, with a growing wait (1 ms doubling up to 1 s,
//    jittered) after one that answered none (a server at its connection
//    cap accepts and closes at once), unless reconnect_backoff is off;
//  - RPCSEC_GSS_CREDPROBLEM / CTXPROBLEM: the context is re-created (over a
//    separate short connection) and the call resent under the new one, as
//    every call still in flight under the old one will be;
//  - reencode (optional): just before a call is transmitted, if its sequence
//    number is already `window` or more below the highest one transmitted,
//    it is re-encoded with a fresh number (Linux since about v5.0).
// skew_connection / skew_delay_us delay every send on one connection (the
// nconnect simulator's validation uses this to push numbers out of window).
// delay_us holds every call on every connection that long before it is
// written: a one-way network delay from client to server, emulated (the
// lab's RTT, lab/README.md, where the kernel has no netem). The calls due
// at one wakeup of a connection's delay line go out with one send; the
// latency reported includes the delay. TCP itself does not see it: its
// window and congestion control run at the real link's round trip.
//
// Nothing waits without a limit: each TCP connect, each RPCSEC_GSS_INIT /
// CONTINUE_INIT round trip and the whole run have deadlines, and an error
// names what was being waited for. A run fails (an error, with what was
// measured until then in *measured) when a connection the server closed
// cannot be re-established (the server died), when a context the server
// dropped cannot be re-created, when the run's deadline passes, or when the
// server answered no call at all (a wedged server). At the end every
// RPCSEC_GSS context the run holds (shared or per connection, re-created
// ones included; the ones the server already discarded are gone) is ended
// with RPCSEC_GSS_DESTROY (RFC 2203 5.4), best effort within
// destroy_timeout_ms, so runs do not fill the server's context table.
// None of this adds a system call or a lock to the per-call path.
//
// Thread safety: RunLoad is reentrant; it blocks for the run's duration.
#ifndef SECMODE_RPC_LOAD_H_
#define SECMODE_RPC_LOAD_H_

#include <cstdint>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/machine.h"
#include "common/socket.h"
#include "common/status.h"
#include "gss/protector.h"
#include "rpc/call_trace.h"
#include "rpc/client_auth.h"
#include "rpc/nfs.h"
#include "rpc/nfs41.h"
#include "rpc/record.h"

namespace secmode::rpc {

inline constexpr double kLoadDeadlineMarginSeconds = 30;
inline constexpr double kLoadDeadlinePerContextSeconds = 0.1;

struct LoadOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  Security security = Security::kSys;
  gss::Engine engine = gss::Engine::kMit;
  int32_t enctype = 0;  // 0 = whatever the KDC picks
  std::string ccache;   // "" = default ccache
  std::string target = "nfs@localhost";
  int connections = 4;
  bool context_per_connection = false;
  int slots = 64;  // outstanding calls
  NfsOp op = NfsOp::kGetattr;
  uint32_t size = 4096;  // READ/WRITE bytes
  double seconds = 2.0;  // measured time (after warm-up)
  double warmup_seconds = 0.2;
  uint64_t max_ops = 0;  // stop after this many measured ops (0 = time only)
  // Slow rows (krb5p at 1 MiB) may complete nothing in `seconds`: keep
  // measuring until at least min_ops completed, for at most max_seconds.
  uint64_t min_ops = 0;
  double max_seconds = 0;  // 0 = seconds
  bool reencode = false;
  // Reconnects after a connection that answered nothing wait (1 ms doubling
  // up to 1 s, jittered). Off, every reconnect goes at once, as the nconnect
  // simulator's client does: its validation turns it off, since a lagging
  // connection that a drop-disconnect server closes before it answers is
  // what it measures, not a server at its connection cap.
  bool reconnect_backoff = true;
  int timeout_ms = 1000;
  int skew_connection = -1;  // connection index whose sends are delayed
  uint32_t skew_delay_us = 0;
  uint32_t delay_us = 0;  // every call, every connection (emulated one-way delay)
  size_t max_record = kDefaultMaxRecord;
  // Deadlines in ms (0 = none): each TCP connect (the run's connections,
  // reconnects, the short connections of context creation and DESTROY) and
  // each RPCSEC_GSS_INIT / CONTINUE_INIT round trip.
  int connect_timeout_ms = 5000;
  int init_timeout_ms = 10000;
  // The whole run, from RunLoad's start, in seconds; 0 = the warm-up and
  // max(seconds, max_seconds) plus kLoadDeadlineMarginSeconds plus
  // kLoadDeadlinePerContextSeconds for each context to create. Must not be
  // shorter than the warm-up and `seconds`.
  double deadline_seconds = 0;
  // Time for the RPCSEC_GSS_DESTROY calls at the end (best effort; 0 =
  // leave the contexts on the server).
  int destroy_timeout_ms = 5000;
  // Records every transmission (rpc/call_trace.h); must outlive the run.
  CallTrace* trace = nullptr;
  // Any NFSv4.1 server instead of secmode's own (whose COMPOUNDs need no
  // set-up): first a session is created and the files looked up
  // (rpc/nfs41.h) over a connection of its own with the run's security
  // (the first context); `slots` must not exceed the slots it grants. At
  // the end the session and the client ID are destroyed.
  bool nfs41 = false;
  Nfs41Options nfs41_options;
};

struct LoadReport {
  std::string mode, op;
  uint32_t size = 0;
  int connections = 0, slots = 0;
  bool shared_context = true;
  double seconds = 0;
  uint64_t ops = 0;
  double ops_per_second = 0, mb_per_second = 0;  // MB = 1e6 bytes of READ/WRITE data
  double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0;
  uint64_t retransmits = 0;          // calls sent again (any reason)
  uint64_t timeouts = 0;             // calls that got no reply in time (window drops)
  uint64_t disconnects = 0;          // connections the server closed (each reconnected to)
  uint64_t context_recreations = 0;  // after CREDPROBLEM / CTXPROBLEM
  uint64_t reencodes = 0;            // re-encoded before transmission
  uint64_t stale_replies = 0;        // replies to calls already resent
  uint64_t errors = 0;               // replies that failed a check
  // Reconnects a second over the run's wall time (from the first calls,
  // warm-up included), and the time the connections waited before them
  // (summed over the connections): after a connection that answered
  // nothing, each reconnect waits twice as long as the last, from 1 ms up to
  // 1 s, jittered (common/backoff.h); after one that answered, none.
  double reconnects_per_second = 0, reconnect_wait_seconds = 0;
  std::string first_error;
  // How one context's crypto ran on the connections' threads: "parallel",
  // "serialised" or "none" (ClientAuth::crypto_threads).
  std::string crypto_threads = "none";
  // What the receiver threads used over the whole run (warm-up included):
  // their CPU time (opening replies and numbering, sealing and sending the
  // next calls), their sleeps (blocked, on their socket mostly, or a lock)
  // and preemptions, their time runnable but waiting for a CPU, and the
  // times they were given one (the last two 0 where schedstat is unknown).
  common::ThreadUsage receivers;
  // The receivers' recv() calls that returned bytes, over the same time: the
  // wakeups the CPU above was spent in (a read's replies are handled and
  // the next calls sent as one batch).
  uint64_t receiver_reads = 0;
  // The machine's share of CPU time idle during the measured time, from
  // /proc/stat (clock ticks, usually 10 ms each: coarse for short runs);
  // -1 when unknown.
  double idle_fraction = -1;
  // Of that CPU time, the share the hypervisor took (steal): time the
  // machine's vCPUs did not run at all. -1 when unknown. Its parts in CPU
  // seconds (common::StealShare) in `steal`, to add up over runs.
  double steal_fraction = -1;
  common::CpuShare steal;
  // Of that CPU time, what other processes (and kernel threads) ran: the
  // machine's task time less this process's own (common::OthersShare), in
  // CPU seconds, to add up over runs; its Fraction() is the share (-1
  // unknown). A server in another process counts among them.
  common::CpuShare others;
  // The delay-line threads (delay_us, or the skewed connection's) over the
  // whole run: their CPU time and the calls they wrote when due.
  uint64_t sender_cpu_ns = 0, sender_calls = 0;
  // RPCSEC_GSS contexts ended with DESTROY at the end, those the server had
  // already forgotten (DESTROY denied with CREDPROBLEM/CTXPROBLEM: discarded
  // or evicted after the client's last reply), those left on the server (not
  // answered in time, refused, or destroy_timeout_ms 0), and why the first
  // one was left.
  uint64_t contexts_destroyed = 0, contexts_gone = 0, contexts_left = 0;
  std::string destroy_error;
  // With nfs41: the server's implementation id, the session's slots, and
  // why the session could not be ended ("" = it was).
  std::string nfs41_server;
  uint32_t session_slots = 0;
  std::string session_close_error;
};

// On a failure after calls were sent, `*measured` (when given) receives
// the report of what completed before it; the error says what failed
// (which connection, what the server did, what was waited for).
common::Result<LoadReport> RunLoad(const LoadOptions& options,
                                   std::optional<LoadReport>* measured = nullptr);

// Creating one RPCSEC_GSS context as RunLoad does when the server answers
// "context problem" (a short connection and the INIT exchange, on the
// caller's thread): the median wall time of `rounds`, and the median CPU
// time this process spent meanwhile (the client's GSS work, and the
// server's when it runs in this process, as LocalServer does), in ns.
// Each context is destroyed again after it was timed. options.security
// must be an RPCSEC_GSS one (not kSys).
struct ContextCreationTime {
  int64_t wall_ns = 0;
  int64_t cpu_ns = 0;
};
common::Result<ContextCreationTime> TimeContextCreation(const LoadOptions& options, int rounds);

// One call (a whole RPC message, without its record mark) and the record of
// its reply, blocking, on connected socket `fd`. With a deadline, a reply
// (or room to send) that does not come in time is an error "no <what>
// within N ms".
common::Result<common::Bytes> BlockingCall(int fd, common::ByteView call,
                                           common::Deadline deadline = {},
                                           const std::string& what = "reply");

// The same on a fresh connection to host:port, closed afterwards (context
// creation; the cost of a reconnect). `connect` bounds the TCP handshake,
// `reply` the rest.
common::Result<common::Bytes> BlockingRoundTrip(const std::string& host, uint16_t port,
                                                common::ByteView call,
                                                common::Deadline connect = {},
                                                common::Deadline reply = {});

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_LOAD_H_
