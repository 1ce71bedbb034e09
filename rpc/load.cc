#include "rpc/load.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/backoff.h"
#include "common/clock.h"
#include "common/format.h"
#include "common/latency.h"
#include "common/machine.h"
#include "common/socket.h"
#include "rpc/client_auth.h"
#include "rpc/gss_client.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Connect;
using common::Deadline;
using common::Fd;
using common::Result;
using common::Status;
using common::WaitFor;
using common::WriteAll;
using common::WriteAll2;

Result<Bytes> BlockingRoundTrip(const std::string& host, uint16_t port, ByteView call,
                                Deadline connect, Deadline reply) {
  SECMODE_ASSIGN_OR_RETURN(Fd fd, Connect(host, port, Deadline::Earlier(connect, reply)));
  return BlockingCall(fd.get(), call, reply, "reply from " + host + ":" + std::to_string(port));
}

Result<Bytes> BlockingCall(int fd, ByteView call, Deadline deadline, const std::string& what) {
  const uint64_t t0 = common::NowNs();
  if (!deadline.none()) {
    // A send that blocks (the peer reads nothing) gives up at the deadline.
    const int ms = std::max(1, deadline.PollMs());
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  Bytes mark;
  AppendRecordMark(static_cast<uint32_t>(call.size()), &mark);
  Status sent = WriteAll2(fd, mark, call);
  if (!sent.ok()) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return Status::Unavailable("sending the call (" + std::to_string(call.size()) +
                                 " bytes): the peer took nothing for " +
                                 std::to_string((common::NowNs() - t0) / 1000000) +
                                 " ms, waiting for a " + what);
    }
    return sent;
  }
  RecordReader reader;
  while (true) {
    ByteView rec;
    SECMODE_ASSIGN_OR_RETURN(bool got, reader.Next(&rec));
    if (got) return Bytes(rec.begin(), rec.end());
    if (!deadline.none()) SECMODE_RETURN_IF_ERROR(WaitFor(fd, false, deadline, what));
    auto space = reader.WriteSpace(4096);
    ssize_t n = recv(fd, space.data(), space.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError("waiting for a " + what + ": recv: " + std::strerror(errno));
    if (n == 0) return Status::IoError("the connection was closed before the " + what);
    reader.Commit(static_cast<size_t>(n));
  }
}

