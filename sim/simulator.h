// Simulate: the nconnect sequence-window simulator. One client, one server,
// discrete events (sim/event_queue.h), deterministic per Scenario::seed. Each
// direction of each connection draws its one-way delays from its own stream
// (derived from the seed), in the order its messages leave: a change
// elsewhere in the model (another mechanism switched on, an event more or
// less) does not shift every link's delays, so two scenarios that differ in
// one knob differ by that knob, not by a reshuffled network.
//
// The model, in the order a request lives through it:
//  - The client keeps Scenario::slots requests outstanding. Each new request
//    goes to the next connection round-robin and is encoded: it takes its
//    sequence number from its context's counter when encoding starts (one
//    counter shared by all connections, or one per connection), and the
//    encoding takes the mode's seal cost. Encoding runs on the issuing
//    thread, so encodes of different requests overlap (no client CPU limit).
//  - Each connection has a FIFO send queue and its own bandwidth, so a
//    message waits for the ones ahead of it to be serialised (large WRITEs
//    delay the small calls behind them). When a message leaves follows
//    from when the one ahead of it left, so it is computed as the
//    transmission starts and only the arrival is an event (a close by the
//    server cuts a call still being transmitted: it never arrives). With re-encode on, a request whose
//    number is `window` or more below the highest number its context has
//    transmitted is given a new number (and pays the seal cost again) when it
//    reaches the socket, as Linux does since about v5.0.
//  - One-way network delay = rtt/2 + jitter (constant, exponential or
//    lognormal); TCP keeps each connection's messages in order. The skew
//    delays one connection's messages, before the socket (client) or on the
//    wire (network).
//  - The server checks the number against its window (RFC 2203 section
//    5.3.3.1; sim/server_window.h, the RPC server's own code) when the call
//    arrives (ServerOrder::kArrival; accepted calls then wait FIFO for a
//    worker) or when a worker takes it from its connection's queue,
//    connections served in turn (ServerOrder::kRoundRobin), and reacts to a
//    number below the window as Scenario::reaction says. A worker spends open
//    cost + service time + seal cost on an accepted call. The reply goes back
//    on the same connection (same queue/bandwidth model) and the client opens
//    it.
//  - Client reactions: a call the server dropped is retransmitted after
//    retransmit_timeout_ns with a new number; a closed connection is noticed
//    once the replies the server wrote before it closed have arrived (TCP
//    delivers them before the end of the stream; one one-way delay at the
//    least), reconnected after one RTT (+ reconnect_ns), and everything
//    still outstanding on it is re-encoded and resent; a discarded
//    context is noticed from the first "context problem" reply, re-created in
//    one RTT + gss_setup_ns (no new numbers are issued meanwhile), and every
//    request sent under the old context and not yet answered is resent.
//  - Every transmission of a call carries a fresh sequence number (a replay
//    of the same number would be discarded by RFC 2203's replay check).
//
// With Scenario::thread_model the client's and the server's CPU work runs on
// threads instead: each connection has a client receiver thread (opens its
// replies, numbers and seals each slot's next call right after, and writes
// the calls of one batch when the batch ends) and a server thread (checks
// each call's number when it gets to it in its batch, opens, serves, seals,
// and writes the batch's replies when it ends). A thread takes what its
// socket holds when it gets a core, up to Scenario::read_bytes (per-wakeup
// batching, one read), and spends a read's CPU once for the whole batch
// (client_read_ns, server_read_ns: the recv, the batch's send, the wakeup),
// after the batch's items and before its writes,
// so a call costs more CPU when fewer are outstanding. Threads share
// Scenario::cores under a round-robin scheduler: a thread that has used its
// slice while others wait is descheduled, and a thread that wakes with no
// core free takes one from the thread that has run longest since it got
// its core, once that has run wakeup_preempt_ns, busy_wake_ns after the
// wakeup if that thread still runs then; woken_first_share of the woken
// threads wait ahead of those descheduled with work left (with
// per_core_queues: each
// core queues its own threads, a woken thread takes an idle core or waits on
// its last one and may preempt the thread running there, and an idle core
// takes a thread waiting on another only once that thread's cache is cold,
// migrate_ns after it left its core; a thread woken onto an idle core starts
// idle_wake_ns later, the core idle meanwhile). A busy core is also paused
// now and then by what no modelled thread does (interrupts, the hypervisor:
// pause_per_s, pause_ns); the thread on it stops for the pause's length. A
// descheduled or paused thread keeps what it holds: the calls it numbered
// and has not written, the calls in its socket. Those are the mechanisms
// behind the violations the real client and server show
// (suite/nconnect_attribution.h); each can be switched off (batching,
// wakeup_preempt_ns = 0, busy_wake_ns empty, idle_wake_ns = 0, pause_per_s = 0, cores = 0,
// client_read_ns = server_read_ns = 0).
//
// Thread-safe in the sense that concurrent calls share nothing.
#ifndef SECMODE_SIM_SIMULATOR_H_
#define SECMODE_SIM_SIMULATOR_H_

#include "common/status.h"
#include "sim/scenario.h"

namespace secmode::sim {

// Validates the scenario, then runs it. Fails only on invalid parameters, or
// when the model runs out of events or its scheduler's state breaks (a thread
// leaving a core it does not hold, an event due before the time it has reached): bugs, reported as kInternal. A run that exceeds its event
// budget (a thrashing scenario) returns what it did, marked `truncated`.
common::Result<ScenarioResult> Simulate(const Scenario& scenario);

}  // namespace secmode::sim

#endif  // SECMODE_SIM_SIMULATOR_H_
