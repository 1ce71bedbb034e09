// The thread model (Scenario::thread_model): client receiver, server and
// delay-line threads, their batches, and the cores they run on (ticks,
// time slices, preemption, wakeups, pauses). Part of Sim (simulator_internal.h).
#include <algorithm>
#include <cmath>

#include "sim/simulator_internal.h"

namespace secmode::sim::detail {

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
      if (s_.reaction == rpc::WindowPolicy::kDropDisconnect) {
        // The replies of this batch so far go out, then the connection
        // closes with everything read or unread from it.
        EndBatch(t);
        ServerDisconnect(slot.conn);
      } else if (s_.reaction == rpc::WindowPolicy::kDiscardContext) {
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

}  // namespace secmode::sim::detail