namespace {

// "2.5" (seconds in messages).
std::string Seconds(double s) { return common::Fmt("%g", s); }

// The client's security for `service` (0: AUTH_SYS); RPCSEC_GSS contexts are
// created over a short connection of their own (RFC 2203 5.2), each round
// trip within o.init_timeout_ms and `run` (the run's deadline).
Result<std::shared_ptr<ClientAuth>> NewLoadAuth(const LoadOptions& o, uint32_t service,
                                                Deadline run = {}) {
  if (service == 0) return std::shared_ptr<ClientAuth>(NewSysAuth(kNfsProgram, kNfsVersion));
  GssClientConfig cfg;
  cfg.ccache = o.ccache;
  cfg.target = o.target;
  cfg.enctype = o.enctype;
  cfg.engine = o.engine;
  cfg.prog = kNfsProgram;
  cfg.vers = kNfsVersion;
  cfg.service = service;
  SECMODE_ASSIGN_OR_RETURN(auto ctx, GssClientContext::Establish(cfg, [&](ByteView call) {
                             return BlockingRoundTrip(
                                 o.host, o.port, call,
                                 Deadline::Earlier(Deadline::AfterMs(o.connect_timeout_ms), run),
                                 Deadline::Earlier(Deadline::AfterMs(o.init_timeout_ms), run));
                           }));
  return std::shared_ptr<ClientAuth>(NewGssAuth(kNfsProgram, kNfsVersion, std::move(ctx), service));
}

// RFC 2203 5.4: ends the contexts of `auths` on the server, one DESTROY
// after the other on one short connection, best effort within `deadline`.
// A DESTROY denied with RPCSEC_GSS_CREDPROBLEM or CTXPROBLEM (5.3.3.3: the
// server does not hold the handle) finds a context the server already
// forgot, e.g. discarded for a call that reached it after the run's last
// reply was read; it counts in *gone, not as left. Returns how many were
// destroyed; *first_error says why the first one left was.
uint64_t DestroyContexts(const LoadOptions& o,
                         const std::vector<std::shared_ptr<ClientAuth>>& auths, Deadline deadline,
                         uint64_t* gone, std::string* first_error) {
  std::vector<ClientAuth*> todo;
  for (const auto& a : auths) {
    if (a && a->has_context()) todo.push_back(a.get());
  }
  if (todo.empty()) return 0;
  const std::string where = o.host + ":" + std::to_string(o.port);
  auto note = [&](const Status& s) {
    if (first_error->empty()) *first_error = s.ToString();
  };
  auto fd =
      Connect(o.host, o.port, Deadline::Earlier(Deadline::AfterMs(o.connect_timeout_ms), deadline));
  if (!fd.ok()) {
    note(fd.status().Annotate("RPCSEC_GSS_DESTROY"));
    return 0;
  }
  uint64_t destroyed = 0;
  uint32_t xid = 0x5d000000u;
  for (ClientAuth* a : todo) {
    bool transport_failed = false;
    Bytes reply;
    Status s = a->Destroy(++xid, [&](ByteView call) -> Result<Bytes> {
      auto r = BlockingCall(fd->get(), call, deadline, "RPCSEC_GSS_DESTROY reply from " + where);
      transport_failed = !r.ok();
      if (r.ok()) reply = *r;
      return r;
    });
    if (s.ok()) {
      ++destroyed;
      continue;
    }
    ReplyHeader h;
    if (!transport_failed && DecodeReplyHeader(reply, &h).ok() && ContextGone(h)) {
      ++*gone;
      continue;
    }
    note(s.Annotate("RPCSEC_GSS_DESTROY"));
    if (transport_failed) break;  // the connection or the time is gone
  }
  return destroyed;
}

// The security state a group of connections shares: one context (and one
// sequence counter) or, per connection, its own.
struct AuthBox {
  std::mutex mu;
  std::shared_ptr<ClientAuth> auth;
  uint64_t gen = 0;
  bool dropped = false;  // the server dropped `auth` and no new one was made
  std::atomic<uint32_t> max_sent_seq{0};
};

// A server that closes every connection as soon as it accepts it (one at
// its connection cap) is reconnected to at once the first time, then after
// 1 ms, 2 ms ... up to 1 s (common/backoff.h), not thousands of times a
// second.
constexpr common::Backoff::Options kReconnectBackoff{1000000, 1000000000};

struct Slot {
  std::mutex mu;
  bool busy = false;
  uint32_t xid = 0, seq = 0;
  int conn = 0;
  uint64_t first_ns = 0, sent_ns = 0;
  // Issued to a connection whose receiver has seen it end: not numbered or
  // written until the reconnect (as a Linux client's task waits for its
  // transport to connect and is marshalled at transmit).
  bool waits_for_conn = false;
  uint32_t conn_epoch = 0;  // the connection's epoch it was issued for
  NfsRequest req;
  std::shared_ptr<ClientAuth> auth;
  AuthBox* box = nullptr;
  uint64_t gen = 0;
};

struct SendItem {
  uint32_t slot = 0, xid = 0;
  uint64_t due_ns = 0;
  Bytes record;
  ClientCallEvent traced;  // tracing only
};

struct Conn {
  int index = 0;
  // Writers hold write_mu while they send; the fd changes (a reconnect)
  // only under write_mu and fd_mu both, so the end of the run can shut it
  // down under fd_mu alone, even while a writer is blocked in send.
  std::mutex write_mu, fd_mu;
  int fd = -1;
  // A batch's calls for this connection that found write_mu taken wait
  // here, and the writer holding it writes them before it lets go
  // (Runner::WriteQueued), as the Linux client's transport lock holder
  // transmits the requests queued on its transport: no thread sleeps on
  // the lock with numbered calls in hand (with 8 connections such sleeps
  // behind a descheduled holder were most of the client's long holds).
  // Guarded by pending_mu, taken after write_mu, never before it.
  std::mutex pending_mu;
  Bytes pending;
  // Their trace events (tracing); written_by stays the thread that queued them.
  std::vector<ClientCallEvent> pending_traced;
  // What the writer holding write_mu takes from `pending` to write (guarded
  // by write_mu; the two swap, so neither allocates once grown).
  Bytes writing;
  std::vector<ClientCallEvent> writing_traced;
  // Replies this connection's receiver read, published by it when it
  // reconnects and when it ends (read after it was joined).
  uint64_t replies = 0;
  // The waits between reconnects (kReconnectBackoff): reset when the
  // connection that ended had answered something (replies had grown past
  // replies_at_connect). The receiver's own.
  common::Backoff backoff{kReconnectBackoff, 0};
  uint64_t replies_at_connect = 0;
  AuthBox* box = nullptr;
  // How long each call is held before it is written (LoadOptions::delay_us,
  // plus skew_delay_us on the skewed connection); 0: written at once.
  uint64_t delay_ns = 0;
  // Set by the receiver from the end of the stream until the new
  // connection is in place: calls issued to it meanwhile wait.
  std::atomic<bool> reconnecting{false};
  // Counts the connection's replacements (set with the new fd): a call
  // issued for an older one is outstanding on a connection that is gone.
  std::atomic<uint32_t> epoch{0};
  std::mutex q_mu;
  std::condition_variable q_cv;
  std::deque<SendItem> q;
  std::thread receiver, sender;
};

// Calls issued while a receiver thread handles one batch of replies are
// collected per connection and written with one send each at the end of
// the batch (small calls only), as a kernel client's socket would coalesce
// them; this keeps the load generator from being the bottleneck.
struct SendBatch {
  std::vector<Bytes> per_conn;
  std::vector<ClientCallEvent> traced;       // calls in per_conn, written at Flush
  std::vector<ClientCallEvent> conn_traced;  // Flush: one connection's of them
};
thread_local SendBatch* tl_batch = nullptr;
// The thread that is numbering and writing calls (tracing).
thread_local TraceThread tl_thread = TraceThread::kStart;
thread_local uint32_t tl_thread_index = 0;
constexpr size_t kBatchMaxRecord = 64 << 10;

class Runner {
 public:
  explicit Runner(const LoadOptions& o) : o_(o) {}
  ~Runner() {
    // Only reached with open sockets when Run() failed part way.
    for (auto& c : conns_) {
      if (c->fd >= 0) close(c->fd);
    }
  }
  Result<LoadReport> Run(std::optional<LoadReport>* measured);

