#include "rpc/load.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/latency.h"
#include "common/machine.h"
#include "rpc/client_auth.h"
#include "rpc/gss_client.h"
#include "rpc/socket.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Result;
using common::Status;

Result<Bytes> BlockingRoundTrip(const std::string& host, uint16_t port, ByteView call) {
  SECMODE_ASSIGN_OR_RETURN(Fd fd, Connect(host, port));
  return BlockingCall(fd.get(), call);
}

Result<Bytes> BlockingCall(int fd, ByteView call) {
  Bytes mark;
  AppendRecordMark(static_cast<uint32_t>(call.size()), &mark);
  SECMODE_RETURN_IF_ERROR(WriteAll2(fd, mark, call));
  RecordReader reader;
  while (true) {
    ByteView rec;
    SECMODE_ASSIGN_OR_RETURN(bool got, reader.Next(&rec));
    if (got) return Bytes(rec.begin(), rec.end());
    auto space = reader.WriteSpace(4096);
    ssize_t n = recv(fd, space.data(), space.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError("connection closed before the reply to a blocking call");
    reader.Commit(static_cast<size_t>(n));
  }
}

namespace {

// The client's security for `service` (0: AUTH_SYS); RPCSEC_GSS contexts are
// created over a short connection of their own (RFC 2203 5.2).
Result<std::shared_ptr<ClientAuth>> NewLoadAuth(const LoadOptions& o, uint32_t service) {
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
                             return BlockingRoundTrip(o.host, o.port, call);
                           }));
  return std::shared_ptr<ClientAuth>(NewGssAuth(kNfsProgram, kNfsVersion, std::move(ctx), service));
}

// The security state a group of connections shares: one context (and one
// sequence counter) or, per connection, its own.
struct AuthBox {
  std::mutex mu;
  std::shared_ptr<ClientAuth> auth;
  uint64_t gen = 0;
  std::atomic<uint32_t> max_sent_seq{0};
};

struct Slot {
  std::mutex mu;
  bool busy = false;
  uint32_t xid = 0, seq = 0;
  int conn = 0;
  uint64_t first_ns = 0, sent_ns = 0;
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
  std::mutex write_mu;
  int fd = -1;  // guarded by write_mu for writers
  AuthBox* box = nullptr;
  bool skewed = false;
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
  std::vector<ClientCallEvent> traced;  // calls in per_conn, written at Flush
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
  Result<LoadReport> Run();

 private:
  Status MakeAuth(AuthBox* box);
  void Recreate(AuthBox* box, uint64_t gen);
  void Issue(uint32_t index, bool fresh);  // slot lock held
  // Slot lock held; `traced` is the call's trace event (when tracing).
  void Transmit(Slot& s, Bytes& record, ClientCallEvent* traced);
  void Receive(Conn* c);
  void SendLoop(Conn* c);
  void Monitor();
  void Reconnect(Conn* c);
  void Flush(SendBatch* batch);
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
  std::atomic<uint64_t> rr_{0}, xid_counter_{1}, offset_counter_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> measure_start_{~0ull}, measure_end_{~0ull};
  std::atomic<uint64_t> receiver_cpu_ns_{0}, sender_cpu_ns_{0}, sender_calls_{0};
  std::atomic<uint64_t> ops_{0}, retransmits_{0}, timeouts_{0}, disconnects_{0}, recreations_{0},
      reencodes_{0}, stale_{0}, errors_{0};
  std::mutex err_mu_;
  std::string first_error_;
  std::mutex samples_mu_;
  common::LatencySamples samples_;
  std::thread monitor_;
};

Status Runner::MakeAuth(AuthBox* box) {
  SECMODE_ASSIGN_OR_RETURN(box->auth, NewLoadAuth(o_, service_));
  box->max_sent_seq = 0;
  return Status::Ok();
}

void Runner::Recreate(AuthBox* box, uint64_t gen) {
  std::lock_guard<std::mutex> lock(box->mu);
  if (box->gen != gen) return;  // someone already did
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
    NoteError("re-creating the RPCSEC_GSS context: " + s.ToString());
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
    uint64_t span = o_.size >= kNfsFileSize ? 1 : kNfsFileSize / o_.size;
    s.req.offset = (k % span) * o_.size;
    s.req.slot = index;
    s.req.sequence++;
    s.first_ns = common::NowNs();
  }
  s.busy = true;
  int ci = static_cast<int>(rr_.fetch_add(1) % conns_.size());
  s.conn = ci;
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
    traced.retransmission = !fresh;
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
  if (c.skewed) {
    SendItem item;
    item.slot = index;
    item.xid = s.xid;
    item.due_ns = common::NowNs() + uint64_t{o_.skew_delay_us} * 1000;
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
  std::lock_guard<std::mutex> lock(c.write_mu);
  // A failed send shows up as a disconnect on the receiving side.
  (void)WriteAll2(c.fd, ByteView(mark, 4), record);
  if (traced) {
    traced->written_ns = common::NowNs();
    o_.trace->Record(*traced);
  }
}

