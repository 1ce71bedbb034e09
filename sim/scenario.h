// Scenario and ScenarioResult: the input and output of one nconnect run,
// simulated (sim/simulator.h) or measured on real sockets by a load
// generator.
//
// Every Scenario field is something a real load generator (an RPCSEC_GSS
// client with N TCP connections to a real server) can be told to do, so a
// simulated and a measured ScenarioResult of the same Scenario can be
// compared (sim/compare.h). Times are integer nanoseconds; sizes are bytes.
//
// Plain values; Validate() is the one place that says what is allowed, and
// its messages name the parameter ("window: 0, must be at least 1").
#ifndef SECMODE_SIM_SCENARIO_H_
#define SECMODE_SIM_SCENARIO_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "rpc/window_policy.h"

namespace secmode::sim {

enum class Op { kRead, kWrite };  // which direction carries the I/O payload
const char* OpName(Op op);
common::Result<Op> ParseOp(const std::string& name);

// Shape of a random delay around its mean.
enum class Dist { kConstant, kExponential, kLogNormal };
const char* DistName(Dist d);
common::Result<Dist> ParseDist(const std::string& name);

// Where the skew delay of connection `skew_conn` is applied.
enum class SkewWhere {
  kClient,   // the client holds each message of that connection this long
             // after encoding and before writing it to the socket (a delay
             // line: messages stay in order and are pipelined). Re-encode at
             // transmit sees this delay.
  kNetwork,  // added to that connection's one-way client->server delay, after
             // the socket write: re-encode cannot see it.
};
const char* SkewWhereName(SkewWhere w);
common::Result<SkewWhere> ParseSkewWhere(const std::string& name);

// In which order the server looks at calls (and so checks their numbers).
enum class ServerOrder {
  kArrival,     // as they arrive, over all connections (one FIFO to the workers)
  kRoundRobin,  // each connection queues its own calls; a free worker takes the
                // next call of the next connection in turn and checks it then
                // (how Linux nfsd serves transports)
};
const char* ServerOrderName(ServerOrder o);
common::Result<ServerOrder> ParseServerOrder(const std::string& name);

// Thread model: which running thread a waking thread takes the core of.
enum class PreemptVictim {
  kLongest,  // the one that has run longest since it got its core (with
             // per_core_queues: the one running on the core it waits on)
  kWaker,    // the thread whose write woke it, if it still runs (on loopback
             // Linux wakes the reader in the writer's send() and prefers the
             // writer's CPU for it, so only the writer can lose its core);
             // a wakeup from outside the threads preempts nobody
};
const char* PreemptVictimName(PreemptVictim v);
common::Result<PreemptVictim> ParsePreemptVictim(const std::string& name);

// Limits Validate() enforces.
inline constexpr int kMaxConnections = 1024;
inline constexpr int64_t kMaxSlots = 1 << 20;
inline constexpr int64_t kMaxWindow = 1 << 20;
inline constexpr int64_t kMaxIoSize = 64ll << 20;
// Buffers a real load generator holds: slots x (request + reply bytes).
inline constexpr int64_t kMaxBufferBytes = 4ll << 30;
inline constexpr int64_t kMaxOps = 50000000;  // latency samples: 8 bytes each
inline constexpr uint32_t kMaxLagCounted = 4096;  // ScenarioResult::sent_lags
// Bytes of RPC + RPCSEC_GSS framing around the payload (record mark, call
// header, credential, verifier, GSS token header and checksum): about what
// a krb5p NFSv4.1 READ/WRITE call or reply carries besides the data.
inline constexpr int64_t kRequestOverhead = 220;
inline constexpr int64_t kReplyOverhead = 140;

struct Scenario {
  // Client.
  int nconnect = 4;                     // TCP connections, requests spread round-robin
  int64_t slots = 64;                   // requests outstanding at once (NFSv4.1 slot table)
  bool per_connection_context = false;  // false: one GSS context (one sequence
                                        // counter) shared by all connections, as Linux does
  bool reencode = false;                // re-number a request at transmit if its number fell
                                        // out of the window since encode (Linux >= ~5.0)
  int64_t spread_cap = 0;               // >0: a new number is only issued while (it - lowest
                                        // outstanding number of its context) < spread_cap
  Op op = Op::kRead;
  int64_t io_size = 65536;
  // Per-message crypto cost of the mode, ns = cost_fixed_ns + cost_ns_per_byte
  // x message bytes, for each of the four legs (client seal of the request,
  // server open, server seal of the reply, client open). Defaults: roughly
  // krb5p with aes256-cts-hmac-sha1-96 on one current x86 core; feed measured
  // values from the micro results.
  double cost_fixed_ns = 1500;
  double cost_ns_per_byte = 1.0;
  int64_t gss_setup_ns = 2000000;  // creating a new context (INIT exchange CPU and KDC)
  // Thread model: the part of gss_setup_ns that is CPU (both ends' GSS
  // work), spent on a core by the receiver thread that re-creates the
  // context before it waits off its core for the rest; 0: all of it is
  // waiting.
  int64_t gss_setup_cpu_ns = 0;
  int64_t retransmit_timeout_ns = 60000000000;  // Linux TCP timeo=600 (60 s)
  int64_t reconnect_ns = 0;                     // extra time to reconnect beyond one RTT handshake
  // Thread model: the part of reconnect_ns that is CPU (connect, accept, the
  // new server thread, the old connection's end), spent on a core by the
  // receiver that reconnects while the reconnect's time runs (the
  // connection is back one round trip plus reconnect_ns after the close was
  // read; the receiver numbers the resends once it has also spent this CPU);
  // 0: all waiting. This is the client's part (its receiver's own CPU).
  int64_t reconnect_cpu_ns = 0;
  // Thread model: the server's part of a reconnect's CPU (accepting the new
  // connection, starting its thread, ending the old one's), spent on a core
  // by that connection's server thread from the moment the reconnect
  // reaches the server (half a round trip after the client's receiver read
  // the close), before it reads a call of the new connection; 0: none.
  int64_t reconnect_server_cpu_ns = 0;
  // Send every resend (after a reconnect, an error reply or a timeout) on the
  // next connection round-robin, as new calls go (what secmode's own load
  // generator, rpc/load.h, does), instead of on the call's own connection
  // (Linux: a task stays on its transport). Default false.
  bool resend_any_connection = false;
  // Thread model: the receivers waiting for a re-created context go on one
  // at a time, as the waiters of a mutex do (secmode's load generator
  // re-creates a context under that context's std::mutex, rpc/load.cc):
  // the receiver that made the context wakes one waiter once it runs again,
  // and each woken waiter wakes the next once it has a core (it takes the
  // lock, finds the new context and releases the lock, and a release wakes
  // one waiter). False: every waiter wakes at once (a wait queue woken as a
  // whole, as the Linux client's tasks waiting for a credential are).
  bool context_lock_wakes_one = false;

