#include "rpc/load.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "common/format.h"
#include "rpc/load_runner.h"

namespace secmode::rpc {
namespace load_internal {
namespace {

// "2.5" (seconds in messages).
std::string Seconds(double s) { return common::Fmt("%g", s); }

}  // namespace

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

Status Runner::CheckOptions() {
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
  const int nbox = ContextCount();
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
  return Status::Ok();
}

Status Runner::StepFailed(const Status& s, const std::string& step) const {
  Status out = s.Annotate(step);
  if (run_deadline_.Passed()) {
    out = out.Annotate("the run's deadline (" + Seconds(deadline_seconds_) + " s) passed");
  }
  return out;
}

Status Runner::OpenConnections(const std::string& where) {
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
      return StepFailed(fd.status(), "opening connection " + std::to_string(i + 1) + " of " +
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
      return StepFailed(opened, "creating an NFSv4.1 session with " + where);
    }
  }
  return Status::Ok();
}

Runner::Span Runner::Measure(const std::string& where) {
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
  double own_at_start = 0;
  bool cpu_read = false;
  while (true) {
    uint64_t now = common::NowNs();
    if (!cpu_read && now >= measure_start_) {
      cpu_at_start = common::ReadCpuTimes();
      own_at_start = common::OwnCpuSeconds();
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
  Span span;
  span.t0 = t0;
  span.stop = common::NowNs();
  measure_end_ = span.stop;
  const common::CpuTimes cpu_at_stop = common::ReadCpuTimes();
  span.idle_fraction = common::IdleFraction(cpu_at_start, cpu_at_stop);
  span.steal_fraction = common::StealFraction(cpu_at_start, cpu_at_stop);
  span.others =
      common::OthersShare(cpu_at_start, cpu_at_stop, common::OwnCpuSeconds() - own_at_start);
  span.steal = common::StealShare(cpu_at_start, cpu_at_stop);
  return span;
}

void Runner::StopThreads() {
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
}

LoadReport Runner::Report(const Span& span) {
  const uint64_t t0 = span.t0, stop = span.stop;
  LoadReport r;
  r.mode = SecurityName(o_.security);
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
  r.idle_fraction = span.idle_fraction;
  r.steal_fraction = span.steal_fraction;
  r.others = span.others;
  r.steal = span.steal;
  r.sender_cpu_ns = sender_cpu_ns_;
  r.sender_calls = sender_calls_;
  return r;
}

Status Runner::Outcome(const Span& span, const std::string& where) {
  const uint64_t t0 = span.t0, stop = span.stop;
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
  return failure;
}

Result<LoadReport> Runner::Run(std::optional<LoadReport>* measured) {
  service_ = GssServiceOf(o_.security);
  SECMODE_RETURN_IF_ERROR(CheckOptions());
  const std::string where = o_.host + ":" + std::to_string(o_.port);
  SECMODE_RETURN_IF_ERROR(CreateContexts(where));
  SECMODE_RETURN_IF_ERROR(OpenConnections(where));
  const Span span = Measure(where);
  StopThreads();
  LoadReport r = Report(span);
  const Status failure = Outcome(span, where);
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

}  // namespace load_internal

common::Result<LoadReport> RunLoad(const LoadOptions& options,
                                   std::optional<LoadReport>* measured) {
  if (measured != nullptr) measured->reset();
  load_internal::Runner runner(options);
  return runner.Run(measured);
}

}  // namespace secmode::rpc