 private:
  Status MakeAuth(AuthBox* box);
  // A connect gives up at its own timeout or the run's deadline.
  Deadline ConnectDeadline() const {
    return Deadline::Earlier(Deadline::AfterMs(o_.connect_timeout_ms), run_deadline_);
  }
  void Recreate(AuthBox* box, uint64_t gen, uint32_t auth_stat);
  // LoadOptions::nfs41: the session's set-up and end (rpc/nfs41.h), each
  // COMPOUND through SessionCall on session_fd_.
  Status OpenSession();
  Status CloseSession();
  Result<Bytes> SessionCall(ByteView args);
  void Issue(uint32_t index, bool fresh);  // slot lock held
  // Slot lock held; `traced` is the call's trace event (when tracing).
  void Transmit(Slot& s, Bytes& record, ClientCallEvent* traced);
  void Receive(Conn* c);
  void SendLoop(Conn* c);
  void Monitor();
  void Reconnect(Conn* c, const std::string& why);
  // Ends the run with `s` (the first failure wins).
  void Fail(const Status& s) {
    {
      std::lock_guard<std::mutex> l(err_mu_);
      if (failure_.ok()) failure_ = s;
    }
    failed_ = true;
  }
  std::string ConnName(const Conn* c) const {
    return "connection " + std::to_string(c->index + 1) + " of " + std::to_string(conns_.size()) +
           " to " + o_.host + ":" + std::to_string(o_.port);
  }
  // Destroys the contexts the run holds (RFC 2203 5.4) into r's counters.
  void DestroyAll(LoadReport* r);
  void Flush(SendBatch* batch);
  // Queues `out` (with its calls' trace events) for connection c and writes
  // what is queued unless another writer holds the connection, which then
  // writes it.
  void WriteOrQueue(Conn& c, Bytes& out, std::vector<ClientCallEvent>* traced);
  // With c.write_mu held: writes what is queued for c until nothing is.
  void WriteQueued(Conn& c);
  // Lets c.write_mu go, leaving nothing queued behind: what is queued is
  // written first, and what was queued meanwhile by WriteQueuedIfFree.
  void Release(Conn& c);
  // Stamps calls written now and records them (tracing).
  void RecordWritten(std::vector<ClientCallEvent>& events);
  // After c.write_mu was released: takes it again while something is queued
  // (queued after the holder's last look, by a writer that found it taken).
  void WriteQueuedIfFree(Conn& c);
  void NoteError(const std::string& e) {
    errors_++;
    std::lock_guard<std::mutex> l(err_mu_);
    if (first_error_.empty()) first_error_ = e;
  }