  // Network, per connection and direction.
  double bandwidth_bytes_per_s = 1.25e9;  // 10 Gbit/s
  int64_t rtt_ns = 200000;                // base round trip (two one-way delays)
  Dist jitter_dist = Dist::kExponential;  // one-way extra delay on top of rtt/2
  int64_t jitter_ns = 10000;              // its mean
  double jitter_sigma = 1.0;              // lognormal shape
  int skew_conn = 0;                      // the connection that lags
  int64_t skew_ns = 0;                    // how much (0: no skew)
  SkewWhere skew_where = SkewWhere::kClient;

  // Server.
  int64_t window = 128;  // RPCSEC_GSS sequence window
  // What the server does with a call below its window (rpc/window_policy.h);
  // the default is what Linux nfsd does in practice.
  rpc::WindowPolicy reaction = rpc::WindowPolicy::kDropDisconnect;
  int server_threads = 8;  // nfsd default
  ServerOrder server_order = ServerOrder::kArrival;
  Dist service_dist = Dist::kExponential;
  int64_t service_ns = 20000;  // mean service time besides crypto
  double service_sigma = 1.0;

  // Threads and cores (off by default: the model above, with no client CPU
  // and `server_threads` workers). With thread_model on, the client has one
  // receiver thread per connection and the server one thread per connection,
  // as secmode's load generator and TCP server do (and, in their kernel
  // form, the Linux client's transports and nfsd). A thread handles what its
  // socket holds when it gets a core as one batch: a client receiver opens
  // each reply, then numbers and seals that slot's next call, and writes the
  // calls of its batch when the batch ends; a server thread checks each call
  // when it gets to it and writes the replies of its batch when the batch
  // ends. Threads run on `cores` cores shared by client and server under a
  // round-robin scheduler with time slices of `slice_ns`: a thread that has
  // used its slice while others wait goes to the back of the queue, holding
  // whatever it holds. A receiver that reads "context problem" re-creates
  // the context (off its core for one round trip plus gss_setup_ns) unless
  // another already does, and every receiver that needs a number meanwhile
  // waits off its core; then they number the resends in their batches.
  // Timeouts and the first call of each slot are numbered outside the
  // threads.
  bool thread_model = false;
  int cores = 0;               // 0: a core for every thread (no descheduling)
  int64_t slice_ns = 3000000;  // the scheduler's time slice
  // A thread that wakes with no core free takes the core of its victim
  // (preempt_victim; with per_core_queues, kLongest means the thread running
  // on the core it waits on) if that has run at least this long (wakeup
  // preemption); 0: woken threads wait for a slice to end.
  int64_t wakeup_preempt_ns = 0;
  // With cores: a thread woken onto an idle core starts this long after its
  // wakeup, the core idle meanwhile (a halted vCPU woken by an IPI, a core
  // leaving a C-state); 0: at once. harness::ProbeIdleWakeCurve measures it.
  int64_t idle_wake_ns = 0;
  // With per_core_queues: the idle core's wakeup by how long it has been
  // idle instead (one that idled briefly still polls and wakes sooner):
  // after idle_wake_after_ns[i] of idle it takes idle_wake_curve_ns[i],
  // linear in between, the first and last values beyond the ends. Both
  // empty: idle_wake_ns whatever the idle time.
  std::vector<int64_t> idle_wake_after_ns;
  std::vector<int64_t> idle_wake_curve_ns;
  // With cores and wakeup preemption: a woken thread's preemption of a busy
  // core lands this long after its wakeup (the IPI to that core, the
  // scheduler's decision there, the switch), drawn from these quantiles at
  // kPauseProbs, linear in between; the victim runs on meanwhile, and if it
  // has left the core by then, nothing is preempted. Empty: at the wakeup.
  // harness::ProbeCoreWake (busy) measures it.
  std::vector<int64_t> busy_wake_ns;
  // With a client-side skew: the skewed connection's calls are written by a
  // delay-line thread of their own, each on its own when it is due, at this
  // CPU per call (secmode's load generator does so); the thread competes for
  // the cores like the others. 0: the delay line has no thread and costs
  // nothing.
  int64_t skew_sender_ns = 0;
  // With cores: pauses of a busy core that no thread of the model causes
  // (interrupts, the timer tick, the hypervisor taking a vCPU, other
  // processes). A core that runs a thread is paused pause_per_s times per
  // second on average (a Poisson process); the thread on it makes no
  // progress and cannot be preempted for the pause's duration, drawn from
  // pause_ns: its quantiles at kPauseProbs, linear in between.
  // harness::ProbePauses measures both. 0: no pauses.
  double pause_per_s = 0;
  std::vector<int64_t> pause_ns;
  PreemptVictim preempt_victim = PreemptVictim::kLongest;
  // With cores: each core queues its own threads (as Linux does per CPU)
  // instead of one queue for all. A woken thread takes an idle core if
  // there is one, else waits on its last core and may preempt the thread
  // running there; a thread descheduled waits on its core; an idle core
  // takes a waiting thread from another core only once that thread has
  // been off its core migrate_ns (its cache gone cold), so a core can idle
  // while threads wait elsewhere.
  bool per_core_queues = false;
  // With cores: the share of wakeups after which the woken thread waits
  // ahead of the threads descheduled with work left (behind other woken
  // ones), as a scheduler that credits sleepers places it; the others, and
  // every descheduled thread, wait at the back. 0: every waiting thread in
  // order of arrival. harness::ProbeWakeOrder measures it.
  double woken_first_share = 0;
  int64_t migrate_ns = 500000;  // Linux's sched_migration_cost default
  bool batching = true;         // false: each item handled and written on its own
  // Bytes a thread reads from its socket per wakeup: a batch is the messages
  // that fit (at least one); 0: everything the socket holds. Resends a
  // receiver numbers after a reconnect are not read and always join.
  int64_t read_bytes = 0;
  int64_t client_call_ns = 0;  // client CPU per call besides crypto
  // CPU a thread spends per read of its socket, whatever the read holds
  // (the recv() and the send() of the batch's answers, the wakeup, the
  // switch to and from the thread): a client receiver's and a server
  // thread's. With batching this is paid once per batch, so a call costs
  // more when fewer calls are outstanding (each read then holds fewer); 0:
  // none, every cost is per call.
  int64_t client_read_ns = 0;
  int64_t server_read_ns = 0;