void Runner::Flush(SendBatch* batch) {
  std::vector<uint64_t> written;
  if (o_.trace) written.assign(batch->per_conn.size(), 0);
  for (size_t i = 0; i < batch->per_conn.size(); ++i) {
    Bytes& out = batch->per_conn[i];
    if (out.empty()) continue;
    Conn& c = *conns_[i];
    {
      std::lock_guard<std::mutex> lock(c.write_mu);
      (void)WriteAll(c.fd, out);
    }
    if (o_.trace) written[i] = common::NowNs();
    out.clear();
  }
  for (auto& e : batch->traced) {
    e.written_ns = written[e.conn];
    o_.trace->Record(e);
  }
  batch->traced.clear();
}

void Runner::SendLoop(Conn* c) {
  tl_thread = TraceThread::kSender;
  tl_thread_index = static_cast<uint32_t>(c->index);
  const uint64_t cpu0 = common::ThreadCpuNs();
  uint64_t sent = 0;
  while (true) {
    SendItem item;
    {
      std::unique_lock<std::mutex> lock(c->q_mu);
      c->q_cv.wait(lock, [&] { return stopping_ || !c->q.empty(); });
      if (stopping_) {
        sender_cpu_ns_ += common::ThreadCpuNs() - cpu0;
        sender_calls_ += sent;
        return;
      }
      item = std::move(c->q.front());
      c->q.pop_front();
    }
    uint64_t now = common::NowNs();
    if (item.due_ns > now) usleep(static_cast<useconds_t>((item.due_ns - now) / 1000));
    Slot& s = *slots_[item.slot];
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.busy || s.xid != item.xid) continue;  // retransmitted meanwhile
    Transmit(s, item.record, o_.trace ? &item.traced : nullptr);
    ++sent;
  }
}

void Runner::Reconnect(Conn* c) {
  disconnects_++;
  auto fd = Connect(o_.host, o_.port);
  if (o_.trace) {
    o_.trace->Record(SetupEvent{SetupEventKind::kClientConnected, static_cast<uint32_t>(c->index),
                                common::NowNs()});
  }
  {
    std::lock_guard<std::mutex> lock(c->write_mu);
    if (c->fd >= 0) close(c->fd);
    c->fd = fd.ok() ? fd->Release() : -1;
  }
  if (!fd.ok()) {
    NoteError("reconnecting: " + fd.status().ToString());
    return;
  }
  // Resend what was outstanding on the lost connection.
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& s = *slots_[i];
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.busy && s.conn == c->index && !stopping_) {
      retransmits_++;
      Issue(i, false);
    }
  }
}

void Runner::Receive(Conn* c) {
  const uint64_t cpu0 = common::ThreadCpuNs();
  tl_thread = TraceThread::kReceiver;
  tl_thread_index = static_cast<uint32_t>(c->index);
  RecordReader reader(o_.max_record);
  Bytes scratch;
  common::LatencySamples local;
  SendBatch batch;
  batch.per_conn.resize(conns_.size());
  tl_batch = &batch;
  int fd;
  {
    std::lock_guard<std::mutex> lock(c->write_mu);
    fd = c->fd;
  }
  while (!stopping_) {
    auto space = reader.WriteSpace(kReadChunk);
    ssize_t n = fd >= 0 ? recv(fd, space.data(), space.size(), 0) : -1;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (stopping_) break;
      if (o_.trace) {
        o_.trace->Record(SetupEvent{SetupEventKind::kClientEof, static_cast<uint32_t>(c->index),
                                    common::NowNs()});
      }
      Reconnect(c);
      Flush(&batch);
      if (o_.trace) {
        o_.trace->Record(SetupEvent{SetupEventKind::kClientResent, static_cast<uint32_t>(c->index),
                                    common::NowNs()});
      }
      std::lock_guard<std::mutex> lock(c->write_mu);
      fd = c->fd;
      reader = RecordReader(o_.max_record);
      if (fd < 0) break;
      continue;
    }
    reader.Commit(static_cast<size_t>(n));
    while (true) {
      ByteView rec;
      auto next = reader.Next(&rec);
      if (!next.ok()) {
        NoteError("reply stream: " + next.status().ToString());
        shutdown(fd, SHUT_RDWR);
        break;
      }
      if (!*next) break;
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
        if (h.reply_stat == kMsgDenied && h.reject_stat == kAuthError &&
            (h.auth_stat == kRpcsecGssCredProblem || h.auth_stat == kRpcsecGssCtxProblem)) {
          // RFC 2203 5.3.3.3: the context is gone; make a new one and resend.
          Recreate(s.box, s.gen);
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
      } else if (s.first_ns >= measure_start_.load(std::memory_order_relaxed) &&
                 now <= measure_end_.load(std::memory_order_relaxed)) {
        local.Add(now - s.first_ns);
        ops_++;
      }
      if (!stopping_)
        Issue(index, true);
      else
        s.busy = false;
    }
    Flush(&batch);
  }
  tl_batch = nullptr;
  receiver_cpu_ns_ += common::ThreadCpuNs() - cpu0;
  std::lock_guard<std::mutex> lock(samples_mu_);
  samples_.Merge(local);
}