  LoadOptions o_;
  uint32_t service_ = 0;
  std::vector<std::unique_ptr<AuthBox>> boxes_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::unique_ptr<Nfs41Session> session_;  // LoadOptions::nfs41
  Fd session_fd_;
  std::atomic<uint64_t> rr_{0}, xid_counter_{1}, offset_counter_{0};
  std::atomic<bool> stopping_{false}, failed_{false};
  Deadline run_deadline_;
  double deadline_seconds_ = 0;
  Status failure_;  // guarded by err_mu_
  std::atomic<uint64_t> measure_start_{~0ull}, measure_end_{~0ull};
  common::ThreadUsageTotal receivers_;
  std::atomic<uint64_t> receiver_reads_{0}, sender_cpu_ns_{0}, sender_calls_{0};
  std::atomic<uint64_t> ops_{0}, retransmits_{0}, timeouts_{0}, disconnects_{0}, recreations_{0},
      reencodes_{0}, stale_{0}, errors_{0}, reconnect_wait_ns_{0};
  std::mutex err_mu_;
  std::string first_error_;
  std::mutex samples_mu_;
  common::LatencySamples samples_;
  std::thread monitor_;
  // Wakes the monitor from its wait between scans when the run stops, so
  // ending a run never waits out a scan period (timeout_ms / 4).
  std::mutex monitor_mu_;
  std::condition_variable monitor_cv_;
};

Status Runner::MakeAuth(AuthBox* box) {
  SECMODE_ASSIGN_OR_RETURN(box->auth, NewLoadAuth(o_, service_, run_deadline_));
  box->max_sent_seq = 0;
  return Status::Ok();
}

void Runner::Recreate(AuthBox* box, uint64_t gen, uint32_t auth_stat) {
  std::lock_guard<std::mutex> lock(box->mu);
  if (box->gen != gen || box->dropped) return;  // someone already did, or tried and failed
  if (failed_ || stopping_) return;
  const uint32_t traced_conn = tl_thread_index;
  if (o_.trace) {
    o_.trace->Record(
        SetupEvent{SetupEventKind::kClientRecreateBegan, traced_conn, common::NowNs()});
  }
  Status s = MakeAuth(box);
  if (o_.trace) {
    o_.trace->Record(SetupEvent{SetupEventKind::kClientRecreateDone, traced_conn, common::NowNs()});
  }
  if (!s.ok()) {
    // The server has dropped the context and no new one can be made: no
    // call of this context can complete any more.
    NoteError("re-creating the RPCSEC_GSS context: " + s.ToString());
    box->dropped = true;
    const std::string conn =
        traced_conn < conns_.size() ? ConnName(conns_[traced_conn].get()) + ": " : "";
    Fail(s.Annotate(conn + "re-creating the RPCSEC_GSS context the server dropped (" +
                    AuthStatName(auth_stat) + ")"));
    return;
  }
  box->gen++;
  recreations_++;
}

void Runner::Issue(uint32_t index, bool fresh) {
  Slot& s = *slots_[index];
  if (fresh) {
    s.req.op = o_.op;
    s.req.count = o_.op == NfsOp::kGetattr ? 0 : o_.size;
    uint64_t k = offset_counter_.fetch_add(1);
    // GETATTR moves no data: its size may be anything, 0 included.
    uint64_t span = o_.size == 0 || o_.size >= kNfsFileSize ? 1 : kNfsFileSize / o_.size;
    s.req.offset = (k % span) * o_.size;
    s.req.slot = index;
    s.req.sequence++;
    s.first_ns = common::NowNs();
  }
  s.busy = true;
  int ci = static_cast<int>(rr_.fetch_add(1) % conns_.size());
  s.conn = ci;
  const bool waited = s.waits_for_conn;
  s.waits_for_conn = false;
  if (conns_[ci]->reconnecting.load()) {
    // Its receiver is reconnecting: the call waits for the new connection
    // (Reconnect numbers and writes it) instead of going to the dead one.
    s.waits_for_conn = true;
    s.sent_ns = common::NowNs();  // for the timeout monitor: it waits from now
    return;
  }
  s.conn_epoch = conns_[ci]->epoch.load();
  s.box = conns_[ci]->box;
  {
    std::lock_guard<std::mutex> lock(s.box->mu);
    s.auth = s.box->auth;
    s.gen = s.box->gen;
  }
  // xid: low 16 bits name the slot, the rest make every transmission unique.
  s.xid = static_cast<uint32_t>(xid_counter_.fetch_add(1) << 16) | index;
  thread_local Bytes args, record;
  args.clear();
  EncodeCompoundArgs(s.req, &args);
  ClientCallEvent traced;
  if (o_.trace) {
    traced.context = s.auth->context_id();
    traced.conn = static_cast<uint32_t>(ci);
    traced.numbered_by = tl_thread;
    traced.numbered_by_index = tl_thread_index;
    traced.retransmission = !fresh && !waited;
    traced.numbered_ns = common::NowNs();
  }
  Status e = s.auth->EncodeCall(s.xid, kNfsProcCompound, args, &record, &s.seq);
  if (!e.ok()) {
    NoteError("encoding a call: " + e.ToString());
    s.busy = false;
    return;
  }
  if (o_.trace) {
    traced.seq = s.seq;
    traced.queued_ns = common::NowNs();
  }
  Conn& c = *conns_[ci];
  if (c.delay_ns > 0) {
    SendItem item;
    item.slot = index;
    item.xid = s.xid;
    item.due_ns = common::NowNs() + c.delay_ns;
    item.record = record;
    item.traced = traced;
    s.sent_ns = item.due_ns;
    {
      std::lock_guard<std::mutex> lock(c.q_mu);
      c.q.push_back(std::move(item));
    }
    c.q_cv.notify_one();
    return;
  }
  Transmit(s, record, o_.trace ? &traced : nullptr);
}

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

void Runner::Reconnect(Conn* c, const std::string& why) {
  disconnects_++;
  // Calls issued to this connection from now on wait for the new one; those
  // written to the old one before are resent below.
  c->reconnecting = true;
  // A connection that answered nothing before it ended does not count as
  // one that worked: the next attempt waits longer (until the run stops).
  if (c->replies > c->replies_at_connect) c->backoff.Reset();
  const uint64_t wait_ns = o_.reconnect_backoff ? c->backoff.Next() : 0;
  if (wait_ns > 0) {
    const uint64_t t0 = common::NowNs();
    std::unique_lock<std::mutex> lock(monitor_mu_);
    monitor_cv_.wait_for(lock, std::chrono::nanoseconds(wait_ns), [&] { return stopping_.load(); });
    reconnect_wait_ns_ += common::NowNs() - t0;
  }
  c->replies_at_connect = c->replies;
  auto fd = Connect(o_.host, o_.port, ConnectDeadline());
  if (o_.trace) {
    o_.trace->Record(SetupEvent{SetupEventKind::kClientConnected, static_cast<uint32_t>(c->index),
                                common::NowNs()});
  }
  {
    std::lock_guard<std::mutex> lock(c->write_mu);
    std::lock_guard<std::mutex> fd_lock(c->fd_mu);
    if (c->fd >= 0) close(c->fd);
    c->fd = fd.ok() ? fd->Release() : -1;
    c->epoch++;
    // Calls queued for the old connection were never written: they are
    // resent below with the others outstanding on it.
    std::lock_guard<std::mutex> pending_lock(c->pending_mu);
    c->pending.clear();
    c->pending_traced.clear();
  }
  // What was queued for the new connection while this held it.
  WriteQueuedIfFree(*c);
  c->reconnecting = false;
  if (!fd.ok()) {
    NoteError("reconnecting: " + fd.status().ToString());
    if (!stopping_) {
      Fail(fd.status().Annotate(ConnName(c) + ": the server closed it (" + why + ") after " +
                                std::to_string(c->replies) +
                                " replies on it, and reconnecting failed"));
    }
    return;
  }
  // Resend what was outstanding on the lost connection, and send what
  // waited for the new one (calls sent on the new one meanwhile stay).
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& s = *slots_[i];
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.busy && s.conn == c->index && (s.waits_for_conn || s.conn_epoch != c->epoch.load()) &&
        !stopping_) {
      if (!s.waits_for_conn) retransmits_++;
      Issue(i, false);
    }
  }
}

