#include "sim/simulator.h"

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
#include "sim/server_window.h"

namespace secmode::sim {

using common::Result;
using common::Status;

namespace {

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
  std::vector<int> parked;        // thread model: its receiver, reconnecting
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
  // order its event would have had; kNoOrder: the run's end), and whether a moment that would have been
  // an event at (time, order) has come: it is earlier, or the same time and
  // at or before the event being handled in the order.
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
  RingQueue<int> runq_;     // runnable threads waiting for a core
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
  std::array<int32_t, 4> stage_most_{};   // the longest of those
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
  void StageValues(size_t i, std::span<const size_t> ranks, std::span<int64_t> out) {
    const size_t fit = stage_short_[i];
    size_t k = 0;
    while (k < ranks.size() && ranks[k] < fit) ++k;
    OrderStatistics<int32_t>({stage_samples_.get() + i * kMaxStageSamples, fit}, stage_most_[i],
                             ranks.first(k), out.first(k));
    std::vector<int64_t>& longer = stage_long_[i];
    std::sort(longer.begin(), longer.end());
    for (; k < ranks.size(); ++k) out[k] = longer[ranks[k] - fit];
  }
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

void Sim::SetBlocked(Slot& slot, bool blocked) {
  if (slot.blocked == blocked) return;
  slot.blocked = blocked;
  blocked_ += blocked ? 1 : -1;
  const bool stalled = blocked_ == s_.slots;
  if (stalled && stall_since_ < 0) stall_since_ = now_;
  if (!stalled && stall_since_ >= 0) {
    stalled_ns_ += now_ - stall_since_;
    stall_since_ = -1;
  }
}

void Sim::Issue(Slot& slot) {
  slot.issue_ns = now_;
  ToNextConn(slot);
  slot.sent = false;
  slot.holds_seq = false;
  StartEncode(slot);
}

uint64_t Sim::AssignSeq(Context& ctx) {
  if (ctx.next_seq >= kMaxSeqIssued) {
    r_.truncated = true;
    done_ = true;
  }
  if (s_.spread_cap > 0) {
    if (ctx.held.empty()) ctx.held_base = ctx.next_seq;
    ctx.held.push_back(1);
  }
  return ctx.next_seq++;
}

void Sim::ReleaseSeq(Slot& slot) {
  if (!slot.holds_seq) return;
  slot.holds_seq = false;
  if (s_.spread_cap <= 0) return;
  Context& ctx = CtxOf(slot);
  if (slot.gen != ctx.gen || slot.seq < ctx.held_base ||
      slot.seq - ctx.held_base >= ctx.held.size()) {
    return;
  }
  ctx.held[slot.seq - ctx.held_base] = 0;
  while (!ctx.held.empty() && ctx.held.front() == 0) {
    ctx.held.pop_front();
    ++ctx.held_base;
  }
  DrainGate(ctx);
}

// A number may be issued unless the context is being re-created or the
// spread cap would be exceeded.
void Sim::DrainGate(Context& ctx) {
  while (!ctx.gate.empty() && !ctx.recreating) {
    if (s_.spread_cap > 0 && !ctx.held.empty() &&
        ctx.next_seq - ctx.held_base >= static_cast<uint64_t>(s_.spread_cap)) {
      return;
    }
    Slot& slot = slots_[ctx.gate.front()];
    ctx.gate.pop_front();
    SetBlocked(slot, false);
    DoEncode(slot, ctx);
  }
}

void Sim::StartEncode(Slot& slot) {
  Context& ctx = CtxOf(slot);
  slot.state = State::kGated;
  ctx.gate.push_back(Index(slot));
  if (ctx.recreating) SetBlocked(slot, true);
  DrainGate(ctx);
}

void Sim::DoEncode(Slot& slot, Context& ctx) {
  slot.numbered_ns = 0;  // numbered outside the threads: no stage path
  slot.writer = -1;
  slot.seq = AssignSeq(ctx);
  slot.gen = ctx.gen;
  slot.holds_seq = true;
  slot.error_reply = false;
  ++slot.attempt;
  slot.state = State::kEncoding;
  events_.Push(now_ + seal_req_ns_, kEncodeDone, Index(slot), slot.attempt);
}

// Gives up the current transmission of `slot` and encodes it again (new
// number) right away, or as soon as its context allows.
void Sim::Resend(Slot& slot) {
  ReleaseSeq(slot);
  ResendConn(slot);
  ++slot.attempt;  // anything still in flight for the old attempt is stale
  SetBlocked(slot, false);
  StartEncode(slot);
}

void Sim::TryTx(int c) {
  Conn& conn = conns_[c];
  while (conn.up && !conn.sendq.empty()) {
    QueueItem item = conn.sendq.front();
    Slot& slot = slots_[item.slot];
    if (slot.attempt != item.attempt || slot.state != State::kQueued) {
      conn.sendq.pop_front();
      continue;
    }
    // It goes when it is due (a skew holds it) and the call ahead has left:
    // at that call's end, in the order the end of its transmission has among
    // the events of that time (so a call with no serialisation time leaves
    // at the same time as the one ahead, but after it, one per event).
    const int64_t ready = std::max(item.eligible_ns, conn.tx_free_at);
    if (ready > now_ || !Passed(conn.tx_free_at, conn.tx_free_order)) {
      if (!conn.tx_timer) {
        conn.tx_timer = true;
        if (ready == conn.tx_free_at) {
          events_.PushWithOrder(ready, conn.tx_free_order, kTxReady, static_cast<uint32_t>(c),
                                conn.epoch);
        } else {
          events_.Push(ready, kTxReady, static_cast<uint32_t>(c), conn.epoch);
        }
      }
      return;
    }
    conn.sendq.pop_front();
    Context& ctx = CtxOf(slot);
    int64_t extra = 0;
    // Re-encode at transmit: the Linux client (net/sunrpc, since about v5.0)
    // checks before each transmission whether the call's number is now a
    // window or more behind the highest number already sent on the context,
    // and if so encodes the call again with a fresh number.
    if (s_.reencode && slot.gen == ctx.gen && !ctx.recreating && ctx.xmit_any &&
        ctx.seq_xmit >= slot.seq && ctx.seq_xmit - slot.seq >= static_cast<uint64_t>(s_.window)) {
      ReleaseSeq(slot);
      slot.seq = AssignSeq(ctx);
      slot.holds_seq = true;
      extra = seal_req_ns_;
      ++r_.reencodes;
    }
    if (slot.gen == ctx.gen) {
      if (!ctx.xmit_any || slot.seq > ctx.seq_xmit) ctx.seq_xmit = slot.seq;
      ctx.xmit_any = true;
    }
    slot.state = State::kInFlight;
    // The call leaves at `left`, and crosses the wire (TCP order).
    const int64_t left = now_ + extra + req_tx_ns_;
    conn.tx_free_at = left;
    conn.tx_free_order = events_.TakeOrder();
    conn.in_tx = item;
    conn.in_tx_was_sent = slot.sent;
    conn.in_tx_was_done = slot.tx_done_ns;
    if (slot.sent) {
      ++r_.retransmissions;
      r_.retransmitted_bytes += req_bytes_;
    }
    slot.sent = true;
    slot.tx_done_ns = left;
    int64_t delay = conn.has_unused_delay ? conn.unused_delay : OneWay(conn.to_server);
    conn.has_unused_delay = false;
    conn.in_tx_delay = delay;
    if (s_.skew_where == SkewWhere::kNetwork && slot.conn == s_.skew_conn) delay += s_.skew_ns;
    const int64_t at = std::max(conn.last_arrival, left + delay);
    conn.last_arrival = at;
    conn.in_tx_arrive_order = s_.thread_model
                                  ? SendOnWire(ServerThread(c), at, item.slot, item.attempt)
                                  : events_.Push(at, kArrive, item.slot, item.attempt);
  }
}

// The server closed connection c while a call was still being transmitted
// on it: that call never left, as if its transmission had not begun.
void Sim::CutTransmission(Conn& conn) {
  if (Passed(conn.tx_free_at, conn.tx_free_order)) return;
  conn.has_unused_delay = true;
  conn.unused_delay = conn.in_tx_delay;
  Slot& slot = slots_[conn.in_tx.slot];
  slot.cancelled_arrive = conn.in_tx_arrive_order;
  slot.sent = conn.in_tx_was_sent;
  slot.tx_done_ns = conn.in_tx_was_done;
  UncountRetransmission(conn);
}

// The call being transmitted on `conn` had been sent before: TryTx counted
// it as a retransmission as it began, which is taken back (once) when it
// does not leave.
void Sim::UncountRetransmission(Conn& conn) {
  if (!conn.in_tx_was_sent) return;
  --r_.retransmissions;
  r_.retransmitted_bytes -= req_bytes_;
  conn.in_tx_was_sent = false;
}

// A reply whose serialisation ended at `sent` crosses the wire (TCP order)
// to the client: its receiver thread opens it when it gets to it, or,
// without the thread model, it completes once opened. Returns when the
// client is done with it.
int64_t Sim::SendReply(Conn& conn, const QueueItem& item, int64_t sent) {
  Slot& slot = slots_[item.slot];
  if (slot.attempt != item.attempt) return 0;
  const int64_t at = std::max(conn.last_reply_arrival, sent + OneWay(conn.to_client));
  conn.last_reply_arrival = at;
  if (s_.thread_model) {
    SendOnWire(ClientThread(static_cast<int>(&conn - conns_.data())), at, item.slot, item.attempt);
    return at;
  }
  const int64_t open = slot.error_reply ? s_.CostNs(kReplyOverhead) : open_reply_ns_;
  events_.Push(at + open, kComplete, item.slot, item.attempt);
  return at + open;
}

void Sim::QueueReply(Slot& slot, bool error) {
  slot.error_reply = error;
  Conn& conn = conns_[slot.conn];
  if (!conn.up) return;  // closed by the server: the reply is lost
  // It leaves once the replies written before it have (Conn).
  const int64_t left = std::max(now_, conn.reply_free_at) + (error ? error_tx_ns_ : reply_tx_ns_);
  conn.reply_free_at = left;
  const int64_t client_done = SendReply(conn, {Index(slot), slot.attempt, now_}, left);
  if (!s_.thread_model) {
    while (!conn.reply_tail.empty() && conn.reply_tail.front().first <= now_) {
      conn.reply_tail.pop_front();
    }
    conn.reply_tail.push_back({left, client_done});
  }
}

void Sim::StartService(uint32_t index, uint32_t attempt) {
  ++busy_workers_;
  const int64_t t =
      open_req_ns_ + Sample(s_.service_dist, s_.service_ns, s_.service_sigma) + seal_reply_ns_;
  events_.Push(now_ + t, kServiceDone, index, attempt);
}

void Sim::ServerAccept(Slot& slot) {
  if (busy_workers_ < s_.server_threads) {
    StartService(Index(slot), slot.attempt);
  } else {
    work_.push_back({Index(slot), slot.attempt, now_});
  }
}

// The server closes connection c: everything queued on it either way is
// lost, and TCP ordering starts afresh on the new connection.
void Sim::ServerDisconnect(int c) {
  Conn& conn = conns_[c];
  if (s_.thread_model) {
    // The calls that have reached the server thread are read or unread in
    // its socket (and dropped with it below); those still on their way are
    // events again, as they were before the wire: their arrival on a
    // closed connection, or after the connection is back, is handled there.
    SimThread& t = ServerThread(c);
    Flush(t);
    // The thread runs (it read the call that closes the connection), so an
    // event armed for its wire came at or before that call and has been
    // handled: no key goes to the queue twice.
    if (t.wire_armed) broken_ = "a closed connection's server thread had its wire armed";
    for (size_t i = 0; i < t.wire.size(); ++i) {
      const Arrival& a = t.wire[i];
      events_.PushWithOrder(a.time, a.order, kArrive, a.slot, a.attempt);
    }
    t.wire.clear();
  }
  ++r_.disconnects;
  ++conn.epoch;
  conn.up = false;
  CutTransmission(conn);
  conn.tx_free_at = now_;
  conn.tx_free_order = 0;  // the new connection's link is free
  conn.tx_timer = false;
  // The replies the server wrote before it closed are TCP's to deliver: they
  // reach the client, in order, before the end of the stream (the server
  // writes a batch's replies, then shuts the connection down). They are on
  // their way already (QueueReply); the client notices the close once it is
  // done with the last of those still leaving.
  int64_t client_done = 0;
  for (size_t i = 0; i < conn.reply_tail.size(); ++i) {
    if (conn.reply_tail[i].first > now_) {
      client_done = std::max(client_done, conn.reply_tail[i].second);
    }
  }
  conn.reply_tail.clear();
  conn.reply_free_at = now_;
  server_queued_ -= static_cast<int64_t>(conn.serverq.size());
  conn.serverq.clear();
  conn.last_arrival = 0;
  if (s_.thread_model) {
    // TCP keeps order: the client's receiver reads every reply the server
    // sent before it closed, then the end of the stream, and reconnects.
    DropServerWork(c);
    conn.closed_ns = now_;
    const int64_t eof_at = std::max(conn.last_reply_arrival, now_ + s_.rtt_ns / 2);
    conn.last_reply_arrival = 0;
    events_.Push(eof_at, kEofArrive, static_cast<uint32_t>(c), conn.epoch);
    return;
  }
  conn.last_reply_arrival = 0;
  events_.Push(std::max(client_done, now_ + s_.rtt_ns / 2), kDisconnectNoticed,
               static_cast<uint32_t>(c), conn.epoch);
}

void Sim::OnArrive(Slot& slot) {
  Conn& conn = conns_[slot.conn];
  if (!conn.up) {  // the server closed this connection: lost
    ++r_.drops;
    return;
  }
  if (s_.thread_model) {
    DeliverNow(ServerThread(slot.conn), {Index(slot), slot.attempt, Work::kServerCall},
               slot.writer);
    return;
  }
  if (s_.server_order == ServerOrder::kRoundRobin) {
    conn.serverq.push_back({Index(slot), slot.attempt, now_});
    ++server_queued_;
    PickUp();
    return;
  }
  ServerCheck(slot, /*at_pickup=*/false);
}

// Free workers take calls connection by connection, in turn, and check each
// call's number when they take it.
void Sim::PickUp() {
  const size_t n = conns_.size();
  while (busy_workers_ < s_.server_threads && server_queued_ > 0) {
    size_t c = server_rr_;
    for (size_t k = 0; k < n && conns_[c].serverq.empty(); ++k) c = (c + 1) % n;
    server_rr_ = (c + 1) % n;
    Conn& conn = conns_[c];
    const QueueItem item = conn.serverq.front();
    conn.serverq.pop_front();
    --server_queued_;
    Slot& slot = slots_[item.slot];
    if (slot.attempt != item.attempt) continue;
    ServerCheck(slot, /*at_pickup=*/true);
  }
}

// The window check (RFC 2203 5.3.3.1) and the server's reaction.
void Sim::ServerCheck(Slot& slot, bool at_pickup) {
  Context& ctx = CtxOf(slot);
  if (slot.gen != ctx.gen || ctx.server_dead) {
    // RFC 2203 5.3.3.3: a call on a context the server no longer has is
    // answered with an RPCSEC_GSS_CREDPROBLEM / CTXPROBLEM auth error.
    ++r_.error_replies;
    QueueReply(slot, /*error=*/true);
    return;
  }
  const WindowCheck w = ctx.server.Check(slot.seq);
  if (int64_t{w.lag} > r_.max_spread) r_.max_spread = w.lag;
  const rpc::SeqVerdict v = w.verdict;
  if (v == rpc::SeqVerdict::kAccept) {
    if (at_pickup) {
      StartService(Index(slot), slot.attempt);
    } else {
      ServerAccept(slot);
    }
    return;
  }
  // Below the window (or a replay): RFC 2203 5.3.3.1 says discard silently.
  if (v == rpc::SeqVerdict::kBelowWindow) ++r_.violations;
  ++r_.drops;
  slot.state = State::kLost;
  SetBlocked(slot, true);
  ScheduleTimeout(slot);
  if (v != rpc::SeqVerdict::kBelowWindow) return;
  if (s_.reaction == Reaction::kDropDisconnect) {
    ServerDisconnect(slot.conn);
  } else if (s_.reaction == Reaction::kDiscardContext) {
    ctx.server_dead = true;
  }
}

// The client's timer for a call the server dropped. It runs from the
// transmission; scheduling it only for dropped calls is equivalent (a reply
// would have cancelled it) and keeps the heap small, as long as the server
// drops a call before its timer would have run out. A call that waited at
// the server longer than that (a timeout shorter than the server's queue)
// is resent when it is dropped, not back in time: later than a real client
// would resend it, and the model resends no call whose reply comes after
// its timer. The model holds for timeouts longer than any wait at the server.
void Sim::ScheduleTimeout(const Slot& slot) {
  events_.Push(std::max(now_, slot.tx_done_ns + s_.retransmit_timeout_ns), kTimeout, Index(slot),
               slot.attempt);
}

void Sim::OnComplete(Slot& slot) {
  if (slot.error_reply) {
    // "Context problem": create a new context (one round trip plus the GSS
    // setup cost); the call is resent under it.
    Context& ctx = CtxOf(slot);
    if (slot.gen != ctx.gen) {  // a new context already exists
      Resend(slot);
      return;
    }
    slot.state = State::kWaitCtx;
    SetBlocked(slot, true);
    StartRecreate(ctx);
    return;
  }
  if (CountCompletion(slot)) Issue(slot);
}

// "Context problem": the client creates a new context (one round trip plus
// the GSS setup) unless it is already doing so.
void Sim::StartRecreate(Context& ctx, SimThread* by) {
  if (ctx.recreating) return;
  ctx.recreating = true;
  ctx.ready_ns = -1;
  ctx.creator = by != nullptr ? ThreadIndex(*by) : -1;
  ++r_.context_recreations;
  const uint32_t ci = static_cast<uint32_t>(&ctx - ctxs_.data());
  if (by != nullptr && s_.gss_setup_cpu_ns > 0) {
    by->batch.push_front({ci, ctx.gen, Work::kCreateContext});
    return;
  }
  ctx.recreate_began_ns = now_;
  events_.Push(now_ + s_.rtt_ns + s_.gss_setup_ns, kContextReady, ci, ctx.gen);
}

bool Sim::CountCompletion(Slot& slot) {
  ReleaseSeq(slot);
  ++r_.completed;
  latencies_.push_back(now_ - slot.issue_ns);
  latency_most_ = std::max(latency_most_, latencies_.back());
  if (r_.completed >= s_.ops) done_ = true;
  return !done_;
}

void Sim::OnDisconnectNoticed(int c) {
  for (Slot& slot : slots_) {
    if (slot.conn != c || slot.state == State::kGated || slot.state == State::kWaitCtx) continue;
    ReleaseSeq(slot);
    ++slot.attempt;
    slot.state = State::kWaitConn;
    SetBlocked(slot, true);
  }
  conns_[c].sendq.clear();
  events_.Push(now_ + s_.rtt_ns + s_.reconnect_ns, kReconnected, static_cast<uint32_t>(c),
               conns_[c].epoch);
}

void Sim::OnReconnected(int c) {
  conns_[c].up = true;
  if (s_.thread_model && conns_[c].eof_ns >= 0) conns_[c].resend_due = true;
  for (Slot& slot : slots_) {
    if (slot.conn != c || slot.state != State::kWaitConn) continue;
    if (s_.thread_model) {
      // The connection's receiver thread numbers and seals the resends.
      ReleaseSeq(slot);
      ResendConn(slot);
      ++slot.attempt;
      SetBlocked(slot, false);
      slot.state = State::kEncoding;
      Deliver(ClientThread(c), {Index(slot), slot.attempt, Work::kCallSeal});
      continue;
    }
    Resend(slot);
  }
  TryTx(c);
  WakeParked(conns_[c].parked);  // the receiver that reconnected goes on
}

void Sim::OnContextReady(int ci) {
  Context& ctx = ctxs_[ci];
  if (s_.thread_model && ctx.recreate_began_ns >= 0) {
    AddStep(recreation_, now_ - ctx.recreate_began_ns);
  }
  ctx.recreate_began_ns = -1;
  ++ctx.gen;
  ctx.next_seq = 0;
  ctx.recreating = false;
  ctx.server_dead = false;
  ctx.server.Reset();
  ctx.xmit_any = false;
  ctx.seq_xmit = 0;
  ctx.held.clear();
  ctx.held_base = 0;
  // The calls that got the error reply go again under the new context. The
  // others numbered under the old one carry on as the real client's do: one
  // still in flight gets its own error reply, one the server dropped waits
  // for its timeout, one waiting for its connection goes on reconnect.
  for (Slot& slot : slots_) {
    if (&CtxOf(slot) != &ctx || slot.gen == ctx.gen || slot.state == State::kGated) continue;
    slot.holds_seq = false;  // the old numbering is gone
    if (slot.state == State::kWaitCtx) Resend(slot);
  }
  DrainGate(ctx);
  // The receivers that waited go on with their batches: they number the
  // calls they were about to send under the new context; all at once, or
  // one by one as a mutex's waiters (Scenario::context_lock_wakes_one), the
  // receiver that made the context first.
  ctx.ready_ns = now_;
  if (s_.context_lock_wakes_one && s_.thread_model) {
    WakeNextWaiter(ci, ctx.creator, -1);
  } else {
    WakeParked(ctx.parked);
  }
  ctx.creator = -1;
}

// Scenario::context_lock_wakes_one: wakes one of context `ci`'s waiters
// (`prefer` if it waits, else the longest waiting), which wakes the next
// when it gets a core (kLockHandoff).
void Sim::WakeNextWaiter(int ci, int prefer, int waker) {
  std::vector<int>& waiters = ctxs_[static_cast<size_t>(ci)].parked;
  if (waiters.empty()) return;
  auto it = std::find(waiters.begin(), waiters.end(), prefer);
  if (it == waiters.end()) it = waiters.begin();
  SimThread& t = threads_[static_cast<size_t>(*it)];
  waiters.erase(it);
  t.st = SimThread::St::kIdle;
  t.wakes_next_of = ci;
  Wake(t, waker);
}

void Sim::Park(SimThread& t, std::vector<int>& waiters) {
  LeaveCore(t, SimThread::St::kParked);
  waiters.push_back(ThreadIndex(t));
  ReleaseCore(t.core);
}

void Sim::WakeParked(std::vector<int>& waiters) {
  std::vector<int> woken;
  woken.swap(waiters);
  for (int i : woken) {
    SimThread& t = threads_[static_cast<size_t>(i)];
    t.st = SimThread::St::kIdle;
    Wake(t, -1);
  }
}

// ---- Thread model (Scenario::thread_model) ----

void Sim::QueueCall(Slot& slot) {
  const int64_t hold =
      (s_.skew_where == SkewWhere::kClient && slot.conn == s_.skew_conn) ? s_.skew_ns : 0;
  slot.written_ns = now_ + hold;
  if (hold > 0) slot.writer = -1;  // written later by the delay line, not this thread
  if (hold > 0 && has_sender_) {
    events_.Push(now_ + hold, kSendDue, Index(slot), slot.attempt);
    return;
  }
  conns_[slot.conn].sendq.push_back({Index(slot), slot.attempt, now_ + hold});
  TryTx(slot.conn);
}

// The server closed connection c: what its thread had read or not yet read
// from it is gone with it.
void Sim::DropServerWork(int c) {
  SimThread& t = ServerThread(c);
  t.inbox.clear();
  t.batch.clear();
}

void Sim::Deliver(SimThread& t, WorkItem item, int waker) {
  Flush(t);
  DeliverNow(t, item, waker);
}

void Sim::DeliverNow(SimThread& t, WorkItem item, int waker) {
  t.inbox.push_back(item);
  Wake(t, waker);
}

uint64_t Sim::SendOnWire(SimThread& t, int64_t time, uint32_t slot, uint32_t attempt) {
  const uint64_t order = events_.TakeOrder();
  t.wire.push_back({time, order, slot, attempt});
  if (t.st == SimThread::St::kIdle && !t.wire_armed) {
    t.wire_armed = true;
    events_.PushWithOrder(time, order, kWireArrive, static_cast<uint32_t>(ThreadIndex(t)), 0);
  }
  return order;
}

void Sim::Flush(SimThread& t) {
  while (!t.wire.empty() && Passed(t.wire.front().time, t.wire.front().order)) {
    const Arrival a = t.wire.front();
    t.wire.pop_front();
    ++wire_arrivals_;
    Slot& slot = slots_[a.slot];
    if (slot.attempt != a.attempt) continue;  // resent or lost meanwhile
    if (t.server) {
      if (slot.cancelled_arrive != a.order) OnArrive(slot);
    } else {
      DeliverNow(ClientThread(slot.conn), {a.slot, a.attempt, Work::kReplyOpen},
                 ThreadIndex(ServerThread(slot.conn)));
    }
  }
  if (t.st == SimThread::St::kIdle && !t.wire.empty() && !t.wire_armed) {
    t.wire_armed = true;
    const Arrival& a = t.wire.front();
    events_.PushWithOrder(a.time, a.order, kWireArrive, static_cast<uint32_t>(ThreadIndex(t)), 0);
  }
}

void Sim::Wake(SimThread& t, int waker) {
  if (t.st != SimThread::St::kIdle) return;
  t.st = SimThread::St::kRunnable;
  ++t.wake;
  const bool waker_runs =
      waker >= 0 && threads_[static_cast<size_t>(waker)].st == SimThread::St::kRunning;
  SimThread* const waker_victim = waker_runs ? &threads_[static_cast<size_t>(waker)] : nullptr;
  SimThread* victim = nullptr;
  if (!cores_.empty()) {
    // An idle core takes it (its last one first, as Linux looks for an idle
    // CPU for a woken thread); else it waits on its last core's queue (the
    // waker's, with PreemptVictim::kWaker) and may take that core from
    // whoever runs there.
    int c = -1;
    if (t.core >= 0 && cores_[static_cast<size_t>(t.core)].running < 0) c = t.core;
    for (size_t i = 0; c < 0 && i < cores_.size(); ++i) {
      if (cores_[i].running < 0) c = static_cast<int>(i);
    }
    if (c >= 0) {
      ++cores_[static_cast<size_t>(c)].idle_epoch;
      t.core = c;
      RunOnIdleCore(t);
      return;
    }
    if (t.core < 0) t.core = 0;
    if (s_.preempt_victim == PreemptVictim::kWaker) {
      if (waker_victim != nullptr) t.core = waker_victim->core;
      victim = waker_victim;
    } else {
      victim = &threads_[static_cast<size_t>(cores_[static_cast<size_t>(t.core)].running)];
      if (victim->st != SimThread::St::kRunning) victim = nullptr;  // still waking
    }
    t.runnable_since = now_;
    Enqueue(cores_[static_cast<size_t>(t.core)].q, t, true);
  } else {
    if (free_cores_ > 0) {
      --free_cores_;
      RunOnIdleCore(t);
      return;
    }
    t.runnable_since = now_;
    Enqueue(runq_, t, true);
    // The waker, or the thread that has run longest since it got its core.
    if (s_.preempt_victim == PreemptVictim::kWaker) {
      victim = waker_victim;
    } else {
      for (SimThread& r : threads_) {
        if (r.st == SimThread::St::kRunning &&
            (!victim || r.on_core_since < victim->on_core_since)) {
          victim = &r;
        }
      }
    }
  }
  // Wakeup preemption: the victim gives its core up if it has run long
  // enough, unless its core is paused (nothing runs there, the scheduler
  // neither).
  if (s_.wakeup_preempt_ns <= 0 || victim == nullptr ||
      now_ - victim->on_core_since < s_.wakeup_preempt_ns || now_ < victim->segment_from) {
    return;
  }
  if (s_.busy_wake_ns.empty()) {
    Preempt(*victim);
    return;
  }
  // The preemption lands a busy-core wakeup later (the IPI, the
  // scheduler's decision, the switch), if the victim still runs then.
  t.preempts = ThreadIndex(*victim);
  t.preempts_since = victim->on_core_since;
  events_.Push(now_ + Draw(s_.busy_wake_ns), kPreemptDue, static_cast<uint32_t>(ThreadIndex(t)),
               t.wake);
}

void Sim::Preempt(SimThread& victim) {
  Ran(victim, now_ - victim.segment_from);
  victim.segment_from = now_;
  NewEpoch(victim);  // its pending tick is stale
  Deschedule(victim);
}

// Scenario::busy_wake_ns: `t`'s wakeup reaches the core it chose. Nothing
// happens if `t` has run since (a core came free first) or the victim has
// left that core; a paused core takes it when the pause ends.
void Sim::OnPreemptDue(SimThread& t) {
  if (t.st != SimThread::St::kRunnable || t.preempts < 0) return;
  SimThread& v = threads_[static_cast<size_t>(t.preempts)];
  if (v.st != SimThread::St::kRunning || v.on_core_since != t.preempts_since) return;
  if (now_ < v.segment_from) {
    events_.Push(v.segment_from, kPreemptDue, static_cast<uint32_t>(ThreadIndex(t)), t.wake);
    return;
  }
  t.preempts = -1;
  Preempt(v);
}

// `t` leaves its core with what it holds and waits for one again.
void Sim::Deschedule(SimThread& t) {
  ++r_.preemptions;
  LeaveCore(t, SimThread::St::kRunnable);
  Enqueue(Waiting(t), t, false);
  ReleaseCore(t.core);
}

// Scenario::woken_first_share: that share of the threads that wake wait
// behind the others that did so, ahead of those descheduled with work left;
// the rest (and a descheduled thread always) at the back.
void Sim::Enqueue(RingQueue<int>& q, SimThread& t, bool woken) {
  const double share = s_.woken_first_share;
  t.queued_woken = woken && share > 0 && (share >= 1 || rng_.Uniform() < share);
  if (!t.queued_woken) {
    q.push_back(ThreadIndex(t));
    return;
  }
  size_t i = 0;
  while (i < q.size() && threads_[static_cast<size_t>(q[i])].queued_woken) ++i;
  q.insert(i, ThreadIndex(t));
}

// `t` got a core: a fresh time slice.
void Sim::Run(SimThread& t) {
  const bool client = !t.server && ThreadIndex(t) < s_.nconnect;
  if (client || t.server) {
    ++(client ? r_.client_runs : r_.server_runs);
    if (t.runnable_since >= 0) {
      (client ? r_.client_wait_ns : r_.server_wait_ns) += now_ - t.runnable_since;
    }
  }
  t.runnable_since = -1;
  t.st = SimThread::St::kRunning;
  t.preempts = -1;  // a preemption still due for it lands on nothing
  if (t.wakes_next_of >= 0) {
    // It has the context's lock and releases it: the next waiter wakes. An
    // event, not a wakeup from here: that could preempt this very thread
    // before it has begun.
    Context& ctx = ctxs_[static_cast<size_t>(t.wakes_next_of)];
    ctx.handoff_from = ThreadIndex(t);
    events_.Push(now_, kLockHandoff, static_cast<uint32_t>(t.wakes_next_of), ctx.gen);
    t.wakes_next_of = -1;
  }
  if (!cores_.empty()) cores_[static_cast<size_t>(t.core)].running = ThreadIndex(t);
  t.slice_end = now_ + s_.slice_ns;
  t.on_core_since = now_;
  Continue(t);
}

// How long after its wakeup a thread woken onto idle `core` starts
// (Scenario::idle_wake_ns, or its curve by the core's idle time).
int64_t Sim::IdleWakeNs(int core) const {
  const std::vector<int64_t>& after = s_.idle_wake_after_ns;
  const std::vector<int64_t>& wake = s_.idle_wake_curve_ns;
  if (after.empty() || cores_.empty() || core < 0) return s_.idle_wake_ns;
  const int64_t idle = now_ - cores_[static_cast<size_t>(core)].idle_since;
  if (idle <= after.front()) return wake.front();
  size_t i = 1;
  while (i < after.size() && after[i] < idle) ++i;
  if (i == after.size()) return wake.back();
  const double f =
      static_cast<double>(idle - after[i - 1]) / static_cast<double>(after[i] - after[i - 1]);
  return wake[i - 1] + static_cast<int64_t>(f * static_cast<double>(wake[i] - wake[i - 1]) + 0.5);
}

void Sim::RunOnIdleCore(SimThread& t) {
  const int64_t wake_ns = s_.cores > 0 ? IdleWakeNs(t.core) : 0;
  if (wake_ns <= 0) {
    Run(t);
    return;
  }
  // The core is taken (no other thread is put on it) but idle until then.
  t.st = SimThread::St::kWaking;
  if (!cores_.empty()) cores_[static_cast<size_t>(t.core)].running = ThreadIndex(t);
  NewEpoch(t);
  events_.Push(now_ + wake_ns, kThreadStart, static_cast<uint32_t>(ThreadIndex(t)), t.epoch);
}

void Sim::ReleaseCore(int core) {
  if (!cores_.empty()) {
    Core& c = cores_[static_cast<size_t>(core)];
    c.running = -1;
    c.idle_since = now_;
    if (!c.q.empty()) {
      const int next = c.q.front();
      c.q.pop_front();
      Run(threads_[static_cast<size_t>(next)]);
      return;
    }
    PullInto(core);
    return;
  }
  if (runq_.empty()) {
    ++free_cores_;
    return;
  }
  const int next = runq_.front();
  runq_.pop_front();
  Run(threads_[static_cast<size_t>(next)]);
}

// `t`'s core pauses under it (Scenario::pause_per_s): it stops for a
// length drawn from pause_ns, its run segment starts again when the pause
// ends and its slice is longer by as much.
void Sim::Pause(SimThread& t) {
  const int64_t d = PauseNs();
  t.to_pause = NextPauseInNs();
  t.segment_from = now_ + d;
  t.slice_end += d;
  NewEpoch(t);
  SetTick(t, now_ + d);
}

// An idle core takes the first thread waiting on another core's queue that
// left its core at least migrate_ns ago (Linux does not move a thread whose
// cache is still hot); if every waiting thread is hot, it looks again when
// the first of them cools. False: it stays idle.
bool Sim::PullInto(int core) {
  Core& c = cores_[static_cast<size_t>(core)];
  int64_t next_cool = -1;
  for (Core& other : cores_) {
    for (size_t i = 0; i < other.q.size(); ++i) {
      SimThread& w = threads_[static_cast<size_t>(other.q[i])];
      const int64_t cool_at = w.off_ns + s_.migrate_ns;
      if (cool_at <= now_) {
        other.q.erase(i);
        w.core = core;
        Run(w);
        return true;
      }
      if (next_cool < 0 || cool_at < next_cool) next_cool = cool_at;
    }
  }
  ++c.idle_epoch;
  if (next_cool >= 0) {
    events_.Push(next_cool, kCorePull, static_cast<uint32_t>(core), c.idle_epoch);
  }
  return false;
}

void Sim::OnTick(SimThread& t) {
  Ran(t, now_ - t.segment_from);
  if (pauses_ && t.to_pause <= 0) {
    Pause(t);
    return;
  }
  Continue(t);
}

// Runs `t` on its core until it must wait for time to pass (a tick), gives
// the core up (its slice is over and another thread waits), or has nothing
// left to do.
void Sim::Continue(SimThread& t) {
  while (true) {
    if (!t.has_item) {
      if (t.batch.empty()) {
        EndBatch(t);
        Flush(t);
        if (t.inbox.empty()) {
          LeaveCore(t, SimThread::St::kIdle);
          Flush(t);  // puts the next arrival's event in the queue
          ReleaseCore(t.core);
          return;
        }
        // Read the socket: all it holds, what fits in one read, or one
        // item without batching.
        if (s_.batching && s_.read_bytes <= 0) {
          t.batch.swap(t.inbox);
        } else if (s_.batching) {
          int64_t bytes = 0;
          while (!t.inbox.empty()) {
            const WorkItem& w = t.inbox.front();
            const int64_t b = w.kind == Work::kServerCall ? req_bytes_
                              : w.kind == Work::kCallSeal || w.kind == Work::kSend ||
                                      w.kind == Work::kEof || w.kind == Work::kAccept
                                  ? 0
                              : slots_[w.slot].error_reply ? kReplyOverhead
                                                           : reply_bytes_;
            if (!t.batch.empty() && bytes + b > s_.read_bytes) break;
            bytes += b;
            t.batch.push_back(w);
            t.inbox.pop_front();
          }
        } else {
          t.batch.push_back(t.inbox.front());
          t.inbox.pop_front();
        }
        // One pass over the batch: a server thread stamps when it read each
        // call, and the batch is a read of the socket if it returned bytes
        // (a reply or a call; not the delay line's queue, the resends of a
        // reconnect, a close or an accept, which the real ends do without
        // one). Such a read costs its CPU once, whatever it holds
        // (Scenario::client_read_ns, server_read_ns), all of it when the
        // batch's items are done, before it writes what they produced: most
        // of it is the batch's send (on loopback the send carries the
        // peer's receive path) and the switches around the wakeup, not the
        // recv, and the traced real runs check a call within a few us of
        // the recv that returned it, as the model then does.
        bool bytes = false;
        for (size_t i = 0; i < t.batch.size(); ++i) {
          const WorkItem& w = t.batch[i];
          if (t.server && w.kind == Work::kServerCall && slots_[w.slot].attempt == w.attempt) {
            slots_[w.slot].read_ns = now_;
          }
          bytes = bytes || w.kind == Work::kReplyOpen || w.kind == Work::kServerCall;
        }
        if (bytes && (t.server || ThreadIndex(t) < s_.nconnect)) {
          ++(t.server ? r_.server_reads : r_.client_reads);
          if ((t.server ? s_.server_read_ns : s_.client_read_ns) > 0) {
            t.batch.push_back({0, 0, Work::kRead});  // last: nothing is put behind it
          }
        }
      }
      t.item = t.batch.front();
      t.batch.pop_front();
      if (!BeginItem(t)) {  // stale, done as soon as begun, or parked
        if (t.st == SimThread::St::kParked) return;
        continue;
      }
      t.has_item = true;
    }
    if (now_ >= t.slice_end) {
      if (!Waiting(t).empty()) {
        Deschedule(t);  // with its item, its batch and what the batch holds
        return;
      }
      t.slice_end = now_ + s_.slice_ns;
    }
    if (t.remaining <= 0) {
      t.has_item = false;
      FinishItem(t);
      if (done_ || t.st == SimThread::St::kParked) return;
      continue;
    }
    int64_t until = s_.cores > 0 ? std::min(now_ + t.remaining, t.slice_end) : now_ + t.remaining;
    if (pauses_) until = std::min(until, now_ + t.to_pause);
    t.segment_from = now_;
    NewEpoch(t);
    if (NothingBefore(until)) {
      // The tick would be the next event: handled here as the event loop
      // would (OnTick), without the queue. Same effects in the same order.
      ++inline_ticks_;
      now_ = until;
      cur_order_ = events_.TakeOrder();  // the key its event would have had
      Ran(t, now_ - t.segment_from);
      if (pauses_ && t.to_pause <= 0) {
        Pause(t);
        return;
      }
      continue;
    }
    SetTick(t, until);
    return;
  }
}

// Starts t.item: false when there is nothing to spend CPU on (a stale item,
// a call the window discards, a call that waits for a number).
bool Sim::BeginItem(SimThread& t) {
  WorkItem& w = t.item;
  if (w.kind == Work::kEof) {
    // The receiver finds its connection closed: it reconnects (spending its
    // part of the CPU on its core while the reconnect's time runs, then off
    // its core until the connection is back) and then numbers the calls
    // that were outstanding on it (OnReconnected).
    const int c = static_cast<int>(w.slot);
    Conn& conn = conns_[static_cast<size_t>(c)];
    if (conn.epoch != w.attempt) return false;
    if (conn.closed_ns >= 0) AddStep(close_to_eof_, now_ - conn.closed_ns);
    conn.eof_ns = now_;
    OnDisconnectNoticed(c);
    if (s_.reconnect_server_cpu_ns > 0) {
      // The server accepts the new connection and starts its thread once
      // the connection request reaches it. An event, not a wakeup from
      // here: a wakeup from inside this thread's run could preempt this
      // very thread in the middle of its item.
      events_.Push(now_ + s_.rtt_ns / 2, kAcceptArrive, static_cast<uint32_t>(c), conn.epoch);
    }
    if (s_.reconnect_cpu_ns > 0) {
      t.remaining = s_.reconnect_cpu_ns;
      return true;
    }
    Park(t, conns_[static_cast<size_t>(c)].parked);
    return false;
  }
  if (w.kind == Work::kCreateContext) {
    ctxs_[w.slot].recreate_began_ns = now_;
    t.remaining = s_.gss_setup_cpu_ns;
    return true;
  }
  if (w.kind == Work::kAccept) {
    t.remaining = s_.reconnect_server_cpu_ns;
    return true;
  }
  if (w.kind == Work::kRead) {
    t.remaining = t.server ? s_.server_read_ns : s_.client_read_ns;
    return true;
  }
  Slot& slot = slots_[w.slot];
  if (slot.attempt != w.attempt) return false;  // resent or lost meanwhile
  switch (w.kind) {
    case Work::kReplyOpen:
      t.remaining =
          (slot.error_reply ? s_.CostNs(kReplyOverhead) : open_reply_ns_) + s_.client_call_ns;
      return true;
    case Work::kCallSeal: {
      Context& ctx = CtxOf(slot);
      if (ctx.recreating) {
        t.batch.push_front(w);  // taken up again when the context is ready
        Park(t, ctx.parked);
        return false;
      }
      if (!ctx.gate.empty() ||
          (s_.spread_cap > 0 && !ctx.held.empty() &&
           ctx.next_seq - ctx.held_base >= static_cast<uint64_t>(s_.spread_cap))) {
        StartEncode(slot);  // numbered when the context allows, outside the thread
        return false;
      }
      slot.seq = AssignSeq(ctx);
      slot.gen = ctx.gen;
      slot.holds_seq = true;
      slot.error_reply = false;
      ++slot.attempt;
      w.attempt = slot.attempt;
      slot.state = State::kEncoding;
      slot.numbered_ns = now_;
      if (ctx.ready_ns >= 0 && !t.server) {
        const int ci = static_cast<int>(&ctx - ctxs_.data());
        if (t.resumed_ctx != ci || t.resumed_gen != ctx.gen) {
          t.resumed_ctx = ci;
          t.resumed_gen = ctx.gen;
          AddStep(resume_, now_ - ctx.ready_ns);
        }
      }
      slot.writer = ThreadIndex(t);  // it writes what it numbers
      t.remaining = seal_req_ns_;
      return true;
    }
    case Work::kSend:
      if (slot.state != State::kQueued) return false;
      t.remaining = s_.skew_sender_ns;
      return true;
    case Work::kEof:  // handled above
    case Work::kCreateContext:
    case Work::kAccept:
    case Work::kRead: return false;
    case Work::kServerCall: {
      Context& ctx = CtxOf(slot);
      if (slot.gen != ctx.gen || ctx.server_dead) {
        // RFC 2203 5.3.3.3: a context the server no longer has.
        ++r_.error_replies;
        w.error = true;
        t.remaining = s_.CostNs(kReplyOverhead);
        return true;
      }
      const WindowCheck check = ctx.server.Check(slot.seq);
      if (int64_t{check.lag} > r_.max_spread) r_.max_spread = check.lag;
      // Calls numbered outside the threads (first calls, timeouts) have no
      // path to cut.
      if (slot.numbered_ns > 0 && slot.sealed_ns >= slot.numbered_ns) {
        const std::array<int64_t, 4> path = {slot.sealed_ns - slot.numbered_ns,
                                             std::max<int64_t>(0, slot.written_ns - slot.sealed_ns),
                                             std::max<int64_t>(0, slot.read_ns - slot.written_ns),
                                             now_ - slot.read_ns};
        if (stage_count_ < kMaxStageSamples) {
          AddStages(path);
        }
        if (check.verdict == rpc::SeqVerdict::kBelowWindow &&
            violation_stages_.size() < kMaxStageSamples) {
          violation_stages_.push_back(path);
        }
      }
      if (check.verdict == rpc::SeqVerdict::kAccept) {
        t.remaining = open_req_ns_ + Sample(s_.service_dist, s_.service_ns, s_.service_sigma) +
                      seal_reply_ns_;
        return true;
      }
      // RFC 2203 5.3.3.1: discarded silently; the reaction as in ServerCheck.
      if (check.verdict == rpc::SeqVerdict::kBelowWindow) ++r_.violations;
      ++r_.drops;
      slot.state = State::kLost;
      SetBlocked(slot, true);
      ScheduleTimeout(slot);
      if (check.verdict != rpc::SeqVerdict::kBelowWindow) return false;
      if (s_.reaction == Reaction::kDropDisconnect) {
        // The replies of this batch so far go out, then the connection
        // closes with everything read or unread from it.
        EndBatch(t);
        ServerDisconnect(slot.conn);
      } else if (s_.reaction == Reaction::kDiscardContext) {
        ctx.server_dead = true;
      }
      return false;
    }
  }
  return false;
}

void Sim::FinishItem(SimThread& t) {
  const WorkItem w = t.item;
  if (w.kind == Work::kEof) {
    // Its part of the reconnect done: it waits for the rest unless the
    // connection is back already (and perhaps closed again since: that
    // close is in its socket, to be read next).
    Conn& conn = conns_[w.slot];
    if (!conn.up && conn.epoch == w.attempt) Park(t, conn.parked);
    return;
  }
  if (w.kind == Work::kAccept) return;  // the new connection's calls come next
  if (w.kind == Work::kRead) return;    // the batch's writes come next
  if (w.kind == Work::kCreateContext) {
    // Its GSS work done, it waits off its core for the rest of the
    // exchange (the round trip, the KDC, the other end).
    Context& ctx = ctxs_[w.slot];
    events_.Push(now_ + s_.rtt_ns + (s_.gss_setup_ns - s_.gss_setup_cpu_ns), kContextReady, w.slot,
                 w.attempt);
    Park(t, ctx.parked);
    return;
  }
  Slot& slot = slots_[w.slot];
  if (slot.attempt != w.attempt) return;
  switch (w.kind) {
    case Work::kReplyOpen: {
      if (slot.error_reply) {
        // "Context problem": this thread re-creates the context unless a
        // newer one exists or is being made, then numbers the call again.
        // It waits (the real receiver blocks on the context's lock) while
        // that context is being made.
        // The context is marked as being re-created before this call's
        // number is released, so no call waiting at the spread cap is
        // numbered under the dead one meanwhile.
        Context& ctx = CtxOf(slot);
        const bool creates = slot.gen == ctx.gen && !ctx.recreating;
        if (creates) StartRecreate(ctx, &t);
        ReleaseSeq(slot);
        ResendConn(slot);
        slot.holds_seq = false;
        slot.state = State::kEncoding;
        const WorkItem resend{w.slot, slot.attempt, Work::kCallSeal};
        if (creates && s_.gss_setup_cpu_ns > 0) {
          t.batch.insert(1, resend);  // after its GSS work
          return;
        }
        t.batch.push_front(resend);
        if (ctx.recreating) Park(t, ctx.parked);
        return;
      }
      if (!CountCompletion(slot)) return;
      // The slot's next call goes to the next connection; this thread
      // numbers and seals it now, and writes it when its batch ends.
      slot.issue_ns = now_;
      ToNextConn(slot);
      slot.sent = false;
      slot.holds_seq = false;
      slot.state = State::kEncoding;
      t.batch.push_front({w.slot, slot.attempt, Work::kCallSeal});
      return;
    }
    case Work::kCallSeal:
      slot.state = State::kQueued;
      slot.sealed_ns = now_;
      if (s_.batching) {
        t.held.push_back({w.slot, w.attempt, 0});
      } else {
        QueueCall(slot);
      }
      return;
    case Work::kServerCall:
      if (s_.batching) {
        t.replies.push_back(w);
      } else {
        QueueReply(slot, w.error);
      }
      return;
    case Work::kEof:            // handled above
    case Work::kCreateContext:  // handled above
    case Work::kAccept:         // handled above
    case Work::kRead:           // handled above
      return;
    case Work::kSend:
      if (slot.state != State::kQueued) return;
      slot.written_ns = now_;
      conns_[slot.conn].sendq.push_back({w.slot, w.attempt, now_});
      TryTx(slot.conn);
      return;
  }
}

// What the batch produced leaves the thread: a client receiver's calls, a
// server thread's replies.
void Sim::EndBatch(SimThread& t) {
  for (const QueueItem& q : t.held) {
    Slot& slot = slots_[q.slot];
    if (slot.attempt == q.attempt && slot.state == State::kQueued) QueueCall(slot);
  }
  t.held.clear();
  const int index = ThreadIndex(t);
  if (index < s_.nconnect) {  // a client receiver: the resends of its reconnect written
    Conn& conn = conns_[static_cast<size_t>(index)];
    if (conn.resend_due && conn.up) {
      AddStep(eof_to_resent_, now_ - conn.eof_ns);
      conn.resend_due = false;
    }
  }
  for (const WorkItem& w : t.replies) {
    Slot& slot = slots_[w.slot];
    if (slot.attempt == w.attempt) QueueReply(slot, w.error);
  }
  t.replies.clear();
}

Result<ScenarioResult> Sim::Run() {
  r_.seed = s_.seed;
  for (Slot& slot : slots_) Issue(slot);
  // A scenario that thrashes (e.g. a discarded context whose resends are
  // out of window again) can need far more events than operations; the
  // budget bounds its run time and the result says it was cut short.
  const int64_t budget = std::min(
      kMaxBudget, kBudgetBase + (s_.thread_model ? kThreadBudgetPerOp : kBudgetPerOp) * s_.ops);
  int64_t events = 0;
  // Whether the run ends before an event at `time`: past ~30 years (which
  // keeps every sum of times far from overflow: truncated), or past the
  // scenario's duration (the run's end is the duration).
  const auto ends_before = [this](int64_t time) {
    if (time > kMaxSimNs) {
      r_.truncated = true;
      return true;
    }
    if (s_.duration_ns > 0 && time > s_.duration_ns) {
      now_ = s_.duration_ns;
      cur_order_ = kNoOrder;
      return true;
    }
    return false;
  };
  auto broken = [&] {
    return Status::Internal(std::string("simulator: ") + broken_ + " after " +
                            std::to_string(r_.completed) + " of " + std::to_string(s_.ops) +
                            " operations (model bug)");
  };
  while (!done_) {
    if (broken_) return broken();
    // The next event: the queue's first, or a live tick before it.
    const int tick = FirstLiveTick();
    bool take_tick = tick >= 0;
    if (take_tick && !events_.empty()) {
      const LiveTick& t = live_ticks_.front();
      const Event& top = events_.top();
      take_tick = EventQueue::KeyLess(t.time, t.order, top.time, top.order);
    }
    if (!take_tick && events_.empty()) {
      // Arrivals waiting on a thread's wire while no event is left (the
      // thread parked or waiting for a core that nothing frees): handled as
      // their events were, in key order, before the model is called stuck.
      SimThread* next = nullptr;
      for (SimThread& w : threads_) {
        if (w.wire.empty()) continue;
        const Arrival& a = w.wire.front();
        const Arrival* first = next == nullptr ? nullptr : &next->wire.front();
        if (first == nullptr || EventQueue::KeyLess(a.time, a.order, first->time, first->order)) {
          next = &w;
        }
      }
      if (next != nullptr) {
        const Arrival& a = next->wire.front();
        if (ends_before(a.time)) break;
        now_ = a.time;
        cur_order_ = a.order;
        Flush(*next);
        continue;
      }
      return Status::Internal("simulator: no events left after " + std::to_string(r_.completed) +
                              " of " + std::to_string(s_.ops) + " operations (model deadlock)");
    }
    if (++events - wire_events_ + wire_arrivals_ + inline_ticks_ > budget) {
      r_.truncated = true;
      break;
    }
    Event e;
    if (take_tick) {
      SimThread& t = threads_[static_cast<size_t>(tick)];
      t.tick_live = false;
      live_ticks_.PopFront();
      e = {t.tick_time, t.tick_order, kThreadTick, static_cast<uint32_t>(tick), t.epoch};
    } else {
      e = events_.Pop();
    }
    if (ends_before(e.time)) break;
    if (e.time < now_) {
      return Status::Internal("simulator: an event at " + std::to_string(e.time) +
                              " ns came after " + std::to_string(now_) + " ns (model bug)");
    }
    now_ = e.time;
    cur_order_ = e.order;
    if (take_tick) {  // a live tick: its thread's epoch by construction
      SimThread& t = threads_[e.target];
      if (t.st == SimThread::St::kRunning) OnTick(t);
      continue;
    }
    switch (e.kind) {
      case kEncodeDone: {
        Slot& slot = slots_[e.target];
        if (slot.attempt != e.tag) break;
        slot.state = State::kQueued;
        QueueCall(slot);
        break;
      }
      case kTxReady: {
        Conn& conn = conns_[e.target];
        if (conn.epoch != e.tag) break;
        conn.tx_timer = false;
        TryTx(static_cast<int>(e.target));
        break;
      }
      case kArrive: {
        Slot& slot = slots_[e.target];
        if (slot.attempt != e.tag || slot.cancelled_arrive == e.order) break;
        // Thread model: a call that was on its way when its connection
        // closed; the wire's arrivals before it go into the socket first.
        if (s_.thread_model) Flush(ServerThread(slot.conn));
        OnArrive(slot);
        break;
      }
      case kServiceDone: {
        --busy_workers_;
        PickUp();
        while (!work_.empty() && busy_workers_ < s_.server_threads) {
          QueueItem next = work_.front();
          work_.pop_front();
          if (slots_[next.slot].attempt == next.attempt) StartService(next.slot, next.attempt);
        }
        Slot& slot = slots_[e.target];
        if (slot.attempt != e.tag) break;
        QueueReply(slot, /*error=*/false);
        break;
      }
      case kComplete: {
        Slot& slot = slots_[e.target];
        if (slot.attempt != e.tag) break;
        OnComplete(slot);
        break;
      }
      case kTimeout: {
        Slot& slot = slots_[e.target];
        if (slot.attempt != e.tag || slot.state != State::kLost) break;
        Resend(slot);
        break;
      }
      case kDisconnectNoticed:
        if (conns_[e.target].epoch == e.tag) OnDisconnectNoticed(static_cast<int>(e.target));
        break;
      case kReconnected:
        if (conns_[e.target].epoch == e.tag) OnReconnected(static_cast<int>(e.target));
        break;
      case kContextReady:
        if (ctxs_[e.target].gen == e.tag) OnContextReady(static_cast<int>(e.target));
        break;
      case kLockHandoff: {
        // Waiters of a context being re-created again wait for that one.
        Context& ctx = ctxs_[e.target];
        if (ctx.gen == e.tag && !ctx.recreating) {
          WakeNextWaiter(static_cast<int>(e.target), -1, ctx.handoff_from);
        }
        break;
      }
      case kWireArrive: {
        ++wire_events_;
        SimThread& t = threads_[e.target];
        t.wire_armed = false;
        Flush(t);
        break;
      }
      case kAcceptArrive:
        if (conns_[e.target].epoch == e.tag) {
          Deliver(ServerThread(static_cast<int>(e.target)), {e.target, e.tag, Work::kAccept});
        }
        break;
      case kEofArrive:
        if (conns_[e.target].epoch == e.tag) {
          Deliver(ClientThread(static_cast<int>(e.target)), {e.target, e.tag, Work::kEof});
        }
        break;
      case kSendDue: {
        Slot& slot = slots_[e.target];
        if (slot.attempt == e.tag && slot.state == State::kQueued) {
          Deliver(SenderThread(), {e.target, e.tag, Work::kSend});
        }
        break;
      }
      case kThreadStart: {
        SimThread& t = threads_[e.target];
        if (t.epoch == e.tag && t.st == SimThread::St::kWaking) Run(t);
        break;
      }
      case kCorePull: {
        Core& c = cores_[e.target];
        if (c.idle_epoch == e.tag && c.running < 0) PullInto(static_cast<int>(e.target));
        break;
      }
      case kThreadTick: {
        SimThread& t = threads_[e.target];
        if (t.epoch == e.tag && t.st == SimThread::St::kRunning) OnTick(t);
        break;
      }
      case kPreemptDue: {
        SimThread& t = threads_[e.target];
        if (t.wake == e.tag) OnPreemptDue(t);
        break;
      }
    }
  }
  if (stall_since_ >= 0) stalled_ns_ += now_ - stall_since_;
  if (broken_) return broken();
  // A retransmission counts once it has left.
  for (Conn& conn : conns_) {
    if (!Passed(conn.tx_free_at, conn.tx_free_order)) UncountRetransmission(conn);
  }
  // The arrivals that have come but wait in a wire for their thread's next
  // read were events handled by now.
  for (const SimThread& t : threads_) {
    for (size_t i = 0; i < t.wire.size() && Passed(t.wire[i].time, t.wire[i].order); ++i) {
      ++wire_arrivals_;
    }
  }
  r_.events = events - wire_events_ + wire_arrivals_ + inline_ticks_;
  r_.elapsed_ns = now_;
  if (s_.thread_model && s_.cores > 0 && now_ > 0) {
    for (const SimThread& t : threads_) {
      if (t.st == SimThread::St::kRunning) busy_ns_ += now_ - t.on_core_since;
    }
    r_.idle_fraction =
        std::max(0.0, 1.0 - static_cast<double>(busy_ns_) /
                                (static_cast<double>(s_.cores) * static_cast<double>(now_)));
  }
  if (now_ > 0) {
    r_.ops_per_s = static_cast<double>(r_.completed) * 1e9 / static_cast<double>(now_);
    r_.mb_per_s = r_.ops_per_s * static_cast<double>(s_.io_size) / 1e6;
    r_.stalled_fraction = static_cast<double>(stalled_ns_) / static_cast<double>(now_);
  }
  if (stage_count_ > 0) {
    int64_t median[4];
    const size_t n = stage_count_;
    const auto rank = [n](double q) {
      return std::min(n - 1, static_cast<size_t>(q * static_cast<double>(n)));
    };
    const size_t ranks[] = {rank(0.5), rank(0.99)};
    for (size_t i = 0; i < 4; ++i) {
      int64_t at[2];
      StageValues(i, ranks, at);
      median[i] = at[0];
      r_.stage_p50_ns[i] = at[0];
      r_.stage_p99_ns[i] = at[1];
    }
    for (const auto& p : violation_stages_) {
      int worst = 0;
      for (int i = 1; i < 4; ++i) {
        if (p[static_cast<size_t>(i)] - median[i] > p[static_cast<size_t>(worst)] - median[worst]) {
          worst = i;
        }
      }
      ++r_.violation_stage[worst];
    }
  }
  for (const auto& pair : {std::pair{&close_to_eof_, &r_.close_to_eof},
                           {&eof_to_resent_, &r_.eof_to_resent},
                           {&recreation_, &r_.recreation},
                           {&resume_, &r_.resume}}) {
    std::vector<int64_t>& v = *pair.first;
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    const auto at = [&v](double q) {
      return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
    };
    *pair.second = {static_cast<int64_t>(v.size()), at(0.5), at(0.9)};
  }
  // Nearest-rank percentiles (as common::LatencySamples), by selection
  // instead of a full sort.
  const size_t n = latencies_.size();
  if (n > 0) {
    size_t ranks[3];
    const double qs[] = {0.50, 0.99, 0.999};
    for (size_t i = 0; i < 3; ++i) {
      const size_t rank = static_cast<size_t>(std::ceil(qs[i] * static_cast<double>(n)));
      ranks[i] = rank == 0 ? 0 : rank - 1;
    }
    int64_t at[3];
    OrderStatistics<int64_t>(latencies_, latency_most_, ranks, at);
    r_.p50_ns = at[0];
    r_.p99_ns = at[1];
    r_.p999_ns = at[2];
  }
  return r_;
}

}  // namespace

Result<ScenarioResult> Simulate(const Scenario& scenario) {
  SECMODE_RETURN_IF_ERROR(scenario.Validate());
  Sim sim(scenario);
  return sim.Run();
}

}  // namespace secmode::sim