void Runner::Monitor() {
  tl_thread = TraceThread::kMonitor;
  const uint64_t timeout = uint64_t(o_.timeout_ms) * 1000000;
  while (!stopping_) {
    usleep(static_cast<useconds_t>(std::max(1000, o_.timeout_ms * 250)));
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

Result<LoadReport> Runner::Run() {
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
  int nbox = o_.context_per_connection ? o_.connections : 1;
  for (int i = 0; i < nbox; ++i) {
    boxes_.push_back(std::make_unique<AuthBox>());
    SECMODE_RETURN_IF_ERROR(
        MakeAuth(boxes_.back().get()).Annotate("creating the security context"));
  }
  for (int i = 0; i < o_.connections; ++i) {
    auto c = std::make_unique<Conn>();
    c->index = i;
    c->box = boxes_[o_.context_per_connection ? i : 0].get();
    c->skewed = i == o_.skew_connection && o_.skew_delay_us > 0;
    SECMODE_ASSIGN_OR_RETURN(Fd fd, Connect(o_.host, o_.port));
    c->fd = fd.Release();
    conns_.push_back(std::move(c));
  }
  for (int i = 0; i < o_.slots; ++i) slots_.push_back(std::make_unique<Slot>());
  for (auto& c : conns_) {
    c->receiver = std::thread([this, p = c.get()] { Receive(p); });
    if (c->skewed) c->sender = std::thread([this, p = c.get()] { SendLoop(p); });
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
    usleep(1000);
  }
  uint64_t stop = common::NowNs();
  measure_end_ = stop;
  const double idle_fraction = common::IdleFraction(cpu_at_start, common::ReadCpuTimes());
  stopping_ = true;
  for (auto& c : conns_) {
    {
      std::lock_guard<std::mutex> lock(c->write_mu);
      if (c->fd >= 0) shutdown(c->fd, SHUT_RDWR);
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
  r.context_recreations = recreations_;
  r.reencodes = reencodes_;
  r.stale_replies = stale_;
  r.errors = errors_;
  r.first_error = first_error_;
  r.crypto_threads = boxes_.front()->auth->crypto_threads();
  r.receiver_cpu_ns = receiver_cpu_ns_;
  r.idle_fraction = idle_fraction;
  r.sender_cpu_ns = sender_cpu_ns_;
  r.sender_calls = sender_calls_;
  return r;
}

}  // namespace

Result<LoadReport> RunLoad(const LoadOptions& options) {
  Runner runner(options);
  return runner.Run();
}

Result<ContextCreationTime> TimeContextCreation(const LoadOptions& options, int rounds) {
  SECMODE_ASSIGN_OR_RETURN(uint32_t service, ServiceForMode(options.mode));
  if (service == 0) return Status::InvalidArgument("AUTH_SYS has no context to create");
  if (rounds < 1) return Status::InvalidArgument("at least one round is needed");
  common::LatencySamples wall, cpu;
  for (int i = 0; i < rounds; ++i) {
    const uint64_t c0 = common::ProcessCpuNs();
    const uint64_t t0 = common::NowNs();
    SECMODE_RETURN_IF_ERROR(NewLoadAuth(options, service).status());
    wall.Add(common::NowNs() - t0);
    cpu.Add(common::ProcessCpuNs() - c0);
  }
  return ContextCreationTime{static_cast<int64_t>(wall.Percentile(0.5)),
                             static_cast<int64_t>(cpu.Percentile(0.5))};
}

}  // namespace secmode::rpc