void Runner::Receive(Conn* c) {
  const common::ThreadUsageMeter meter;
  tl_thread = TraceThread::kReceiver;
  tl_thread_index = static_cast<uint32_t>(c->index);
  RecordReader reader(o_.max_record);
  Bytes scratch;
  common::LatencySamples local;
  SendBatch batch;
  batch.per_conn.resize(conns_.size());
  tl_batch = &batch;
  uint64_t replies = 0, reads = 0;
  int fd;
  {
    std::lock_guard<std::mutex> lock(c->fd_mu);  // the fd changes under both locks
    fd = c->fd;
  }
  while (!stopping_) {
    auto space = reader.WriteSpace(kReadChunk);
    ssize_t n = fd >= 0 ? recv(fd, space.data(), space.size(), 0) : -1;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (stopping_) break;
      const std::string why =
          n == 0 ? std::string("end of stream") : std::string("recv: ") + std::strerror(errno);
      if (o_.trace) {
        o_.trace->Record(SetupEvent{SetupEventKind::kClientEof, static_cast<uint32_t>(c->index),
                                    common::NowNs()});
      }
      c->replies = replies;
      Reconnect(c, why);
      Flush(&batch);
      if (o_.trace) {
        o_.trace->Record(SetupEvent{SetupEventKind::kClientResent, static_cast<uint32_t>(c->index),
                                    common::NowNs()});
      }
      std::lock_guard<std::mutex> lock(c->fd_mu);  // the fd changes under both locks
      fd = c->fd;
      reader = RecordReader(o_.max_record);
      if (fd < 0) break;
      continue;
    }
    reader.Commit(static_cast<size_t>(n));
    ++reads;
    while (true) {
      ByteView rec;
      auto next = reader.Next(&rec);
      if (!next.ok()) {
        NoteError("reply stream: " + next.status().ToString());
        shutdown(fd, SHUT_RDWR);
        break;
      }
      if (!*next) break;
      ++replies;
      if (rec.size() < 4) {
        NoteError("reply record of " + std::to_string(rec.size()) + " bytes");
        continue;
      }
      uint32_t xid =
          (uint32_t{rec[0]} << 24) | (uint32_t{rec[1]} << 16) | (uint32_t{rec[2]} << 8) | rec[3];
      uint32_t index = xid & 0xffff;
      if (index >= slots_.size()) {
        stale_++;
        continue;
      }
      Slot& s = *slots_[index];
      std::lock_guard<std::mutex> lock(s.mu);
      if (!s.busy || s.xid != xid) {
        stale_++;
        continue;
      }
      ReplyHeader h;
      ByteView results;
      Status st = s.auth->DecodeReply(rec, s.seq, &scratch, &h, &results);
      if (!st.ok()) {
        if (ContextGone(h)) {
          // RFC 2203 5.3.3.3: the context is gone; make a new one and resend.
          Recreate(s.box, s.gen, h.auth_stat);
          retransmits_++;
          if (!stopping_)
            Issue(index, false);
          else
            s.busy = false;
          continue;
        }
        NoteError(st.ToString());
        if (!stopping_)
          Issue(index, true);
        else
          s.busy = false;
        continue;
      }
      Status chk = CheckCompoundResults(s.req, results);
      uint64_t now = common::NowNs();
      if (!chk.ok()) {
        NoteError(chk.ToString());
      } else if (now >= measure_start_.load(std::memory_order_relaxed) &&
                 now <= measure_end_.load(std::memory_order_relaxed)) {
        // The rate counts every call completed in the measured time (a call
        // issued in the warm-up included: counting only calls issued in it
        // would miss one latency's worth of completions at its start, a
        // bias as large as latency / seconds); the latencies are those of
        // calls issued in it, past the start's burst.
        ops_++;
        if (s.first_ns >= measure_start_.load(std::memory_order_relaxed)) {
          local.Add(now - s.first_ns);
        }
      }
      if (!stopping_)
        Issue(index, true);
      else
        s.busy = false;
    }
    Flush(&batch);
  }
  tl_batch = nullptr;
  c->replies = replies;
  receivers_.Add(meter.Elapsed());
  receiver_reads_ += reads;
  std::lock_guard<std::mutex> lock(samples_mu_);
  samples_.Merge(local);
}

void Runner::Monitor() {
  tl_thread = TraceThread::kMonitor;
  const uint64_t timeout = uint64_t(o_.timeout_ms) * 1000000;
  const auto period = std::chrono::microseconds(std::max(1000, o_.timeout_ms * 250));
  while (!stopping_) {
    {
      std::unique_lock<std::mutex> lock(monitor_mu_);
      if (monitor_cv_.wait_for(lock, period, [&] { return stopping_.load(); })) break;
    }
    uint64_t now = common::NowNs();
    for (uint32_t i = 0; i < slots_.size() && !stopping_; ++i) {
      Slot& s = *slots_[i];
      std::unique_lock<std::mutex> lock(s.mu, std::try_to_lock);
      if (!lock.owns_lock()) continue;
      if (s.busy && now > s.sent_ns && now - s.sent_ns > timeout) {
        timeouts_++;
        retransmits_++;
        Issue(i, false);
      }
    }
  }
}