  // Run.
  uint64_t seed = 1;
  int64_t ops = 20000;      // stop after this many completed operations
  int64_t duration_ns = 0;  // >0: also stop at this simulated time

  // Bytes on the wire of one call / one reply (payload plus overhead).
  int64_t RequestBytes() const;
  int64_t ReplyBytes() const;
  // Crypto cost in ns of sealing or opening one message of `bytes`.
  int64_t CostNs(int64_t bytes) const;

  common::Status Validate() const;
  nlohmann::json ToJson() const;
};

// The default scenario with every mechanism of the thread model on (receiver
// and server threads, per-wakeup batches of one 64 KiB read, two cores with a
// run queue each, a time slice, wakeup preemption, idle-core wakeups and
// core pauses, client CPU per call and per socket read, a re-created context's waiters
// woken one after another): with the default Scenario, the two the
// simulator's speed is stated for (sim_bench, `secmode run`).
Scenario EveryMechanismScenario();

// Parses what ToJson wrote (missing keys keep their defaults), then validates.
common::Result<Scenario> ScenarioFromJson(const nlohmann::json& j);

// The probabilities Scenario::pause_ns gives the quantiles of, from the
// shortest pause (0) to the longest (1).
inline constexpr double kPauseProbs[] = {0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1};
inline constexpr size_t kPauseQuantiles = sizeof(kPauseProbs) / sizeof(kPauseProbs[0]);
inline constexpr size_t kPauseMedian = 3;
static_assert(kPauseProbs[kPauseMedian] == 0.5);

struct ScenarioResult {
  uint64_t seed = 0;
  int64_t completed = 0;   // operations completed (counted)
  int64_t elapsed_ns = 0;  // time to complete them
  double ops_per_s = 0;    // goodput
  double mb_per_s = 0;     // goodput in payload MB (1e6 bytes) per second
  int64_t violations = 0;  // requests below the server's window
  int64_t drops = 0;       // requests the server discarded or lost without reply
  int64_t disconnects = 0;
  int64_t context_recreations = 0;
  int64_t error_replies = 0;    // calls answered "context problem"
  int64_t retransmissions = 0;  // calls sent again after having been sent once
  int64_t retransmitted_bytes = 0;
  int64_t reencodes = 0;   // re-numbered at transmit (Scenario::reencode)
  int64_t max_spread = 0;  // largest (highest seen - arriving number) at the server
  // Each call's lag, how far its number was below the highest of its context
  // before it (RFC 2203 5.3.3.1; a window of W drops the calls whose lag is
  // W or more): as the client transmitted it (every transmission, in the
  // order of sending, what a capture on the client shows) and as the server
  // checked it (after its threads' reordering). Counts by lag, the last
  // index kMaxLagCounted counting that lag or more. In memory only: ToJson
  // leaves them out (a sweep holds thousands of results).
  std::vector<int64_t> sent_lags, checked_lags;
  int64_t p50_ns = 0, p99_ns = 0, p999_ns = 0;  // per-operation latency, issue to completion
  double stalled_fraction = 0;                  // share of time every outstanding request was
                                                // waiting on a timeout, reconnect or new context
  int64_t events = 0;                           // simulator events processed (0 when measured)
  int64_t preemptions = 0;                      // thread model: threads descheduled with work left
  // Thread model: socket reads (batches) by the client's receivers and the
  // server's threads. Measured: the recv() calls that returned bytes. 0:
  // unknown or no thread model.
  int64_t client_reads = 0, server_reads = 0;
  // Thread model with cores: how often the client's receivers and the
  // server's threads went to sleep (left their core with nothing to do),
  // how often they were given a core, and how long in all they waited
  // runnable for one (woken or descheduled, until they ran; a thread woken
  // onto an idle core does not wait). Measured: the threads' voluntary
  // context switches (getrusage) and the scheduler's schedstat (times run,
  // run-queue wait). 0: unknown or no thread model.
  int64_t client_sleeps = 0, server_sleeps = 0;
  int64_t client_runs = 0, server_runs = 0;
  int64_t client_wait_ns = 0, server_wait_ns = 0;
  // Thread model with cores: the share of the cores' time no thread ran
  // (a core paused under a thread counts as busy, as the machine's own
  // accounting counts interrupts and steal). Measured: the machine's idle
  // share over the run (/proc/stat). -1: unknown.
  double idle_fraction = -1;
  // Measured only: the share of the machine's CPU time the hypervisor took
  // during the run (steal, /proc/stat); the model has no such thing. -1:
  // unknown or simulated.
  double steal_fraction = -1;
  // Thread model: the path of every checked call in the stages of
  // suite/nconnect_attribution.h (encode: numbered to sealed; hold: sealed to
  // written, the receiver's batch or the skew delay line; socket: written to
  // read by the server's thread; check: read to checked), median and p99 in
  // ns, and how many violations each stage caused (the stage whose time
  // exceeds its median the most). Empty without the thread model.
  int64_t stage_p50_ns[4] = {0, 0, 0, 0};
  int64_t stage_p99_ns[4] = {0, 0, 0, 0};
  int64_t violation_stage[4] = {0, 0, 0, 0};
  // Thread model: how long the simulated run's reconnects and context
  // re-creations took, in the steps the traced real runs are cut into
  // (suite/nconnect_attribution.h): the server's close to the receiver's
  // reading the end of the stream ("close -> eof"), that to the lost calls
  // numbered and written again ("eof -> resent"), and a re-creation from the
  // receiver beginning it to the new context ("began -> done"), and from the
  // new context to each client receiver's first call numbered under it
  // ("done -> each receiver's first call", every receiver that numbers one
  // before the context is re-created again). Median and p90 in ns; count 0
  // when the run had none.
  struct Step {
    int64_t count = 0, p50_ns = 0, p90_ns = 0;
  };
  Step close_to_eof, eof_to_resent, recreation, resume;
  bool truncated = false;  // the simulator's event budget ran out before
                           // `ops` completed (a thrashing scenario); the
                           // figures cover the simulated time until then

  nlohmann::json ToJson() const;
};

common::Result<ScenarioResult> ScenarioResultFromJson(const nlohmann::json& j);

// Calls of a lag histogram (ScenarioResult::sent_lags) at `lag` or more: the
// calls a window of `lag` would have dropped. And the lag at quantile q in
// [0, 1] (nearest rank; 0 when empty).
int64_t CallsAtLeast(const std::vector<int64_t>& lags, uint32_t lag);
uint32_t LagQuantile(const std::vector<int64_t>& lags, double q);

}  // namespace secmode::sim

#endif  // SECMODE_SIM_SCENARIO_H_
