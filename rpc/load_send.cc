// The load generator's send path (rpc/load_runner.h): a call numbered and
// checked against the window at transmit, the batch a receiver or delay
// line writes with one send per connection, each connection's write queue
// (no thread sleeps on a connection's lock with numbered calls in hand),
// and the delay lines of LoadOptions::delay_us and the skew.
#include <sys/prctl.h>

#include "rpc/load_runner.h"

namespace secmode::rpc::load_internal {

thread_local SendBatch* tl_batch = nullptr;
thread_local TraceThread tl_thread = TraceThread::kStart;
thread_local uint32_t tl_thread_index = 0;

void Runner::Transmit(Slot& s, Bytes& record, ClientCallEvent* traced) {
  AuthBox* box = s.box;
  uint32_t window = s.auth->window();
  if (window > 0) {
    uint32_t hi = box->max_sent_seq.load(std::memory_order_relaxed);
    if (o_.reencode && hi >= s.seq + window) {
      // The Linux client's check before transmission: this number would be
      // below the server's window on arrival, so take a fresh one.
      thread_local Bytes args;
      args.clear();
      EncodeCompoundArgs(s.req, &args);
      if (s.auth->EncodeCall(s.xid, kNfsProcCompound, args, &record, &s.seq).ok()) {
        reencodes_++;
        if (traced) {
          traced->seq = s.seq;
          traced->reencoded = true;
        }
      }
    }
    while (hi < s.seq && !box->max_sent_seq.compare_exchange_weak(hi, s.seq)) {
    }
  }
  s.sent_ns = common::NowNs();
  Conn& c = *conns_[s.conn];
  uint8_t mark[4];
  uint32_t m = kLastFragment | static_cast<uint32_t>(record.size());
  mark[0] = static_cast<uint8_t>(m >> 24);
  mark[1] = static_cast<uint8_t>(m >> 16);
  mark[2] = static_cast<uint8_t>(m >> 8);
  mark[3] = static_cast<uint8_t>(m);
  if (traced) {
    traced->written_by = tl_thread;
    traced->written_by_index = tl_thread_index;
  }
  if (tl_batch != nullptr && record.size() <= kBatchMaxRecord) {
    Bytes& out = tl_batch->per_conn[s.conn];
    out.insert(out.end(), mark, mark + 4);
    out.insert(out.end(), record.begin(), record.end());
    if (traced) tl_batch->traced.push_back(*traced);
    return;
  }
  // A large call is written by its own thread, after what was queued
  // before it (the connection's order).
  c.write_mu.lock();
  WriteQueued(c);
  // A failed send shows up as a disconnect on the receiving side.
  (void)WriteAll2(c.fd, ByteView(mark, 4), record);
  if (traced) {
    traced->written_ns = common::NowNs();
    o_.trace->Record(*traced);
  }
  Release(c);
}

void Runner::RecordWritten(std::vector<ClientCallEvent>& events) {
  if (events.empty()) return;
  const uint64_t now = common::NowNs();
  for (auto& e : events) {
    e.written_ns = now;
    o_.trace->Record(e);
  }
}

void Runner::WriteQueued(Conn& c) {
  while (true) {
    {
      std::lock_guard<std::mutex> l(c.pending_mu);
      if (c.pending.empty()) return;
      c.writing.swap(c.pending);
      c.writing_traced.swap(c.pending_traced);
    }
    // A failed send shows up as a disconnect on the receiving side.
    (void)WriteAll(c.fd, c.writing);
    c.writing.clear();
    RecordWritten(c.writing_traced);
    c.writing_traced.clear();
  }
}

void Runner::Release(Conn& c) {
  WriteQueued(c);
  c.write_mu.unlock();
  WriteQueuedIfFree(c);
}

void Runner::WriteQueuedIfFree(Conn& c) {
  while (true) {
    {
      std::lock_guard<std::mutex> l(c.pending_mu);
      if (c.pending.empty()) return;
    }
    if (!c.write_mu.try_lock()) return;  // its holder looks again after it lets go
    WriteQueued(c);
    c.write_mu.unlock();
  }
}

void Runner::WriteOrQueue(Conn& c, Bytes& out, std::vector<ClientCallEvent>* traced) {
  if (c.write_mu.try_lock()) {
    // Free: written from here, after what others left queued before.
    WriteQueued(c);
    (void)WriteAll(c.fd, out);
    if (traced) RecordWritten(*traced);
    out.clear();
    Release(c);
    return;
  }
  {
    std::lock_guard<std::mutex> l(c.pending_mu);
    c.pending.insert(c.pending.end(), out.begin(), out.end());
    if (traced) {
      c.pending_traced.insert(c.pending_traced.end(), traced->begin(), traced->end());
    }
  }
  out.clear();
  WriteQueuedIfFree(c);
}

void Runner::Flush(SendBatch* batch) {
  // Each connection's calls with one send, in connection order; a
  // connection another thread is writing takes them from its queue.
  std::vector<ClientCallEvent>& events = batch->conn_traced;
  for (size_t i = 0; i < batch->per_conn.size(); ++i) {
    Bytes& out = batch->per_conn[i];
    if (out.empty()) continue;
    if (o_.trace) {
      events.clear();
      for (const auto& e : batch->traced) {
        if (e.conn == i) events.push_back(e);
      }
    }
    WriteOrQueue(*conns_[i], out, o_.trace ? &events : nullptr);
  }
  batch->traced.clear();
}

void Runner::SendLoop(Conn* c) {
  // The delay must not grow by the kernel's default 50 us timer slack.
  prctl(PR_SET_TIMERSLACK, 1UL);
  tl_thread = TraceThread::kSender;
  tl_thread_index = static_cast<uint32_t>(c->index);
  const uint64_t cpu0 = common::ThreadCpuNs();
  uint64_t sent = 0;
  // The calls due at one wakeup are written with one send (small ones), as
  // a receiver's batch is: the delay line must not cost a system call per
  // call where the network it emulates would not.
  SendBatch batch;
  batch.per_conn.resize(conns_.size());
  std::vector<SendItem> due;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(c->q_mu);
      c->q_cv.wait(lock, [&] { return stopping_ || !c->q.empty(); });
      if (stopping_) {
        sender_cpu_ns_ += common::ThreadCpuNs() - cpu0;
        sender_calls_ += sent;
        return;
      }
      // The queue is in due order (one delay per connection): sleep until
      // the first is due, then take every call due by then.
      // Woken early only by the end of the run (a call queued meanwhile is
      // due later than the first).
      const uint64_t first_due = c->q.front().due_ns;
      if (first_due > common::NowNs()) {
        c->q_cv.wait_until(lock, common::SteadyAt(first_due), [&] { return stopping_.load(); });
        if (stopping_) continue;
      }
      const uint64_t t = common::NowNs();
      while (!c->q.empty() && c->q.front().due_ns <= t) {
        due.push_back(std::move(c->q.front()));
        c->q.pop_front();
      }
    }
    tl_batch = &batch;
    for (SendItem& item : due) {
      Slot& s = *slots_[item.slot];
      std::lock_guard<std::mutex> lock(s.mu);
      if (!s.busy || s.xid != item.xid) continue;  // retransmitted meanwhile
      Transmit(s, item.record, o_.trace ? &item.traced : nullptr);
      ++sent;
    }
    tl_batch = nullptr;
    Flush(&batch);
    due.clear();
  }
}

}  // namespace secmode::rpc::load_internal
