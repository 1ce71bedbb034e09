#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

// The rest of the simulator, in one translation unit with this file
// (simulator_state.inc says why).
#include "sim/simulator_state.inc"
#include "sim/simulator_stats.inc"
#include "sim/simulator_threads.inc"

namespace secmode::sim {
namespace {

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
    conn.in_tx_lag = -1;
    if (slot.gen == ctx.gen) {
      conn.in_tx_lag = static_cast<int64_t>(CountLag(
          r_.sent_lags, ctx.xmit_any && ctx.seq_xmit > slot.seq ? ctx.seq_xmit - slot.seq : 0));
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
  // Nor was it sent as a capture would see it.
  if (conn.in_tx_lag >= 0) --r_.sent_lags[static_cast<size_t>(conn.in_tx_lag)];
  conn.in_tx_lag = -1;
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
  CountLag(r_.checked_lags, w.lag);
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
  if (s_.reaction == rpc::WindowPolicy::kDropDisconnect) {
    ServerDisconnect(slot.conn);
  } else if (s_.reaction == rpc::WindowPolicy::kDiscardContext) {
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

// Handles one event from the queue.
void Sim::Handle(const Event& e) {
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
    Handle(e);
  }
  if (stall_since_ >= 0) stalled_ns_ += now_ - stall_since_;
  if (broken_) return broken();
  Summarise(events);
  return std::move(r_);
}

}  // namespace

common::Result<ScenarioResult> Simulate(const Scenario& scenario) {
  SECMODE_RETURN_IF_ERROR(scenario.Validate());
  Sim sim(scenario);
  return sim.Run();
}

}  // namespace secmode::sim
