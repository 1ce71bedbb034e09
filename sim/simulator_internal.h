// The simulator's state and the declarations of its parts (internal to
// sim/: see simulator.h for the model). One class, `Sim`, defined in three
// files: simulator.cc (the calls' path through the client, the network and
// the server, and the event loop), simulator_threads.cc (the thread model:
// threads, cores, ticks, preemption, wakeups) and simulator_stats.cc (the
// end-of-run statistics). Not thread-safe: one Sim runs one scenario on one
// thread.
#ifndef SECMODE_SIM_SIMULATOR_INTERNAL_H_
#define SECMODE_SIM_SIMULATOR_INTERNAL_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "sim/event_queue.h"
#include "sim/order_statistics.h"
#include "sim/random.h"
#include "sim/ring_queue.h"
#include "sim/scenario.h"
#include "sim/server_window.h"

namespace secmode::sim::detail {

using common::Result;
using common::Status;

constexpr double kMaxSampleNs = 1e15;
constexpr size_t kMaxStageSamples = 1u << 20;
constexpr int64_t kMaxSimNs = int64_t{1} << 60;

// A run processes at most kBudgetBase + kBudgetPerOp x ops events (see Run),
// and never more than kMaxBudget: a scenario that thrashes returns what it
// did, marked `truncated`. An arrival that waits on a busy thread's wire
// counts once the thread reads it, so such a run may go a few events past
// the budget.
constexpr int64_t kBudgetBase = 100000;
constexpr int64_t kBudgetPerOp = 25;
// The thread model spends more events per call (a thread's run segments)
// and reproduces collapses in which every call is sent many times over, so
// it gets a larger budget.
constexpr int64_t kThreadBudgetPerOp = 200;
constexpr int64_t kMaxBudget = int64_t{1} << 31;  // minutes of CPU
// The numbers a context issues are bounded on their own: once one has
// issued kMaxSeqIssued, the run ends (truncated) after the event that
// issued it, which issues at most a number per slot and a re-numbered call
// per connection more. So no number reaches RFC 2203's MAXSEQ, and
// ServerWindow's conversion to a 32-bit seq_num cannot wrap.
constexpr uint64_t kMaxSeqIssued = uint64_t{rpc::kMaxGssSeq} - 4 * uint64_t{kMaxSlots};

enum Kind : uint32_t {
  kEncodeDone,         // target slot, tag attempt
  kTxReady,            // target conn, tag epoch: the call at the head of its send queue may go now
  kArrive,             // target slot, tag attempt: the call reached the server
  kServiceDone,        // target slot, tag attempt: a worker finished it
  kComplete,           // target slot, tag attempt: the client opened the reply
  kTimeout,            // target slot, tag attempt
  kDisconnectNoticed,  // target conn, tag epoch
  kReconnected,        // target conn, tag epoch
  kContextReady,       // target context, tag generation
  kThreadTick,         // target thread, tag epoch: thread model, a thread's run segment ended
  kCorePull,           // target core, tag idle epoch: an idle core looks for work again
  kThreadStart,        // target thread, tag epoch: a thread woken onto an idle core starts
  kSendDue,            // target slot, tag attempt: a skew-held call is due (delay-line thread)
  kEofArrive,          // target conn, tag epoch: the server's close reached the client
  kAcceptArrive,       // target conn, tag epoch: the client's reconnect reached the server
  kPreemptDue,         // target thread, tag wake: a woken thread's preemption of a busy core lands
  kLockHandoff,        // target context, tag generation: a woken waiter runs; the next one wakes
  kWireArrive,         // target thread: thread model, the first message on the way to an idle
                       // thread reaches it (SimThread::wire)
};

// Where a slot's current request is.
enum class State : uint8_t {
  kEncoding,  // EncodeDone pending
  kGated,     // waiting for a number (context being re-created or spread cap)
  kQueued,    // in its connection's send queue
  kInFlight,  // sent; on the wire, at the server or on the way back
  kLost,      // the server discarded it; only the timeout will resend it
  kWaitConn,  // its connection is down; resent on reconnect
  kWaitCtx,   // its context is being re-created; resent when ready
};

struct Slot {
  int64_t issue_ns = 0;
  int64_t tx_done_ns = 0;
  uint64_t seq = 0;
  uint32_t attempt = 0;
  uint32_t gen = 0;  // context generation the number belongs to
  int conn = 0;
  State state = State::kEncoding;
  bool holds_seq = false;
  bool sent = false;         // transmitted at least once for this operation
  bool error_reply = false;  // the pending reply is "context problem"
  bool blocked = false;      // counted in Sim::blocked_
  // The order of an arrival event of a transmission the server's close cut
  // short (it never arrives).
  uint64_t cancelled_arrive = ~uint64_t{0};
  // Thread model: when the current call was numbered, sealed and written,
  // and the thread that wrote it (-1: written outside the threads).
  int64_t numbered_ns = 0, sealed_ns = 0, written_ns = 0;
  int64_t read_ns = 0;  // when a server thread read the current call
  int writer = -1;
};

struct QueueItem {
  uint32_t slot;
  uint32_t attempt;
  int64_t eligible_ns;
};

// Seeds of the streams derived from a scenario's seed (Scenario::seed): `n`
// numbers each stream apart by splitmix64.
inline uint64_t StreamSeed(uint64_t seed, uint64_t n) {
  uint64_t state = seed ^ (0xd1b54a32d192ed03ULL * (n + 1));
  return SplitMix64(state);
}

struct Conn {
  // The connection's one-way delays, each direction its own random stream
  // (drawn in the order its messages leave, whatever else the run draws).
  Rng to_server{0}, to_client{0};
  uint32_t epoch = 0;
  bool up = true;
  // Each direction is a FIFO with a fixed serialisation time per message,
  // so when a message leaves follows from when the one ahead of it left:
  // it is sent on its way (its arrival an event) when its transmission
  // starts, with no event for its end.
  int64_t tx_free_at = 0;      // when the call being transmitted has left
  uint64_t tx_free_order = 0;  // the event order its end would have had
  // A kTxReady is due for the call at the head of sendq. There is only
  // ever one: the head's time to go only grows (its due time and the link's
  // end do), so it never needs an earlier one.
  bool tx_timer = false;
  // The call being transmitted, and what its transmission changed, undone
  // if the server closes the connection before it has left.
  QueueItem in_tx{};
  bool in_tx_was_sent = false;
  int64_t in_tx_was_done = 0;
  uint64_t in_tx_arrive_order = 0;
  int64_t in_tx_delay = 0;
  // The one-way delay a cut call drew: the next call sent takes it, as it
  // would have drawn it had the cut call never been sent.
  bool has_unused_delay = false;
  int64_t unused_delay = 0;
  int64_t last_arrival = 0;  // TCP order, client -> server
  RingQueue<QueueItem> sendq;
  int64_t reply_free_at = 0;       // when the last reply written has left
  int64_t last_reply_arrival = 0;  // TCP order, server -> client
  // Without the thread model: when each reply written leaves and when the
  // client is done with it, for the replies that may not have left yet.
  RingQueue<std::pair<int64_t, int64_t>> reply_tail;
  RingQueue<QueueItem> serverq;  // ServerOrder::kRoundRobin: calls not yet looked at
  std::vector<int> parked;       // thread model: its receiver, reconnecting
  // Thread model, for ScenarioResult's steps: when the server closed it,
  // when its receiver read the end of the stream, and whether the resends
  // of that reconnect are still to be written.
  int64_t closed_ns = -1, eof_ns = -1;
  bool resend_due = false;
};

struct Context {
  explicit Context(int64_t window) : server(window) {}
  uint32_t gen = 0;
  uint64_t next_seq = 0;
  bool recreating = false;
  bool server_dead = false;  // the server discarded generation `gen`
  ServerWindow server;
  bool xmit_any = false;
  uint64_t seq_xmit = 0;  // highest number transmitted (for re-encode)
  RingQueue<uint32_t> gate;
  // Thread model: client receivers waiting for the new context (the real
  // client's receiver blocks on the context's lock while it is re-created).
  std::vector<int> parked;
  int64_t recreate_began_ns = -1;  // for ScenarioResult::recreation
  // Scenario::context_lock_wakes_one: the receiver re-creating it (-1: none
  // of the threads), and the waiter whose run wakes the next one.
  int creator = -1;
  int handoff_from = -1;
  // When the current generation became ready (-1: being re-created), for
  // ScenarioResult::resume.
  int64_t ready_ns = -1;
  // Numbers issued and not yet released, for the spread cap: held[i] is
  // whether held_base + i is still outstanding.
  RingQueue<uint8_t> held;
  uint64_t held_base = 0;
};

// Thread model (Scenario::thread_model): the work a thread does.
enum class Work : uint8_t {
  kReplyOpen,      // client receiver: open a reply, complete the operation
  kCallSeal,       // client receiver: number and seal a slot's next call
  kServerCall,     // server thread: check a call's number, open, serve, seal the reply
  kSend,           // delay-line thread: write one held call that is due
  kEof,            // client receiver: its connection was closed (slot = conn, attempt = epoch)
  kCreateContext,  // client receiver: the GSS work of a new context (slot = context, attempt = gen)
  kAccept,         // server thread: its part of a reconnect (slot = conn, attempt = epoch)
  kRead,           // client receiver or server thread: the CPU of one read of its socket
};
struct WorkItem {
  uint32_t slot;
  uint32_t attempt;
  Work kind;
  bool error = false;  // kServerCall: answered "context problem"
};

// Thread model: a message on its way to a thread (a call to a server thread,
// a reply to a client receiver), with the key its arrival event would have
// had (SimThread::wire).
struct Arrival {
  int64_t time;
  uint64_t order;
  uint32_t slot;
  uint32_t attempt;
};

struct SimThread {
  // kParked: off its core until its context has been re-created; what
  // arrives meanwhile waits in its inbox. kWaking: woken onto an idle core
  // that has not started it yet (Scenario::idle_wake_ns).
  enum class St : uint8_t { kIdle, kRunnable, kRunning, kParked, kWaking };
  bool server = false;
  int index = 0;  // in Sim::threads_
  int conn = 0;
  St st = St::kIdle;
  RingQueue<WorkItem> inbox;  // arrived, not yet read (its socket)
  // The messages on their way to it, in the order of their arrival keys
  // (TCP keeps a connection's order). An arrival is an event only when it
  // wakes the thread: while the thread is not idle an arrival changes
  // nothing but its inbox, which nothing reads before the thread's next read
  // of its socket, so the arrivals that have come by then are handled there
  // (Sim::Flush), each as its event would have been, in its event's order.
  // While it is idle, one kWireArrive event for the first of them is in the
  // queue (`wire_armed`), with that message's key.
  RingQueue<Arrival> wire;
  bool wire_armed = false;
  RingQueue<WorkItem> batch;  // read when it last got to its socket
  bool has_item = false;
  WorkItem item{};
  int64_t remaining = 0;     // CPU ns left of `item`
  int64_t segment_from = 0;  // when the pending tick's run segment began
  int64_t slice_end = 0;
  int64_t on_core_since = 0;  // when it last got a core
  uint32_t epoch = 0;         // a tick whose tag differs is stale
  // Its pending tick while it is live: the key and tag its event has (the
  // key also beside it in Sim::live_ticks_, for the comparisons); the event
  // is in the queue only once it is stale.
  bool tick_live = false;
  int64_t tick_time = 0;
  uint64_t tick_order = 0;
  // Scenario::busy_wake_ns: counts its wakeups (a kPreemptDue whose tag
  // differs is stale), and the thread whose core its wakeup takes (-1 once
  // it runs).
  uint32_t wake = 0;
  bool queued_woken = false;  // Scenario::woken_first_share: it waits as a woken thread
  int preempts = -1;
  int64_t preempts_since = 0;   // that thread's on_core_since when it was chosen
  int core = -1;                // per-core queues: the core it last ran or waits on
  int64_t off_ns = 0;           // when it last left a core
  int64_t runnable_since = -1;  // when it began to wait runnable for a core (-1: not)
  // Scenario::pause_per_s: run time left until its core pauses under it
  // (pauses come at that rate per second a core runs a thread, a Poisson
  // process in run time, so each thread can carry its own).
  int64_t to_pause = 0;
  // Scenario::context_lock_wakes_one: woken as a context lock's waiter, it
  // wakes that context's next waiter when it gets a core (-1: none).
  int wakes_next_of = -1;
  // ScenarioResult::resume: the context and generation of the last new
  // context it numbered a call under.
  int resumed_ctx = -1;
  uint32_t resumed_gen = 0;
  std::vector<QueueItem> held;    // client: calls sealed in this batch, written at its end
  std::vector<WorkItem> replies;  // server: replies of this batch, written at its end
};

class Sim {
 public:
  explicit Sim(const Scenario& s)
      : s_(s),
        rng_(s.seed),
        req_bytes_(s.RequestBytes()),
        reply_bytes_(s.ReplyBytes()),
        seal_req_ns_(s.CostNs(req_bytes_)),
        open_req_ns_(s.CostNs(req_bytes_)),
        seal_reply_ns_(s.CostNs(reply_bytes_)),
        open_reply_ns_(s.CostNs(reply_bytes_)),
        req_tx_ns_(SerialiseNs(req_bytes_)),
        reply_tx_ns_(SerialiseNs(reply_bytes_)),
        error_tx_ns_(SerialiseNs(kReplyOverhead)),
        slots_(static_cast<size_t>(s.slots)),
        conns_(static_cast<size_t>(s.nconnect)) {
    for (size_t c = 0; c < conns_.size(); ++c) {
      conns_[c].to_server = Rng(StreamSeed(s.seed, 2 * c));
      conns_[c].to_client = Rng(StreamSeed(s.seed, 2 * c + 1));
    }
    const int nctx = s.per_connection_context ? s.nconnect : 1;
    ctxs_.reserve(nctx);
    for (int i = 0; i < nctx; ++i) ctxs_.emplace_back(s.window);
    events_.Reserve(static_cast<size_t>(s.slots) * 4 + 64);
    if (s.thread_model) {
      has_sender_ = s.skew_sender_ns > 0 && s.skew_ns > 0 && s.skew_where == SkewWhere::kClient &&
                    s.skew_conn < s.nconnect;
      threads_.resize(static_cast<size_t>(s.nconnect) * 2 + (has_sender_ ? 1 : 0));
      for (size_t i = 0; i < threads_.size(); ++i) threads_[i].index = static_cast<int>(i);
      if (has_sender_) threads_.back().conn = s.skew_conn;
      for (int c = 0; c < s.nconnect; ++c) {
        threads_[static_cast<size_t>(c)].conn = c;
        threads_[static_cast<size_t>(s.nconnect + c)].conn = c;
        threads_[static_cast<size_t>(s.nconnect + c)].server = true;
      }
      free_cores_ = s.cores > 0 ? s.cores : static_cast<int>(threads_.size());
      pauses_ = s.cores > 0 && s.pause_per_s > 0;
      tick_slots_ = s.cores > 0 && s.cores <= kMaxTickSlots;
      if (pauses_) {
        for (SimThread& t : threads_) t.to_pause = NextPauseInNs();
      }
      if (s.per_core_queues && s.cores > 0) cores_.resize(static_cast<size_t>(s.cores));
    }
    latencies_.reserve(static_cast<size_t>(std::min<int64_t>(s.ops, 1 << 20)));
    if (s.thread_model) {
      // Every checked call adds a sample (up to kMaxStageSamples): room for
      // them all, left uninitialised (a page is only touched once a sample
      // is written to it).
      stage_samples_ = std::make_unique_for_overwrite<int32_t[]>(4 * kMaxStageSamples);
    }
  }

