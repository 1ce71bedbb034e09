#include "rpc/tcp_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "common/clock.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Result;
using common::Status;

struct TcpServer::Conn {
  Fd fd;
  uint32_t index = 0;  // order of accept (tracing)
  std::mutex write_mu;
  std::atomic<bool> done{false};
};

struct TcpServer::Job {
  std::shared_ptr<Conn> conn;
  Bytes record;
  uint64_t read_ns = 0;  // tracing only
  uint32_t batch_position = 0;
};

namespace {

// A traced call whose reply is still to be written.
ServerCallEvent TraceEvent(const CallCheck& check, uint32_t conn, TraceThread thread,
                           uint64_t read_ns, uint32_t position) {
  ServerCallEvent e;
  e.context = check.context;
  e.seq = check.seq;
  e.conn = conn;
  e.thread = thread;
  e.batch_position = position;
  e.read_ns = read_ns;
  e.checked_ns = check.checked_ns;
  e.verdict = check.verdict;
  e.highest = check.highest;
  return e;
}

}  // namespace

Result<std::unique_ptr<TcpServer>> TcpServer::Start(const TcpServerOptions& options,
                                                    RpcServerCore* core) {
  std::unique_ptr<TcpServer> s(new TcpServer());
  s->options_ = options;
  s->core_ = core;
  SECMODE_ASSIGN_OR_RETURN(s->listen_fd_, Listen(options.address, options.port));
  s->port_ = LocalPort(s->listen_fd_.get());
  for (int i = 0; i < options.workers; ++i) {
    s->workers_.emplace_back([p = s.get()] { p->WorkerLoop(); });
  }
  s->accept_thread_ = std::thread([p = s.get()] { p->AcceptLoop(); });
  return s;
}

TcpServer::~TcpServer() { Stop(); }

void TcpServer::Stop() {
  if (stopping_.exchange(true)) return;
  shutdown(listen_fd_.get(), SHUT_RDWR);
  if (accept_thread_.joinable()) accept_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& c : conns_) shutdown(c->fd.get(), SHUT_RDWR);
  }
  for (auto& t : threads_) t.second.join();
  threads_.clear();
  jobs_cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
  conns_.clear();
  listen_fd_.Reset();
}

void TcpServer::AcceptLoop() {
  while (!stopping_) {
    int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (stopping_) return;
      if (errno == EMFILE || errno == ENFILE) {
        usleep(10000);
        continue;
      }
      return;
    }
    SetNoDelay(fd);
    auto conn = std::make_shared<Conn>();
    conn->fd = Fd(fd);
    conn->index = static_cast<uint32_t>(connections_++);
    if (options_.trace) {
      options_.trace->Record(
          SetupEvent{SetupEventKind::kServerAccepted, conn->index, common::NowNs()});
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (it->first->done) {
        it->second.join();
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
    conns_.push_back(conn);
    threads_.emplace_back(conn, std::thread([this, conn] { Serve(conn); }));
  }
}

void TcpServer::WorkerLoop() {
  const uint64_t cpu0 = common::ThreadCpuNs();
  struct AddCpu {
    std::atomic<uint64_t>& total;
    uint64_t from;
    ~AddCpu() { total += common::ThreadCpuNs() - from; }
  } add_cpu{thread_cpu_ns_, cpu0};
  Bytes reply, out;
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(jobs_mu_);
      jobs_cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    CallCheck check;
    CallTrace* trace = options_.trace;
    Disposition d = core_->HandleCall(job.record, &reply, trace ? &check : nullptr);
    uint64_t replied_ns = 0;
    if (d == Disposition::kReply) {
      // The record mark and the reply go out in one writev: no copy of a
      // reply that may be 1 MiB.
      out.clear();
      AppendRecordMark(static_cast<uint32_t>(reply.size()), &out);
      std::lock_guard<std::mutex> lock(job.conn->write_mu);
      (void)WriteAll2(job.conn->fd.get(), out, reply);
      if (trace) replied_ns = common::NowNs();
    } else if (d == Disposition::kDropDisconnect) {
      shutdown(job.conn->fd.get(), SHUT_RDWR);
      if (trace) {
        trace->Record(SetupEvent{SetupEventKind::kServerClosed, job.conn->index, common::NowNs()});
      }
    }
    if (trace && check.checked) {
      ServerCallEvent e = TraceEvent(check, job.conn->index, TraceThread::kServerWorker,
                                     job.read_ns, job.batch_position);
      e.replied_ns = replied_ns;
      trace->Record(e);
    }
  }
}

void TcpServer::Serve(std::shared_ptr<Conn> conn) {
  const uint64_t cpu0 = common::ThreadCpuNs();
  RecordReader reader(options_.max_record);
  Bytes reply, out;
  const int fd = conn->fd.get();
  CallTrace* trace = options_.trace;
  if (trace)
    trace->Record(SetupEvent{SetupEventKind::kServerStarted, conn->index, common::NowNs()});
  std::vector<ServerCallEvent> traced;  // this batch's checked calls
  bool open = true;
  bool dropped = false;  // closed by a drop-disconnect
  while (open && !stopping_) {
    auto space = reader.WriteSpace(kReadChunk);
    ssize_t n = recv(fd, space.data(), space.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const uint64_t read_ns = trace ? common::NowNs() : 0;
    uint32_t position = 0;
    reader.Commit(static_cast<size_t>(n));
    out.clear();
    while (true) {
      ByteView record;
      auto next = reader.Next(&record);
      if (!next.ok()) {
        // RFC 5531 section 11 gives no way to resynchronise a broken stream.
        bad_streams_++;
        open = false;
        break;
      }
      if (!*next) break;
      if (options_.workers > 0) {
        {
          std::lock_guard<std::mutex> lock(jobs_mu_);
          jobs_.push_back(Job{conn, Bytes(record.begin(), record.end()), read_ns, position++});
        }
        jobs_cv_.notify_one();
        continue;
      }
      CallCheck check;
      Disposition d = core_->HandleCall(record, &reply, trace ? &check : nullptr);
      if (trace && check.checked) {
        ServerCallEvent e =
            TraceEvent(check, conn->index, TraceThread::kServerConn, read_ns, position);
        // A reply goes out with the batch; a dropped call gets none.
        if (d == Disposition::kReply) {
          traced.push_back(e);
        } else {
          trace->Record(e);
        }
      }
      ++position;
      if (d == Disposition::kReply) {
        AppendRecordMark(static_cast<uint32_t>(reply.size()), &out);
        out.insert(out.end(), reply.begin(), reply.end());
      } else if (d == Disposition::kDropDisconnect) {
        open = false;
        dropped = true;
        break;
      }
    }
    if (!out.empty()) {
      std::lock_guard<std::mutex> lock(conn->write_mu);
      if (!WriteAll(fd, out).ok()) break;
    }
    if (!traced.empty()) {
      const uint64_t replied_ns = common::NowNs();
      for (auto& e : traced) {
        e.replied_ns = replied_ns;
        trace->Record(e);
      }
      traced.clear();
    }
  }
  for (auto& e : traced) trace->Record(e);  // replies never written
  shutdown(fd, SHUT_RDWR);
  if (trace && dropped) {
    trace->Record(SetupEvent{SetupEventKind::kServerClosed, conn->index, common::NowNs()});
  }
  thread_cpu_ns_ += common::ThreadCpuNs() - cpu0;
  std::lock_guard<std::mutex> lock(mu_);
  // The Conn (and fd) is freed when the last job referencing it is done.
  conns_.remove(conn);
  conn->done = true;
}

}  // namespace secmode::rpc