void Runner::DestroyAll(LoadReport* r) {
  std::vector<std::shared_ptr<ClientAuth>> auths;
  for (auto& b : boxes_) {
    std::lock_guard<std::mutex> lock(b->mu);
    if (b->auth && b->auth->has_context() && !b->dropped) auths.push_back(b->auth);
  }
  if (auths.empty()) return;
  if (o_.destroy_timeout_ms <= 0) {
    r->contexts_left = auths.size();
    r->destroy_error = "not destroyed (destroy timeout 0)";
    return;
  }
  r->contexts_destroyed = DestroyContexts(
      o_, auths, Deadline::Earlier(Deadline::AfterMs(o_.destroy_timeout_ms), run_deadline_),
      &r->contexts_gone, &r->destroy_error);
  r->contexts_left = auths.size() - r->contexts_destroyed - r->contexts_gone;
}

Result<LoadReport> Runner::Run(std::optional<LoadReport>* measured) {
  SECMODE_ASSIGN_OR_RETURN(service_, ServiceForMode(o_.mode));
  if (o_.connections < 1 || o_.connections > 1024) {
    return Status::InvalidArgument("connections must be 1..1024, got " +
                                   std::to_string(o_.connections));
  }
  if (o_.slots < 1 || o_.slots > 65535) {
    return Status::InvalidArgument("slots must be 1..65535, got " + std::to_string(o_.slots));
  }
  if (o_.op != NfsOp::kGetattr && (o_.size == 0 || o_.size > kNfsMaxIo)) {
    return Status::InvalidArgument("I/O size must be 1.." + std::to_string(kNfsMaxIo));
  }
  if (o_.port == 0) return Status::InvalidArgument("no server port given");
  if (o_.connect_timeout_ms < 0 || o_.init_timeout_ms < 0 || o_.destroy_timeout_ms < 0) {
    return Status::InvalidArgument("the connect, INIT and DESTROY timeouts must be >= 0 ms");
  }
  if (!(o_.seconds >= 0) || !(o_.warmup_seconds >= 0) || !(o_.max_seconds >= 0)) {
    return Status::InvalidArgument("the measured time and the warm-up must be >= 0 s");
  }
  const int nbox = o_.context_per_connection ? o_.connections : 1;
  const double run_seconds = o_.warmup_seconds + std::max(o_.seconds, o_.max_seconds);
  if (o_.deadline_seconds != 0) {
    if (!(o_.deadline_seconds >= o_.warmup_seconds + o_.seconds) ||
        !std::isfinite(o_.deadline_seconds)) {
      return Status::InvalidArgument("the run's deadline (" + Seconds(o_.deadline_seconds) +
                                     " s) is shorter than its warm-up and measured time (" +
                                     Seconds(o_.warmup_seconds + o_.seconds) + " s)");
    }
    deadline_seconds_ = o_.deadline_seconds;
  } else {
    deadline_seconds_ = run_seconds + kLoadDeadlineMarginSeconds +
                        (service_ != 0 ? nbox * kLoadDeadlinePerContextSeconds : 0);
  }
  run_deadline_ = Deadline::AfterMs(static_cast<int64_t>(std::ceil(deadline_seconds_ * 1e3)));
  // A step that failed because the run's deadline passed says so.
  auto step_failed = [&](const Status& s, const std::string& step) {
    Status out = s.Annotate(step);
    if (run_deadline_.Passed()) {
      out = out.Annotate("the run's deadline (" + Seconds(deadline_seconds_) + " s) passed");
    }
    return out;
  };
  const std::string where = o_.host + ":" + std::to_string(o_.port);
  for (int i = 0; i < nbox; ++i) {
    boxes_.push_back(std::make_unique<AuthBox>());
    Status made = MakeAuth(boxes_.back().get());
    if (!made.ok()) {
      boxes_.back()->auth.reset();
      LoadReport unused;
      DestroyAll(&unused);
      return step_failed(made, nbox == 1 ? "creating the security context with " + where
                                         : "creating security context " + std::to_string(i + 1) +
                                               " of " + std::to_string(nbox) + " with " + where);
    }
  }
  for (int i = 0; i < o_.connections; ++i) {
    auto c = std::make_unique<Conn>();
    c->index = i;
    c->backoff = common::Backoff(kReconnectBackoff, common::NowNs() + static_cast<uint64_t>(i));
    c->box = boxes_[o_.context_per_connection ? i : 0].get();
    c->delay_ns = uint64_t{o_.delay_us} * 1000 +
                  (i == o_.skew_connection ? uint64_t{o_.skew_delay_us} * 1000 : 0);
    auto fd = Connect(o_.host, o_.port, ConnectDeadline());
    if (!fd.ok()) {
      LoadReport unused;
      DestroyAll(&unused);
      return step_failed(fd.status(), "opening connection " + std::to_string(i + 1) + " of " +
                                          std::to_string(o_.connections));
    }
    c->fd = fd->Release();
    conns_.push_back(std::move(c));
  }
  // RFC 8881 2.10.6.1: a slot's first request has sequence id 1 (Issue
  // counts up before it sends), on either kind of server.
  for (int i = 0; i < o_.slots; ++i) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->req.sequence = 0;
  }
  if (o_.nfs41) {
    Status opened = OpenSession();
    if (!opened.ok()) {
      LoadReport unused;
      DestroyAll(&unused);
      return step_failed(opened, "creating an NFSv4.1 session with " + where);
    }
  }
  for (auto& c : conns_) {
    c->receiver = std::thread([this, p = c.get()] { Receive(p); });
    if (c->delay_ns > 0) c->sender = std::thread([this, p = c.get()] { SendLoop(p); });
  }
  monitor_ = std::thread([this] { Monitor(); });
  uint64_t t0 = common::NowNs();
  measure_start_ = t0 + static_cast<uint64_t>(o_.warmup_seconds * 1e9);
  uint64_t end = measure_start_ + static_cast<uint64_t>(o_.seconds * 1e9);
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    std::lock_guard<std::mutex> lock(slots_[i]->mu);
    Issue(i, true);
  }
  const uint64_t hard_end =
      measure_start_ + static_cast<uint64_t>(std::max(o_.max_seconds, o_.seconds) * 1e9);
  common::CpuTimes cpu_at_start;  // read once, when the measured time starts
  bool cpu_read = false;
  while (true) {
    uint64_t now = common::NowNs();
    if (!cpu_read && now >= measure_start_) {
      cpu_at_start = common::ReadCpuTimes();
      cpu_read = true;
    }
    if (now >= end && (ops_ >= o_.min_ops || now >= hard_end)) break;
    if (o_.max_ops > 0 && ops_ >= o_.max_ops) break;
    if (failed_) break;
    if (run_deadline_.Passed()) {
      Fail(Status::Unavailable("the run's deadline (" + Seconds(deadline_seconds_) +
                               " s) passed while measuring: " + std::to_string(ops_.load()) +
                               " calls completed of " + std::to_string(o_.min_ops) + " wanted, " +
                               std::to_string(timeouts_.load()) +
                               " timed out waiting for replies from " + where));
      break;
    }
    usleep(1000);
  }
  uint64_t stop = common::NowNs();
  measure_end_ = stop;
  const common::CpuTimes cpu_at_stop = common::ReadCpuTimes();
  const double idle_fraction = common::IdleFraction(cpu_at_start, cpu_at_stop);
  const double steal_fraction = common::StealFraction(cpu_at_start, cpu_at_stop);
  {
    std::lock_guard<std::mutex> lock(monitor_mu_);
    stopping_ = true;
  }
  monitor_cv_.notify_all();
  for (auto& c : conns_) {
    {
      // Not write_mu: a writer may be blocked in send to a server that
      // reads nothing; the shutdown wakes it.
      std::lock_guard<std::mutex> lock(c->fd_mu);
      if (c->fd >= 0) shutdown(c->fd, SHUT_RDWR);
    }
    {
      // Under q_mu, so a delay line between its check of stopping_ and its
      // wait cannot miss this wakeup.
      std::lock_guard<std::mutex> lock(c->q_mu);
    }
    c->q_cv.notify_all();
  }
  // Every thread that might still send is joined before any socket closes.
  for (auto& c : conns_) {
    if (c->receiver.joinable()) c->receiver.join();
    if (c->sender.joinable()) c->sender.join();
  }
  monitor_.join();
  for (auto& c : conns_) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
  }

  LoadReport r;
  r.mode = o_.mode;
  r.op = NfsOpName(o_.op);
  r.size = o_.op == NfsOp::kGetattr ? 0 : o_.size;
  r.connections = o_.connections;
  r.slots = o_.slots;
  r.shared_context = !o_.context_per_connection;
  r.seconds = stop > measure_start_ ? static_cast<double>(stop - measure_start_) / 1e9 : 0;
  r.ops = ops_;
  r.ops_per_second = r.seconds > 0 ? static_cast<double>(r.ops) / r.seconds : 0;
  r.mb_per_second = r.ops_per_second * r.size / 1e6;
  r.p50_us = samples_.Percentile(0.50) / 1e3;
  r.p90_us = samples_.Percentile(0.90) / 1e3;
  r.p99_us = samples_.Percentile(0.99) / 1e3;
  r.p999_us = samples_.Percentile(0.999) / 1e3;
  r.retransmits = retransmits_;
  r.timeouts = timeouts_;
  r.disconnects = disconnects_;
  r.reconnects_per_second =
      static_cast<double>(r.disconnects) / (static_cast<double>(stop - t0) / 1e9);
  r.reconnect_wait_seconds = static_cast<double>(reconnect_wait_ns_) / 1e9;
  r.context_recreations = recreations_;
  r.reencodes = reencodes_;
  r.stale_replies = stale_;
  r.errors = errors_;
  r.first_error = first_error_;
  {
    std::lock_guard<std::mutex> lock(boxes_.front()->mu);
    if (boxes_.front()->auth) r.crypto_threads = boxes_.front()->auth->crypto_threads();
  }
  r.receivers = receivers_.Get();
  r.receiver_reads = receiver_reads_;
  r.idle_fraction = idle_fraction;
  r.steal_fraction = steal_fraction;
  r.sender_cpu_ns = sender_cpu_ns_;
  r.sender_calls = sender_calls_;

  uint64_t replies = 0;
  for (auto& c : conns_) replies += c->replies;
  Status failure;
  {
    std::lock_guard<std::mutex> lock(err_mu_);
    failure = failure_;
  }
  if (failure.ok() && replies == 0) {
    // Connected, but not one call was answered: a wedged server.
    failure = Status::Unavailable(
        "no reply from " + where + " on any of the " + std::to_string(conns_.size()) +
        " connections in " + std::to_string((stop - t0) / 1000000) + " ms: the server accepted " +
        "them but answered none of the " + std::to_string(slots_.size()) + " calls sent (" +
        std::to_string(timeouts_.load()) + " sent again after --timeout-ms)");
  }
  if (session_) {
    r.nfs41_server = session_->server;
    r.session_slots = session_->slots;
    Status closed = CloseSession();
    if (!closed.ok()) r.session_close_error = closed.ToString();
  }
  DestroyAll(&r);
  if (!failure.ok()) {
    if (measured != nullptr) *measured = r;
    return failure;
  }
  return r;
}