  Result<ScenarioResult> Run();

 private:
  void Handle(const Event& e);     // one event from the queue
  void Summarise(int64_t events);  // the end-of-run statistics (simulator_stats.cc)
  int64_t SerialiseNs(int64_t bytes) const {
    return static_cast<int64_t>(static_cast<double>(bytes) * 1e9 / s_.bandwidth_bytes_per_s + 0.5);
  }
  int64_t Sample(Dist d, int64_t mean, double sigma) { return Sample(rng_, d, mean, sigma); }
  static int64_t Sample(Rng& rng, Dist d, int64_t mean, double sigma) {
    if (mean <= 0) return 0;
    double v = static_cast<double>(mean);
    if (d == Dist::kExponential) v = rng.Exponential(v);
    if (d == Dist::kLogNormal) v = rng.LogNormal(v, sigma);
    // A heavy lognormal tail can exceed what int64 ns holds; no delay in a
    // scenario needs more than about 11 days.
    if (!(v < kMaxSampleNs)) v = kMaxSampleNs;
    return static_cast<int64_t>(v + 0.5);
  }
  // Run time until the next pause (Poisson at Scenario::pause_per_s; a
  // very low rate's draw is capped as Sample caps its own).
  int64_t NextPauseInNs() {
    const double v = rng_.Exponential(1e9 / s_.pause_per_s);
    return (v < kMaxSampleNs ? static_cast<int64_t>(v) : static_cast<int64_t>(kMaxSampleNs)) + 1;
  }
  // A pause's duration: Scenario::pause_ns at a uniform probability, linear
  // between its quantiles.
  int64_t PauseNs() { return Draw(s_.pause_ns); }
  // A draw from quantiles at kPauseProbs: a uniform probability, linear
  // between the quantiles either side of it.
  int64_t Draw(const std::vector<int64_t>& quantiles) {
    const double u = rng_.Uniform();
    // The first quantile at or above u (the last one at most), counted
    // without a branch: the probabilities ascend.
    size_t i = 1;
    for (size_t j = 1; j + 1 < kPauseQuantiles; ++j) i += kPauseProbs[j] < u ? 1 : 0;
    const double p0 = kPauseProbs[i - 1], p1 = kPauseProbs[i];
    const double q0 = static_cast<double>(quantiles[i - 1]);
    const double q1 = static_cast<double>(quantiles[i]);
    return static_cast<int64_t>(q0 + (q1 - q0) * (u - p0) / (p1 - p0) + 0.5);
  }
  // A one-way delay drawn from a direction's own stream (Conn).
  int64_t OneWay(Rng& stream) const {
    return s_.rtt_ns / 2 + Sample(stream, s_.jitter_dist, s_.jitter_ns, s_.jitter_sigma);
  }
  Context& CtxOf(const Slot& slot) { return ctxs_[s_.per_connection_context ? slot.conn : 0]; }
  uint32_t Index(const Slot& slot) const { return static_cast<uint32_t>(&slot - slots_.data()); }

  void SetBlocked(Slot& slot, bool blocked);
  // A call goes to the next connection round-robin (new calls always;
  // resends with Scenario::resend_any_connection, as the load generator).
  void ToNextConn(Slot& slot) {
    slot.conn = rr_;
    rr_ = rr_ + 1 == s_.nconnect ? 0 : rr_ + 1;  // round-robin without a division
  }
  void ResendConn(Slot& slot) {
    if (s_.resend_any_connection) ToNextConn(slot);
  }
  // `t` leaves its core in state `st`: its time there counts as busy.
  void LeaveCore(SimThread& t, SimThread::St st) {
    if (t.st != SimThread::St::kRunning) broken_ = "a thread left a core it did not hold";
    busy_ns_ += now_ - t.on_core_since;
    t.st = st;
    t.off_ns = now_;
    if (st == SimThread::St::kRunnable) {
      t.runnable_since = now_;
    } else if (!t.server && ThreadIndex(t) < s_.nconnect) {
      ++r_.client_sleeps;  // idle or parked: it blocks
    } else if (t.server) {
      ++r_.server_sleeps;
    }
  }
  void Issue(Slot& slot);
  void StartEncode(Slot& slot);
  void DoEncode(Slot& slot, Context& ctx);
  uint64_t AssignSeq(Context& ctx);
  void ReleaseSeq(Slot& slot);
  void DrainGate(Context& ctx);
  void Resend(Slot& slot);
  void TryTx(int c);
  void CutTransmission(Conn& conn);
  void UncountRetransmission(Conn& conn);
  void ServerAccept(Slot& slot);
  void ServerCheck(Slot& slot, bool at_pickup);
  void ScheduleTimeout(const Slot& slot);
  void PickUp();
  void StartService(uint32_t slot, uint32_t attempt);
  void QueueReply(Slot& slot, bool error);
  int64_t SendReply(Conn& conn, const QueueItem& item, int64_t sent);
  void ServerDisconnect(int c);
  // A call reached the server. With the thread model it goes into its
  // server thread's socket as the next arrival (the caller has flushed the
  // thread's wire, or is that flush).
  void OnArrive(Slot& slot);
  void OnComplete(Slot& slot);
  // An operation done: counted, its latency kept. False when it was the last.
  bool CountCompletion(Slot& slot);
  void OnDisconnectNoticed(int c);
  void OnReconnected(int c);
  void OnContextReady(int ci);
  // Thread model.
  SimThread& ClientThread(int c) { return threads_[static_cast<size_t>(c)]; }
  SimThread& ServerThread(int c) { return threads_[static_cast<size_t>(s_.nconnect + c)]; }
  SimThread& SenderThread() { return threads_.back(); }  // with has_sender_
  static int ThreadIndex(const SimThread& t) { return t.index; }
  // `waker`: the thread whose write made the item arrive (-1: none). The
  // messages that have reached `t` by now are delivered first (Flush).
  void Deliver(SimThread& t, WorkItem item, int waker = -1);
  // Deliver without Flush: the item is the next to arrive.
  void DeliverNow(SimThread& t, WorkItem item, int waker);
  // A message on its way to `t` (SimThread::wire): it arrives at `time`, in
  // the order of an event pushed now.
  uint64_t SendOnWire(SimThread& t, int64_t time, uint32_t slot, uint32_t attempt);
  // Handles the messages on their way to `t` that have arrived by now (the
  // current event's key), each as its arrival event would have; then, if
  // `t` is idle, puts an event for the next one in the queue.
  void Flush(SimThread& t);
  void Wake(SimThread& t, int waker);
  void Run(SimThread& t);
  void RunOnIdleCore(SimThread& t);  // Run, after the idle core's wakeup
  int64_t IdleWakeNs(int core) const;
  void Continue(SimThread& t);
  void OnTick(SimThread& t);
  void ReleaseCore(int core);  // -1: the one queue for all cores
  // A new epoch for `t`: its pending tick, if live, is stale, and goes to
  // the queue as such (popped and ignored there, as every stale tick).
  void NewEpoch(SimThread& t) {
    if (t.tick_live) {
      t.tick_live = false;
      const int index = ThreadIndex(t);
      live_ticks_.Erase(index);
      events_.PushWithOrder(t.tick_time, t.tick_order, kThreadTick, static_cast<uint32_t>(index),
                            t.epoch);
    }
    ++t.epoch;
  }
  // `t`'s run segment ends at `time` (a kThreadTick with the key of an
  // event pushed now, tagged with its epoch), kept with the thread while it
  // is live.
  void SetTick(SimThread& t, int64_t time) {
    if (!tick_slots_) {
      events_.Push(time, kThreadTick, static_cast<uint32_t>(ThreadIndex(t)), t.epoch);
      return;
    }
    // Its last tick was handled or made stale (NewEpoch) first; a live
    // tick's thread holds one of at most kMaxTickSlots cores.
    if (t.tick_live) broken_ = "a thread's tick was set while it had one live";
    if (live_ticks_.full()) broken_ = "more live ticks than cores";
    if (broken_) return;
    t.tick_time = time;
    t.tick_order = events_.TakeOrder();
    t.tick_live = true;
    live_ticks_.Insert(time, t.tick_order, ThreadIndex(t));
  }
  // `t` ran `ns` of its item (and towards its next pause).
  void Ran(SimThread& t, int64_t ns) {
    t.remaining -= ns;
    t.to_pause -= ns;
  }
  void Pause(SimThread& t);
  void Deschedule(SimThread& t);
  void Enqueue(RingQueue<int>& q, SimThread& t, bool woken);
  void Preempt(SimThread& victim);
  void OnPreemptDue(SimThread& t);
  // The queue `t` waits on for a core: its core's, or the one for all.
  RingQueue<int>& Waiting(const SimThread& t) {
    return cores_.empty() ? runq_ : cores_[static_cast<size_t>(t.core)].q;
  }
  bool BeginItem(SimThread& t);
  // `t` leaves its core until a thread in `waiters` is woken.
  void Park(SimThread& t, std::vector<int>& waiters);
  void WakeParked(std::vector<int>& waiters);
  void WakeNextWaiter(int ci, int prefer, int waker);
  // `by`: the thread model's receiver that re-creates it (spends
  // Scenario::gss_setup_cpu_ns on its core first); nullptr: no thread.
  void StartRecreate(Context& ctx, SimThread* by = nullptr);
  void FinishItem(SimThread& t);
  void EndBatch(SimThread& t);
  void QueueCall(Slot& slot);
  void DropServerWork(int c);