// One COMPOUND on the session's own connection with the first context's
// security, within the INIT timeout and the run's deadline.
Result<Bytes> Runner::SessionCall(ByteView args) {
  std::shared_ptr<ClientAuth> auth;
  {
    std::lock_guard<std::mutex> lock(boxes_.front()->mu);
    auth = boxes_.front()->auth;
  }
  if (!auth) return Status::Unavailable("the run's security context is gone");
  if (session_fd_.get() < 0) {
    SECMODE_ASSIGN_OR_RETURN(session_fd_, Connect(o_.host, o_.port, ConnectDeadline()));
  }
  const uint32_t xid = static_cast<uint32_t>(xid_counter_.fetch_add(1) << 16) | 0xffffu;
  Bytes record, scratch;
  uint32_t seq = 0;
  SECMODE_RETURN_IF_ERROR(auth->EncodeCall(xid, kNfsProcCompound, args, &record, &seq));
  auto reply = BlockingCall(session_fd_.get(), record,
                            Deadline::Earlier(Deadline::AfterMs(o_.init_timeout_ms), run_deadline_),
                            "reply to the session's COMPOUND");
  if (!reply.ok()) {
    session_fd_ = Fd();  // the next call reconnects
    return reply.status();
  }
  ReplyHeader h;
  ByteView results;
  SECMODE_RETURN_IF_ERROR(auth->DecodeReply(*reply, seq, &scratch, &h, &results));
  return Bytes(results.begin(), results.end());
}