  const Scenario& s_;
  Rng rng_;
  const int64_t req_bytes_, reply_bytes_;
  const int64_t seal_req_ns_, open_req_ns_, seal_reply_ns_, open_reply_ns_;
  const int64_t req_tx_ns_, reply_tx_ns_, error_tx_ns_;
  std::vector<Slot> slots_;
  std::vector<Conn> conns_;
  std::vector<Context> ctxs_;
  EventQueue events_;
  int64_t now_ = 0;
  int rr_ = 0;  // the connection the next new call goes to
  // Server workers.
  int busy_workers_ = 0;
  RingQueue<QueueItem> work_;
  size_t server_rr_ = 0;       // kRoundRobin: the connection whose turn is next
  int64_t server_queued_ = 0;  // kRoundRobin: calls in all serverq
  // Stall accounting: slots blocked on a timeout, reconnect or new context.
  int64_t blocked_ = 0;
  int64_t stall_since_ = -1;
  // Thread ticks handled in Continue without the event queue, and arrivals
  // handled from a thread's wire (counted as events: ScenarioResult::events
  // and the event budget include them), and the kWireArrive events (not
  // counted: the arrival they bring is).
  int64_t inline_ticks_ = 0;
  int64_t wire_arrivals_ = 0;
  int64_t wire_events_ = 0;
  // The order of the event being handled (a tick handled in Continue: the
  // order its event would have had; kNoOrder: the run's end), and whether a moment that would have
  // been an event at (time, order) has come: it is earlier, or the same time and at or before the
  // event being handled in the order.
  static constexpr uint64_t kNoOrder = ~uint64_t{0};
  uint64_t cur_order_ = kNoOrder;
  bool Passed(int64_t time, uint64_t order) const {
    return time < now_ || (time == now_ && order <= cur_order_);
  }
  // True when no queued event comes at or before `t` and the run would go
  // on to `t`: a tick at `t` would be the next event.
  bool NothingBefore(int64_t t) const {
    if (!live_ticks_.empty() && live_ticks_.front().time <= t) {
      return false;
    }
    return (events_.empty() || events_.top().time > t) && t <= kMaxSimNs &&
           (s_.duration_ns <= 0 || t <= s_.duration_ns);
  }
  static constexpr int kMaxTickSlots = 8;
  // Thread model: the live ticks (at most one per core that runs a thread),
  // in key order, each key beside its thread: the event loop and
  // NothingBefore compare the first one's key without reading its thread.
  struct LiveTick {
    int64_t time;
    uint64_t order;
    int thread;
  };
  struct LiveTicks {
    std::array<LiveTick, kMaxTickSlots> at;
    int n = 0;
    bool empty() const { return n == 0; }
    bool full() const { return n == static_cast<int>(at.size()); }
    const LiveTick& front() const { return at[0]; }
    // Not full. After the live ticks of its time (its order is the newest).
    void Insert(int64_t time, uint64_t order, int thread) {
      int i = n++;
      while (i > 0 && at[static_cast<size_t>(i - 1)].time > time) {
        at[static_cast<size_t>(i)] = at[static_cast<size_t>(i - 1)];
        --i;
      }
      at[static_cast<size_t>(i)] = {time, order, thread};
    }
    void PopFront() {
      --n;
      for (int i = 0; i < n; ++i) at[static_cast<size_t>(i)] = at[static_cast<size_t>(i + 1)];
    }
    // `thread`'s live tick, which is there.
    void Erase(int thread) {
      int i = 0;
      while (at[static_cast<size_t>(i)].thread != thread) ++i;
      --n;
      for (; i < n; ++i) at[static_cast<size_t>(i)] = at[static_cast<size_t>(i + 1)];
    }
  };
  LiveTicks live_ticks_;
  // Whether live ticks are kept out of the queue: with a few cores (a scan
  // of as many live ticks costs less than the queue's push and pop); else
  // every tick goes to the queue.
  bool tick_slots_ = false;
  int FirstLiveTick() const { return live_ticks_.empty() ? -1 : live_ticks_.front().thread; }
  int64_t stalled_ns_ = 0;
  std::vector<int64_t> latencies_;
  int64_t latency_most_ = 0;  // the longest of them
  // Thread model: client receivers [0, nconnect), server threads
  // [nconnect, 2 nconnect), and the delay-line thread last if there is one.
  std::vector<SimThread> threads_;
  // What broke the scheduler's state (nullptr: nothing), a bug of the
  // model that Run() reports instead of a result.
  const char* broken_ = nullptr;
  int free_cores_ = 0;
  bool has_sender_ = false;  // Scenario::skew_sender_ns: the delay line is a thread
  bool pauses_ = false;      // Scenario::pause_per_s, with cores
  int64_t busy_ns_ = 0;      // the threads' time on a core, for ScenarioResult::idle_fraction
  RingQueue<int> runq_;      // runnable threads waiting for a core
  // Scenario::per_core_queues: each core runs one thread and queues its own.
  struct Core {
    int running = -1;
    RingQueue<int> q;
    uint32_t idle_epoch = 0;
    int64_t idle_since = 0;  // when it last had no thread running
  };
  std::vector<Core> cores_;
  bool PullInto(int core);  // an idle core takes a cold thread from another's queue
  // Thread model: stage times of checked calls (bounded sample), and of
  // the calls that were below the window.
  // The stage times of stage_count_ calls: stage i's that fit in 32 bits
  // (all but the longest, over 2 s) from stage_samples_[i * kMaxStageSamples]
  // on, the others in stage_long_[i]: half the memory a sample touches.
  std::unique_ptr<int32_t[]> stage_samples_;
  std::array<size_t, 4> stage_short_{};  // how many of stage i fit
  std::array<int32_t, 4> stage_most_{};  // the longest of those
  std::array<std::vector<int64_t>, 4> stage_long_;
  size_t stage_count_ = 0;
  void AddStages(const std::array<int64_t, 4>& path) {
    for (size_t i = 0; i < 4; ++i) {
      if (path[i] <= INT32_MAX) {
        const int32_t v = static_cast<int32_t>(path[i]);
        stage_samples_[i * kMaxStageSamples + stage_short_[i]++] = v;
        stage_most_[i] = std::max(stage_most_[i], v);
      } else {
        stage_long_[i].push_back(path[i]);
      }
    }
    ++stage_count_;
  }
  // Stage i's values at `ranks` (ascending): the long ones rank above every
  // one that fits.
  void StageValues(size_t i, std::span<const size_t> ranks, std::span<int64_t> out);
  std::vector<std::array<int64_t, 4>> violation_stages_;
  // Durations of the reconnect and re-creation steps (ScenarioResult::Step),
  // at most kMaxStageSamples each.
  std::vector<int64_t> close_to_eof_, eof_to_resent_, recreation_, resume_;
  void AddStep(std::vector<int64_t>& v, int64_t d) {
    if (v.size() < kMaxStageSamples) v.push_back(d);
  }
  ScenarioResult r_;
  bool done_ = false;
};

}  // namespace secmode::sim::detail

#endif  // SECMODE_SIM_SIMULATOR_INTERNAL_H_