Status Runner::OpenSession() {
  Nfs41Options so = o_.nfs41_options;
  so.slots = static_cast<uint32_t>(o_.slots);
  SECMODE_ASSIGN_OR_RETURN(Nfs41Session s,
                           Nfs41Open(so, [this](ByteView a) { return SessionCall(a); }));
  session_ = std::make_unique<Nfs41Session>(std::move(s));
  if (session_->slots < static_cast<uint32_t>(o_.slots)) {
    const std::string granted = std::to_string(session_->slots);
    Status closed = CloseSession();
    return Status::InvalidArgument("the server granted " + granted + " session slots, fewer than " +
                                   "--slots " + std::to_string(o_.slots) +
                                   (closed.ok() ? "" : " (" + closed.ToString() + ")"));
  }
  // The set-up used a session of its own: the load's slots are all fresh.
  for (auto& slot : slots_) slot->req.target = &session_->target;
  return Status::Ok();
}

Status Runner::CloseSession() {
  Status s = Nfs41Close(*session_, [this](ByteView a) { return SessionCall(a); });
  session_fd_ = Fd();
  return s;
}

}  // namespace

Result<LoadReport> RunLoad(const LoadOptions& options, std::optional<LoadReport>* measured) {
  if (measured != nullptr) measured->reset();
  Runner runner(options);
  return runner.Run(measured);
}

Result<ContextCreationTime> TimeContextCreation(const LoadOptions& options, int rounds) {
  SECMODE_ASSIGN_OR_RETURN(uint32_t service, ServiceForMode(options.mode));
  if (service == 0) return Status::InvalidArgument("AUTH_SYS has no context to create");
  if (rounds < 1) return Status::InvalidArgument("at least one round is needed");
  common::LatencySamples wall, cpu;
  for (int i = 0; i < rounds; ++i) {
    const uint64_t c0 = common::ProcessCpuNs();
    const uint64_t t0 = common::NowNs();
    SECMODE_ASSIGN_OR_RETURN(std::shared_ptr<ClientAuth> auth, NewLoadAuth(options, service));
    wall.Add(common::NowNs() - t0);
    cpu.Add(common::ProcessCpuNs() - c0);
    // Untimed: the server forgets the context again (best effort).
    if (options.destroy_timeout_ms > 0) {
      uint64_t gone = 0;
      std::string ignored;
      DestroyContexts(options, {auth}, Deadline::AfterMs(options.destroy_timeout_ms), &gone,
                      &ignored);
    }
  }
  return ContextCreationTime{static_cast<int64_t>(wall.Percentile(0.5)),
                             static_cast<int64_t>(cpu.Percentile(0.5))};
}

}  // namespace secmode::rpc
