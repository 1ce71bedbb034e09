#include "rpc/tcp_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "common/clock.h"
#include "common/delay_line.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Fd;
using common::Listen;
using common::LocalPort;
using common::PeerName;
using common::ResetOnClose;
using common::Result;
using common::SendNow2;
using common::SetNoDelay;
using common::SetTimeouts;
using common::Status;

struct TcpServer::Conn {
  Fd fd;
  uint32_t index = 0;  // order of accept (tracing)
  std::string host;    // the peer's address (the per-host cap)
  // What all connections from `host` hold (shared with per_host_).
  std::shared_ptr<std::atomic<size_t>> host_held;
  uint64_t accepted_ns = 0;
  // Eviction at the connection cap: when bytes last came, and whether the
  // connection has something pending (part of a record, a batch running,
  // replies held in its delay line).
  std::atomic<uint64_t> active_ns{0};
  std::atomic<bool> busy{false};
  std::atomic<size_t> delayed{0};  // replies in its delay line when last looked at
  std::atomic<bool> spoke{false};  // it has completed a record
  bool evicted = false;            // mu_: closed for a newcomer
  std::atomic<bool> cut{false};    // evicted or reset for memory: its thread ends
  std::atomic<size_t> held{0};     // bytes charged to the memory accountant
  // Guards sending on fd and closing it, and (workers) everything below.
  std::mutex write_mu;
  bool closed = false;               // fd closed: the connection's thread ended
  std::atomic<bool> closing{false};  // set with closed; read without the lock
  // Workers only.
  std::atomic<uint32_t> outstanding{0};  // calls queued, set aside or running
  std::atomic<size_t> outstanding_bytes{0};
  std::atomic<size_t> backlog_bytes{0};  // = backlog.size() - backlog_sent
  Bytes backlog;                         // replies the socket did not take yet
  size_t backlog_sent = 0;
  size_t backlog_charged = 0;  // the backlog's capacity, charged
  uint64_t progress_ns = 0;    // send deadline: when the backlog began or last
  size_t drained = 0;          // drained max_backlog bytes, and what it sent since
  bool flushing = false;       // in flushing_
  std::deque<Job> parked;      // calls set aside while the backlog is full
  bool reader_waiting = false;
  std::condition_variable space_cv;
};

struct TcpServer::Job {
  std::shared_ptr<Conn> conn;
  Bytes record;
  uint64_t read_ns = 0;  // tracing only
  uint32_t batch_position = 0;
};

namespace {

constexpr size_t kKeepBuffer = kReadChunk;  // what an idle connection keeps
constexpr int kDefaultMaxConnections = 1024;
constexpr rlim_t kSpareDescriptors = 64;
// Evicted connections whose threads have not ended yet, at most: beyond,
// a newcomer at the cap is refused (descriptors stay within the spare).
constexpr int kMaxEvicting = 16;
// How often the housekeeping thread looks at the memory budget.
constexpr uint64_t kBudgetCheckNs = 100000000ull;
// How long a connection waiting for memory sleeps between looks (the
// resets come every kBudgetCheckNs), and a worker after putting back a
// call that must wait.
constexpr useconds_t kMemoryWaitUs = 50000;
constexpr useconds_t kWorkerMemoryWaitUs = 1000;

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

uint64_t SecondsToNs(double s) { return s > 0 ? static_cast<uint64_t>(s * 1e9) : 0; }

std::string Seconds(uint64_t ns) {
  char b[32];
  snprintf(b, sizeof b, "%.3g s", static_cast<double>(ns) / 1e9);
  return b;
}

// The peer's address alone (an IPv4-mapped IPv6 one as IPv4): the key of
// the per-host cap. "?" when unknown (all such count as one host).
std::string PeerHost(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  char host[INET6_ADDRSTRLEN] = "?";
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return host;
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, host, sizeof host);
  } else if (ss.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
      inet_ntop(AF_INET, &a.s6_addr[12], host, sizeof host);
    } else {
      inet_ntop(AF_INET6, &a, host, sizeof host);
    }
  }
  return host;
}

void ReleaseIfLarge(Bytes& b) {
  if (b.capacity() > kKeepBuffer) Bytes().swap(b);
}

}  // namespace

Result<std::unique_ptr<TcpServer>> TcpServer::Start(const TcpServerOptions& options,
                                                    RpcServerCore* core) {
  if (options.max_connections < 0) {
    return Status::InvalidArgument("max_connections must be at least 1 (0 = the default)");
  }
  if (options.max_queue < 1) return Status::InvalidArgument("max_queue must be at least 1");
  if (options.max_gather == 0 || options.max_backlog == 0 || options.max_queue_bytes == 0) {
    return Status::InvalidArgument("max_gather, max_backlog and max_queue_bytes must be positive");
  }
  if (options.max_connections_per_host < 0) {
    return Status::InvalidArgument("max_connections_per_host must be at least 1 (0 = the default)");
  }
  if (options.idle_timeout_s < 0 || options.first_record_timeout_s < 0 ||
      options.record_timeout_s < 0 || options.send_timeout_s < 0) {
    return Status::InvalidArgument("deadlines must not be negative (0 = none)");
  }
  if (options.max_memory > 0 && options.max_memory / kMinMemoryPerGather < options.max_gather) {
    return Status::InvalidArgument("max_memory must be at least " +
                                   std::to_string(kMinMemoryPerGather) +
                                   " x max_gather (a connection's first call reserves 2 x "
                                   "max_gather)");
  }
  if (options.reply_delay_us > 0 && options.workers > 0) {
    return Status::InvalidArgument(
        "a reply delay works with a thread per connection (workers 0), not with workers");
  }
  std::unique_ptr<TcpServer> s(new TcpServer());
  s->options_ = options;
  s->core_ = core;
  s->log_ = std::make_unique<RateLimitedLog>(options.log);
  s->max_connections_ = options.max_connections;
  if (s->max_connections_ == 0) {
    s->max_connections_ = kDefaultMaxConnections;
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < static_cast<rlim_t>(kDefaultMaxConnections + kSpareDescriptors)) {
      s->max_connections_ =
          std::max(1, static_cast<int>(rl.rlim_cur) - static_cast<int>(kSpareDescriptors));
      s->log_->Note("descriptor limit " + std::to_string(rl.rlim_cur) + ": at most " +
                    std::to_string(s->max_connections_) + " connections (" +
                    std::to_string(kSpareDescriptors) +
                    " descriptors kept for the server's own files)");
    }
  }
  s->max_per_host_ = options.max_connections_per_host > 0 ? options.max_connections_per_host
                                                          : kDefaultMaxConnectionsPerHost;
  s->budget_ = options.max_memory;
  if (s->budget_ == 0) {
    s->budget_ = kDefaultMaxMemory;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
      s->budget_ = std::min(s->budget_, static_cast<size_t>(pages) * static_cast<size_t>(page) / 4);
    }
  }
  s->idle_ns_ = SecondsToNs(options.idle_timeout_s);
  s->first_ns_ = SecondsToNs(options.first_record_timeout_s);
  s->record_ns_ = SecondsToNs(options.record_timeout_s);
  s->send_ns_ = SecondsToNs(options.send_timeout_s);
  // An idle thread looks at its deadlines (and shrinks its buffers) every
  // tick: a quarter of the shortest deadline, between 10 ms and 1 s.
  uint64_t tick = 1000000000ull;
  for (uint64_t d : {s->idle_ns_, s->first_ns_, s->record_ns_, s->send_ns_}) {
    if (d > 0) tick = std::min(tick, d / 4);
  }
  s->tick_ns_ = std::max<uint64_t>(tick, 10000000ull);
  // A backlog for bursts of connections (the kernel caps it at somaxconn).
  SECMODE_ASSIGN_OR_RETURN(s->listen_fd_, Listen(options.address, options.port, 1024));
  s->port_ = LocalPort(s->listen_fd_.get());
  // Accepted sockets inherit both timeouts (a tick) from the listening
  // one: no system call per connection or per call for the deadlines.
  SetTimeouts(s->listen_fd_.get(), s->tick_ns_, s->tick_ns_);
  s->reserve_fd_ = Fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (options.workers > 0) {
    s->wake_fd_ = Fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (s->wake_fd_.get() < 0) {
      return Status::IoError(std::string("eventfd: ") + std::strerror(errno));
    }
    for (int i = 0; i < options.workers; ++i) {
      s->workers_.emplace_back([p = s.get()] { p->WorkerLoop(); });
    }
    s->flusher_ = std::thread([p = s.get()] { p->FlushLoop(); });
  }
  s->housekeeping_thread_ = std::thread([p = s.get()] { p->Housekeeping(); });
  s->accept_thread_ = std::thread([p = s.get()] { p->AcceptLoop(); });
  return s;
}

TcpServer::~TcpServer() { Stop(); }

TcpServerStats TcpServer::stats() const {
  TcpServerStats s;
  s.connections = connections_;
  s.bad_streams = bad_streams_;
  s.threads = usage_.Get();
  s.reads = reads_;
  s.open_connections = open_;
  s.refused = refused_;
  s.host_refused = host_refused_;
  s.evicted = evicted_;
  s.first_record_timeouts = first_record_timeouts_;
  s.memory_held = held_;
  s.memory_peak = peak_;
  s.memory_resets = memory_resets_;
  s.partial_records = partial_records_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [index, c] : conns_) {
      s.queued_calls += c->outstanding.load();
      s.queued_bytes += c->outstanding_bytes.load();
    }
  }
  s.accept_errors = accept_errors_;
  s.thread_failures = thread_failures_;
  s.idle_closed = idle_closed_;
  s.record_timeouts = record_timeouts_;
  s.send_timeouts = send_timeouts_;
  return s;
}

void TcpServer::Stop() {
  if (stopping_.exchange(true)) return;
  shutdown(listen_fd_.get(), SHUT_RDWR);
  if (accept_thread_.joinable()) accept_thread_.join();
  std::vector<std::shared_ptr<Conn>> open;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [index, c] : conns_) {
      shutdown(c->fd.get(), SHUT_RDWR);
      open.push_back(c);
    }
  }
  for (auto& c : open) {
    std::lock_guard<std::mutex> lock(c->write_mu);
    c->space_cv.notify_all();  // a reader waiting for queue space
  }
  open.clear();
  { std::lock_guard<std::mutex> lock(mu_); }  // the housekeeper is waiting or sees stopping_
  reap_cv_.notify_all();
  if (housekeeping_thread_.joinable()) housekeeping_thread_.join();
  std::unordered_map<uint32_t, std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(threads_);
    finished_.clear();
  }
  for (auto& [index, t] : threads) t.join();
  { std::lock_guard<std::mutex> lock(jobs_mu_); }
  jobs_cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
  {
    std::lock_guard<std::mutex> lock(flush_mu_);
    flush_cv_.notify_all();
  }
  if (wake_fd_.get() >= 0) {
    uint64_t one = 1;
    (void)!write(wake_fd_.get(), &one, sizeof one);
  }
  if (flusher_.joinable()) flusher_.join();
  flushing_.clear();
  jobs_.clear();
  conns_.clear();
  listen_fd_.Reset();
}

void TcpServer::AcceptLoop() {
  while (!stopping_) {
    int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (stopping_) return;
      // EAGAIN: the listening socket's SO_RCVTIMEO (there for the accepted
      // sockets to inherit) ran out with nobody waiting.
      if (err == EINTR || err == ECONNABORTED || err == EAGAIN || err == EWOULDBLOCK) continue;
      accept_errors_++;
      if (err == EMFILE || err == ENFILE) {
        log_->Say(LogKind::kAcceptError, [&] {
          return std::string("accept: ") + std::strerror(err) + " with " +
                 std::to_string(open_.load()) +
                 " connections open; closing new connections at once until some end";
        });
        RefuseWaitingClient();
        continue;
      }
      // Anything else (ENOBUFS, ENOMEM, EPERM from a firewall, a network
      // error the new connection brought, even EBADF or EINVAL): say so,
      // wait a moment and keep accepting.
      log_->Say(LogKind::kAcceptError,
                [&] { return std::string("accept: ") + std::strerror(err) + "; still accepting"; });
      usleep(10000);
      continue;
    }
    Admit(Fd(fd));
  }
}

// Out of descriptors: the reserve one is given back so the client waiting
// in the backlog can be accepted and closed (it sees its connection end
// instead of hanging), then taken again.
void TcpServer::RefuseWaitingClient() {
  bool refused = false;
  if (reserve_fd_.get() >= 0) {
    reserve_fd_.Reset();
    int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      close(fd);
      refused_++;
      refused = true;
    }
    reserve_fd_ = Fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
  }
  // Without a reserve (or nobody waiting), wait for a descriptor to free.
  if (!refused) usleep(10000);
}

void TcpServer::Admit(Fd fd) {
  const std::string host = PeerHost(fd.get());
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  auto from_host = per_host_.find(host);
  if (from_host != per_host_.end() && from_host->second.connections >= max_per_host_) {
    log_->Say(LogKind::kHostCap, [&] {
      return "per-host limit of " + std::to_string(max_per_host_) + " connections from " + host +
             " reached: closing its new connection (" + std::to_string(host_refused_.load() + 1) +
             " refused so far; --max-connections-per-host raises it)";
    });
    refused_++;
    host_refused_++;
    return;  // closed by Fd
  }
  if (open_.load() - static_cast<uint64_t>(evicting_) >= static_cast<uint64_t>(max_connections_) &&
      (evicting_ >= kMaxEvicting || !EvictIdlest(PeerName(fd.get())))) {
    log_->Say(LogKind::kConnectionCap, [&] {
      return "connection limit of " + std::to_string(max_connections_) +
             " reached and none idle: closing the new connection from " + PeerName(fd.get()) +
             " (" + std::to_string(refused_.load() + 1) +
             " refused so far; --max-connections raises it)";
    });
    refused_++;
    return;
  }
  SetNoDelay(fd.get());
  auto conn = std::make_shared<Conn>();
  conn->fd = std::move(fd);
  conn->index = static_cast<uint32_t>(connections_++);
  conn->host = host;
  conn->accepted_ns = common::NowNs();
  conn->active_ns = conn->accepted_ns;
  if (options_.trace) {
    options_.trace->Record(
        SetupEvent{SetupEventKind::kServerAccepted, conn->index, common::NowNs()});
  }
  open_++;
  Host& h = per_host_[host];
  if (h.connections++ == 0) h.held = std::make_shared<std::atomic<size_t>>(0);
  conn->host_held = h.held;
  conns_[conn->index] = conn;
  try {
    threads_.emplace(conn->index, std::thread([this, conn] { Serve(conn); }));
  } catch (const std::system_error& e) {
    // No thread (EAGAIN: out of threads or memory): close this connection,
    // keep serving the others.
    conns_.erase(conn->index);
    if (--per_host_[host].connections == 0) per_host_.erase(host);
    open_--;
    thread_failures_++;
    const std::string why = e.what();
    log_->Say(LogKind::kAcceptError, [&] {
      return "cannot start a thread for the connection from " + PeerName(conn->fd.get()) + " (" +
             why + ") with " + std::to_string(open_.load()) + " connections open; closed it";
    });
  }
}

bool TcpServer::EvictIdlest(const std::string& newcomer) {
  Conn* idlest = nullptr;
  bool in_grace = false;  // a connection not a tick old has not spoken yet
  const uint64_t now = common::NowNs();
  for (auto& [index, c] : conns_) {
    if (c->evicted || c->cut.load() || c->busy.load() || c->outstanding.load() > 0 ||
        c->backlog_bytes.load() > 0 || c->delayed.load() > 0) {
      continue;
    }
    // A newcomer that has not spoken yet has a tick to do so (its first
    // call may not be read yet): else a client reconnecting at the cap
    // would evict every legitimate newcomer.
    if (!c->spoke.load() && now - c->accepted_ns < tick_ns_) {
      in_grace = true;
      continue;
    }
    // Bytes its thread has not read yet are pending too.
    int unread = 0;
    if (ioctl(c->fd.get(), FIONREAD, &unread) == 0 && unread > 0) continue;
    // One that has not completed a record yet goes first (the oldest of
    // them), then the one whose bytes came longest ago.
    if (idlest == nullptr || (!c->spoke && idlest->spoke) ||
        (c->spoke == idlest->spoke && c->active_ns.load() < idlest->active_ns.load())) {
      idlest = c.get();
    }
  }
  if (idlest == nullptr) return false;
  // Newcomers in their tick mean a burst of them: the next is refused
  // rather than an established connection closed for it.
  if (idlest->spoke.load() && in_grace) return false;
  // Its descriptor is open while it is in conns_ (its thread erases it
  // under mu_ before closing): the shutdown ends its thread's recv.
  idlest->evicted = true;
  log_->Say(LogKind::kEviction, [&] {
    return "connection limit of " + std::to_string(max_connections_) +
           " reached: closed connection " + std::to_string(idlest->index) + " from " +
           PeerName(idlest->fd.get()) + ", idle " +
           Seconds(common::NowNs() - idlest->active_ns.load()) + ", for the new one from " +
           newcomer + " (" + std::to_string(evicted_.load() + 1) + " evicted so far)";
  });
  evicting_++;
  evicted_++;
  Cut(*idlest);
  return true;
}

void TcpServer::Cut(Conn& c) {
  c.cut = true;
  // First: a thread blocked in send (holding write_mu) returns.
  shutdown(c.fd.get(), SHUT_RDWR);
  std::lock_guard<std::mutex> lock(c.write_mu);
  c.space_cv.notify_all();  // a reader waiting for queue space ends
}

void TcpServer::Charge(Conn& c, size_t* charged, size_t now) {
  if (now > *charged) {
    const size_t d = now - *charged;
    c.held += d;
    *c.host_held += d;
    const size_t total = held_.fetch_add(d) + d;
    size_t peak = peak_.load(std::memory_order_relaxed);
    while (total > peak && !peak_.compare_exchange_weak(peak, total)) {
    }
  } else if (now < *charged) {
    const size_t d = *charged - now;
    c.held -= d;
    *c.host_held -= d;
    held_ -= d;
  }
  *charged = now;
}

bool TcpServer::MayGrow(const Conn& c, size_t others, size_t own, bool waited) const {
  const size_t held = held_.load(std::memory_order_relaxed) + others;
  // Under the budget without its own reservation: it goes ahead (else a
  // reservation larger than what is left would wait for good, with
  // nothing over the budget to reset); one that has waited, once no
  // lighter host waits (FirstInLine: whichever waiter looked first would
  // win otherwise, and a host with many connections has many waiters). A
  // connection that has not waited (a busy one between its calls) is not
  // held up by the line.
  if (held <= budget_) return !waited || FirstInLine(c);
  // Over it: a connection holding less than its share goes on (the heavy
  // ones are what the resets are for), within a quarter more, once no
  // lighter host waits.
  const uint64_t open = std::max<uint64_t>(1, open_.load(std::memory_order_relaxed));
  return held + own <= budget_ + budget_ / 4 &&
         c.held.load(std::memory_order_relaxed) < budget_ / open && FirstInLine(c);
}

bool TcpServer::FirstInLine(const Conn& c) const {
  if (waiting_count_.load(std::memory_order_relaxed) == 0) return true;
  const size_t mine = c.host_held->load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(waiting_mu_);
  for (const Conn* w : waiting_) {
    if (w->host_held->load(std::memory_order_relaxed) < mine) return false;
  }
  return true;
}

bool TcpServer::WaitForMemory(const Conn& c, size_t step) {
  bool waiting = false;
  auto leave = [&](bool result) {
    if (waiting) {
      std::lock_guard<std::mutex> lock(waiting_mu_);
      waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &c));
      waiting_count_--;
    }
    return result;
  };
  while (true) {
    if (stopping_ || c.cut.load()) return leave(false);
    const size_t others = reserved_.fetch_add(step);
    if (MayGrow(c, others, step, waiting)) return leave(true);
    reserved_ -= step;
    if (!waiting) {
      std::lock_guard<std::mutex> lock(waiting_mu_);
      waiting_.push_back(&c);
      waiting_count_++;
      waiting = true;
    }
    usleep(kMemoryWaitUs);
  }
}

void TcpServer::ResetHeaviest() {
  if (held_.load() <= budget_) return;
  // What connections already reset still hold goes as their threads end:
  // it does not count again.
  size_t total = held_.load();
  std::vector<std::shared_ptr<Conn>> by_held;
  for (auto& [index, c] : conns_) {
    if (c->cut.load()) {
      total -= std::min(total, c->held.load());
    } else {
      by_held.push_back(c);
    }
  }
  std::sort(by_held.begin(), by_held.end(),
            [](const auto& a, const auto& b) { return a->held.load() > b->held.load(); });
  for (auto& c : by_held) {
    if (total <= budget_) break;
    const size_t held = c->held.load();
    if (held == 0) break;
    log_->Say(LogKind::kMemory, [&] {
      return "memory budget of " + std::to_string(budget_ >> 20) + " MiB exceeded (" +
             std::to_string(total >> 20) + " MiB held): reset connection " +
             std::to_string(c->index) + " from " + PeerName(c->fd.get()) + ", which held " +
             std::to_string(held >> 10) + " KiB (--max-memory raises it)";
    });
    memory_resets_++;
    // As for eviction, its descriptor is open while it is in conns_.
    ResetOnClose(c->fd.get());
    Cut(*c);
    total -= std::min(total, held);
  }
}

void TcpServer::Housekeeping() {
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t next_sweep = common::NowNs() + 1000000000ull;
  while (true) {
    reap_cv_.wait_for(lock, std::chrono::nanoseconds(kBudgetCheckNs),
                      [&] { return stopping_ || !finished_.empty(); });
    if (stopping_) return;  // Stop joins the rest
    ResetHeaviest();
    while (!finished_.empty()) {
      uint32_t index = finished_.back();
      finished_.pop_back();
      auto it = threads_.find(index);
      if (it == threads_.end()) continue;
      std::thread t = std::move(it->second);
      threads_.erase(it);
      lock.unlock();
      t.join();  // it has said it is done: this returns at once
      lock.lock();
    }
    const uint64_t now = common::NowNs();
    if (now >= next_sweep) {
      next_sweep = now + 1000000000ull;
      lock.unlock();
      core_->ExpireIdleContexts();
      // Buffers given back by idle connections return to the system (the
      // allocator keeps freed chunks of its arenas otherwise); at most once
      // a second, and only after some were.
      if (trim_wanted_.exchange(false)) malloc_trim(0);
      lock.lock();
    }
  }
}

bool TcpServer::Enqueue(const std::shared_ptr<Conn>& conn, ByteView record, uint64_t read_ns,
                        uint32_t position) {
  Conn& c = *conn;
  const size_t size = record.size();
  auto full = [&] {
    const uint32_t n = c.outstanding.load();
    return n > 0 && (n >= static_cast<uint32_t>(options_.max_queue) ||
                     c.outstanding_bytes.load() + size > options_.max_queue_bytes);
  };
  if (full()) {
    // This connection has enough in the workers' hands: stop reading it
    // (TCP pushes back on its client) until some of it is answered.
    std::unique_lock<std::mutex> lock(c.write_mu);
    c.reader_waiting = true;
    c.space_cv.wait(lock, [&] { return stopping_ || c.cut.load() || !full(); });
    c.reader_waiting = false;
    if (stopping_ || c.cut.load()) return false;
  }
  // Over the memory budget, a connection holding more than its share
  // hands the workers nothing more until it is back under.
  if (!WaitForMemory(c, 0)) return false;
  c.outstanding++;
  c.outstanding_bytes += size;
  size_t none = 0;
  Charge(c, &none, size);
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    jobs_.push_back(Job{conn, Bytes(record.begin(), record.end()), read_ns, position});
  }
  jobs_cv_.notify_one();
  return true;
}

void TcpServer::Answered(Conn& c, size_t record_bytes) {
  c.outstanding--;
  c.outstanding_bytes -= record_bytes;
  size_t charged = record_bytes;
  Charge(c, &charged, 0);
  if (c.reader_waiting) c.space_cv.notify_one();
}

void TcpServer::DropPending(Conn& c) {
  for (auto& job : c.parked) Answered(c, job.record.size());
  c.parked.clear();
  Bytes().swap(c.backlog);
  c.backlog_sent = 0;
  c.backlog_bytes = 0;
  Charge(c, &c.backlog_charged, 0);
}

void TcpServer::SendOrQueue(const std::shared_ptr<Conn>& conn, ByteView mark, ByteView reply) {
  Conn& c = *conn;
  if (c.closed) return;
  size_t sent = 0;
  if (c.backlog_bytes.load() == 0) {
    // The common case: the socket takes the whole reply now (one sendmsg,
    // as before), never waiting for a client that does not read.
    auto w = SendNow2(c.fd.get(), mark, reply);
    if (!w.ok()) {
      shutdown(c.fd.get(), SHUT_RDWR);  // the client is gone; its thread ends
      return;
    }
    sent = *w;
    if (sent == mark.size() + reply.size()) return;
    c.progress_ns = common::NowNs();
    c.drained = 0;
  }
  // The rest waits in the backlog (after what is there), for the flusher.
  if (sent < mark.size()) c.backlog.insert(c.backlog.end(), mark.begin() + sent, mark.end());
  const size_t from = sent > mark.size() ? sent - mark.size() : 0;
  c.backlog.insert(c.backlog.end(), reply.begin() + static_cast<std::ptrdiff_t>(from), reply.end());
  c.backlog_bytes = c.backlog.size() - c.backlog_sent;
  Charge(c, &c.backlog_charged, c.backlog.capacity());
  if (!c.flushing) {
    c.flushing = true;
    {
      std::lock_guard<std::mutex> lock(flush_mu_);
      flushing_.push_back(conn);
    }
    flush_cv_.notify_one();
    uint64_t one = 1;
    (void)!write(wake_fd_.get(), &one, sizeof one);
  }
}

void TcpServer::WorkerLoop() {
  struct AddUsage {
    common::ThreadUsageTotal& total;
    common::ThreadUsageMeter meter;
    ~AddUsage() { total.Add(meter.Elapsed()); }
  } add_usage{usage_, common::ThreadUsageMeter(options_.thread_scheduling)};
  Bytes reply, out;
  const auto tick = std::chrono::nanoseconds(tick_ns_);
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(jobs_mu_);
      if (!jobs_cv_.wait_for(lock, tick, [&] { return stopping_ || !jobs_.empty(); })) {
        // Idle for a tick: give large buffers back.
        lock.unlock();
        bool released = reply.capacity() > kKeepBuffer || out.capacity() > kKeepBuffer;
        ReleaseIfLarge(reply);
        ReleaseIfLarge(out);
        if (RpcServerCore::ReleaseThreadBuffers() || released) trim_wanted_ = true;
        continue;
      }
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    Conn& c = *job.conn;
    if (c.closing.load(std::memory_order_relaxed) || c.cut.load(std::memory_order_relaxed)) {
      // Its connection is ending: the call is dropped (its reply could not
      // go out), so its memory goes back now.
      std::lock_guard<std::mutex> lock(c.write_mu);
      Answered(c, job.record.size());
      continue;
    }
    if (c.backlog_bytes.load(std::memory_order_relaxed) >= options_.max_backlog) {
      // Its client is not reading: set the call aside (the flusher puts it
      // back when the backlog drains) instead of building more replies.
      std::lock_guard<std::mutex> lock(c.write_mu);
      if (c.closed) {
        Answered(c, job.record.size());
        continue;
      }
      if (c.backlog_bytes.load() >= options_.max_backlog) {
        c.parked.push_back(std::move(job));
        continue;
      }
    }
    if (!MayGrow(c, 0, 0, false)) {
      // Over the memory budget and holding its share: the call waits at
      // the back of the queue (its reply could grow the backlog) until the
      // resets bring the total back; a connection reset meanwhile ends at
      // once (Cut), and its calls are dropped above.
      {
        std::lock_guard<std::mutex> lock(jobs_mu_);
        jobs_.push_back(std::move(job));
      }
      usleep(kWorkerMemoryWaitUs);
      continue;
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
      std::lock_guard<std::mutex> lock(c.write_mu);
      SendOrQueue(job.conn, out, reply);
      if (trace) replied_ns = common::NowNs();
      Answered(c, job.record.size());
    } else {
      std::lock_guard<std::mutex> lock(c.write_mu);
      if (d == Disposition::kDropDisconnect) {
        if (!c.closed) shutdown(c.fd.get(), SHUT_RDWR);
        if (trace) {
          trace->Record(SetupEvent{SetupEventKind::kServerClosed, c.index, common::NowNs()});
        }
      }
      Answered(c, job.record.size());
    }
    if (trace && check.checked) {
      ServerCallEvent e =
          TraceEvent(check, c.index, TraceThread::kServerWorker, job.read_ns, job.batch_position);
      e.replied_ns = replied_ns;
      trace->Record(e);
    }
  }
}

void TcpServer::FlushLoop() {
  std::vector<std::shared_ptr<Conn>> conns;
  std::vector<pollfd> pfds;
  const int tick_ms = static_cast<int>(std::max<uint64_t>(1, tick_ns_ / 1000000));
  while (true) {
    {
      std::unique_lock<std::mutex> lock(flush_mu_);
      flush_cv_.wait(lock, [&] { return stopping_ || !flushing_.empty(); });
      if (stopping_) return;
      conns = flushing_;
    }
    pfds.assign(1, pollfd{wake_fd_.get(), POLLIN, 0});
    for (auto& c : conns) {
      // The number is only a hint (the descriptor may close meanwhile):
      // sending happens under the connection's lock, after checking.
      std::lock_guard<std::mutex> lock(c->write_mu);
      pfds.push_back(pollfd{c->closed ? -1 : c->fd.get(), POLLOUT, 0});
    }
    int n = poll(pfds.data(), pfds.size(), tick_ms);
    if (n < 0 && errno != EINTR) usleep(1000);
    if (pfds[0].revents & POLLIN) {
      uint64_t v;
      (void)!read(wake_fd_.get(), &v, sizeof v);
    }
    const uint64_t now = common::NowNs();
    std::vector<std::shared_ptr<Conn>> done;
    for (size_t i = 0; i < conns.size(); ++i) {
      Conn& c = *conns[i];
      std::lock_guard<std::mutex> lock(c.write_mu);
      if (!c.closed && (pfds[i + 1].revents & (POLLOUT | POLLERR | POLLHUP))) {
        while (c.backlog_sent < c.backlog.size()) {
          auto w = SendNow2(c.fd.get(), ByteView(c.backlog).subspan(c.backlog_sent), {});
          if (!w.ok()) {
            shutdown(c.fd.get(), SHUT_RDWR);
            DropPending(c);
            break;
          }
          if (*w == 0) break;
          c.backlog_sent += *w;
          c.drained += *w;
        }
        c.backlog_bytes = c.backlog.size() - c.backlog_sent;
        // The send deadline: the client takes max_backlog bytes (or all
        // of it) per send_timeout, however it trickles.
        if (c.drained >= options_.max_backlog || c.backlog_bytes.load() == 0) {
          c.progress_ns = now;
          c.drained = 0;
        }
      }
      if (!c.closed && c.backlog_bytes.load() > 0 && send_ns_ > 0 &&
          now - c.progress_ns > send_ns_) {
        log_->Say(LogKind::kSendDeadline, [&] {
          return "connection " + std::to_string(c.index) + " from " + PeerName(c.fd.get()) +
                 " took too few of its replies for " + Seconds(send_ns_) + ": closed";
        });
        send_timeouts_++;
        ResetOnClose(c.fd.get());  // what is queued would never go: drop it
        shutdown(c.fd.get(), SHUT_RDWR);
        DropPending(c);
      }
      if (c.closed || c.backlog_bytes.load() == 0) {
        if (!c.closed) {
          // Drained: the backlog's memory goes back, set-aside calls run.
          c.backlog.clear();
          c.backlog_sent = 0;
          ReleaseIfLarge(c.backlog);
          Charge(c, &c.backlog_charged, c.backlog.capacity());
          if (!c.parked.empty()) {
            {
              std::lock_guard<std::mutex> jl(jobs_mu_);
              jobs_.insert(jobs_.begin(), std::make_move_iterator(c.parked.begin()),
                           std::make_move_iterator(c.parked.end()));
            }
            c.parked.clear();
            jobs_cv_.notify_all();
          }
        } else {
          DropPending(c);
        }
        c.flushing = false;
        done.push_back(conns[i]);
      }
    }
    conns.clear();
    if (!done.empty()) {
      std::lock_guard<std::mutex> lock(flush_mu_);
      for (auto& d : done) {
        flushing_.erase(std::remove(flushing_.begin(), flushing_.end(), d), flushing_.end());
      }
    }
  }
}

void TcpServer::Serve(std::shared_ptr<Conn> conn) {
  const common::ThreadUsageMeter meter(options_.thread_scheduling);
  RecordReader reader(options_.max_record);
  Bytes reply, out;
  const int fd = conn->fd.get();
  CallTrace* trace = options_.trace;
  if (trace)
    trace->Record(SetupEvent{SetupEventKind::kServerStarted, conn->index, common::NowNs()});
  std::vector<ServerCallEvent> traced;  // this batch's checked calls not yet written
  bool open = true;
  bool dropped = false;        // closed by a drop-disconnect
  uint64_t idle_since = 0;     // first idle tick of this quiet spell (0: data came)
  uint64_t stuck_since = 0;    // when part of a record sat without a record completing
  bool heard = false;          // a byte came (the first-record deadline)
  bool completed_one = false;  // a record completed
  bool partial = false;        // counted in partial_records_
  uint64_t large_ns = 0;       // when a batch last needed buffers beyond kKeepBuffer
  bool shrunk = true;
  // Writes `buf` whole. The send deadline: the client must take the whole
  // of it within send_ns_ (a trickle of progress does not reset it); the
  // socket's SO_SNDTIMEO (a tick) makes a blocked send return so the
  // deadline can be checked, and the clock is read only once a send has
  // not taken everything. False when the connection must close.
  auto send_all = [&](const Bytes& buf) -> bool {
    int err = 0;
    {
      std::lock_guard<std::mutex> lock(conn->write_mu);
      uint64_t deadline = 0;
      for (size_t done = 0; done < buf.size();) {
        ssize_t w = send(fd, buf.data() + done, buf.size() - done, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
          err = errno;
          break;
        }
        if (w > 0) done += static_cast<size_t>(w);
        if (done == buf.size() || send_ns_ == 0) continue;
        const uint64_t now = common::NowNs();
        if (deadline == 0) deadline = now + send_ns_ - std::min(send_ns_, tick_ns_);
        if (now >= deadline) {
          err = EAGAIN;
          break;
        }
      }
    }
    if (err == EAGAIN) {
      ResetOnClose(fd);  // what is queued would never go: drop it
      log_->Say(LogKind::kSendDeadline, [&] {
        return "connection " + std::to_string(conn->index) + " from " + PeerName(fd) +
               " took too few of its replies for " + Seconds(send_ns_) + ": closed";
      });
      send_timeouts_++;
    }
    return err == 0;
  };
  // TcpServerOptions::reply_delay_us: the replies go through a delay line
  // whose thread writes them when due (stopped before this thread ends).
  // A failed write shuts the connection down at once, so this thread's
  // recv returns and it ends (the descriptor stays valid until then: the
  // line is stopped before it is closed).
  std::unique_ptr<common::DelayLine> delay;
  if (options_.reply_delay_us > 0) {
    try {
      // At most max_gather bytes wait in it: beyond, this thread waits
      // before it executes more calls, as it would in send.
      delay = std::make_unique<common::DelayLine>(uint64_t{options_.reply_delay_us} * 1000,
                                                  options_.max_gather, [&](Bytes& buf) {
                                                    if (send_all(buf)) return true;
                                                    shutdown(fd, SHUT_RDWR);
                                                    return false;
                                                  });
    } catch (const std::system_error& e) {
      // No thread for the delay line: this connection only is closed.
      log_->Say(LogKind::kAcceptError, [&] {
        return "connection " + std::to_string(conn->index) +
               ": no thread for its reply delay line (" + e.what() + "): closed";
      });
      thread_failures_++;
      open = false;
    }
  }
  // Sends what is gathered (or hands it to the delay line); the traced
  // calls in it are replied now.
  auto flush = [&]() -> bool {
    if (out.empty()) return true;
    const bool ok = delay ? delay->Push(out) : send_all(out);
    out.clear();
    if (!ok) return false;
    if (!traced.empty()) {
      const uint64_t replied_ns = common::NowNs();
      for (auto& e : traced) {
        e.replied_ns = replied_ns;
        trace->Record(e);
      }
      traced.clear();
    }
    return true;
  };
  // The memory accountant: this thread's buffers and its delay line. The
  // RPC core's scratch on this thread (the results, sealed or not, of the
  // largest call since the last shrink) is not visible here; it is charged
  // as twice the reply buffer (the results and their sealed copy are each
  // about the reply's size).
  size_t charged = 0;
  size_t step = 2 * options_.max_gather;
  auto recharge = [&] {
    if (delay) conn->delayed = delay->queued_bytes();
    Charge(*conn, &charged,
           reader.capacity() + (options_.workers == 0 ? 3 : 1) * reply.capacity() + out.capacity() +
               (delay ? delay->held_bytes() : 0));
  };
  // Gives back buffers beyond what an idle connection keeps.
  auto shrink = [&] {
    bool released = reader.capacity() > kKeepBuffer || reply.capacity() > kKeepBuffer ||
                    out.capacity() > kKeepBuffer;
    reader.Shrink(kKeepBuffer);
    ReleaseIfLarge(reply);
    ReleaseIfLarge(out);
    if (options_.workers == 0 && RpcServerCore::ReleaseThreadBuffers()) released = true;
    if (released) trim_wanted_ = true;
    shrunk = true;
    recharge();
  };
  // Only while nothing came: once a byte did, the record deadline rules
  // (a large first record may take longer to arrive).
  auto first_too_long = [&](uint64_t now) {
    if (heard || first_ns_ == 0 || now - conn->accepted_ns < first_ns_) return false;
    log_->Say(LogKind::kRecordDeadline, [&] {
      return "connection " + std::to_string(conn->index) + " from " + PeerName(fd) +
             " sent nothing in the " + Seconds(first_ns_) + " after it was accepted: closed";
    });
    first_record_timeouts_++;
    return true;
  };
  auto stuck_too_long = [&](uint64_t now) {
    if (stuck_since == 0) stuck_since = now;
    if (record_ns_ == 0 || now - stuck_since < record_ns_) return false;
    log_->Say(LogKind::kRecordDeadline, [&] {
      return "connection " + std::to_string(conn->index) + " from " + PeerName(fd) +
             " sent part of a record (" + std::to_string(reader.buffered()) +
             " bytes) and completed none for " + Seconds(record_ns_) + ": closed";
    });
    record_timeouts_++;
    return true;
  };
  uint64_t reads = 0;
  while (open && !stopping_) {
    // Over the memory budget, a connection holding more than its share
    // reads nothing until the server is back under it.
    if (!WaitForMemory(*conn, 0)) break;
    auto space = reader.WriteSpace(kReadChunk);
    recharge();
    ssize_t n = recv(fd, space.data(), space.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // A tick without bytes (SO_RCVTIMEO): deadlines, then buffers back.
      const uint64_t now = common::NowNs();
      if (first_too_long(now)) break;
      if (reader.in_record()) {
        if (stuck_too_long(now)) break;
      } else if (options_.workers == 0 || conn->outstanding.load() == 0) {
        if (idle_since == 0) idle_since = now - std::min(now, tick_ns_);
        if (idle_ns_ > 0 && now - idle_since >= idle_ns_) {
          log_->Say(LogKind::kIdleDeadline, [&] {
            return "connection " + std::to_string(conn->index) + " from " + PeerName(fd) +
                   " sent nothing for " + Seconds(idle_ns_) + ": closed";
          });
          idle_closed_++;
          break;
        }
      }
      if (!shrunk) shrink();
      if (delay) recharge();  // the line sent what it held
      continue;
    }
    if (n <= 0) break;  // end of stream, reset, or the server stopping
    ++reads;
    conn->busy = true;
    heard = true;
    conn->active_ns = common::NowNs();
    idle_since = 0;
    shrunk = false;
    const uint64_t read_ns = trace ? common::NowNs() : 0;
    uint32_t position = 0;
    size_t used = 0;  // the largest record, reply or gathered replies of this batch
    reader.Commit(static_cast<size_t>(n));
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
      if (!completed_one) conn->spoke = true;
      completed_one = true;
      used = std::max(used, record.size());
      if (options_.workers > 0) {
        if (!Enqueue(conn, record, read_ns, position++)) {
          open = false;
          break;
        }
        continue;
      }
      // The call may grow this thread's buffers by up to `step` (2 x
      // max_gather for a first call, then what its last one did): reserved
      // until they are charged, so calls starting at once cannot all pass
      // the budget's check before any is charged.
      if (!WaitForMemory(*conn, step)) {
        open = false;
        break;
      }
      const size_t before = charged;
      CallCheck check;
      Disposition d = core_->HandleCall(record, &reply, trace ? &check : nullptr);
      if (d == Disposition::kReply) {
        AppendRecordMark(static_cast<uint32_t>(reply.size()), &out);
        out.insert(out.end(), reply.begin(), reply.end());
        used = std::max(used, out.size());
      }
      recharge();
      reserved_ -= step;
      step = std::max(charged > before ? charged - before : 0, kKeepBuffer);
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
        // Flush as we go: a read's replies are gathered up to max_gather.
        if (out.size() >= options_.max_gather && !flush()) {
          open = false;
          break;
        }
      } else if (d == Disposition::kDropDisconnect) {
        open = false;
        dropped = true;
        break;
      }
    }
    if (!flush()) break;
    // Buffers no batch has needed large for a tick go back now, whether
    // or not calls keep coming (a client calling every half second never
    // leaves a tick idle).
    if (used > kKeepBuffer) {
      large_ns = common::NowNs();
    } else if (!reader.in_record() &&
               (reader.capacity() > kKeepBuffer || reply.capacity() > kKeepBuffer ||
                out.capacity() > kKeepBuffer) &&
               common::NowNs() - large_ns >= tick_ns_) {
      shrink();
    }
    recharge();
    conn->busy = reader.in_record();
    if (partial != reader.in_record()) {
      partial = reader.in_record();
      if (partial) {
        partial_records_++;
      } else {
        partial_records_--;
      }
    }
    // Part of a record and nothing completed in this read: the record
    // deadline runs (a client trickling a record byte by byte never
    // leaves the receive idle long enough for a tick).
    if (position == 0 && reader.in_record()) {
      if (stuck_too_long(common::NowNs())) break;
    } else {
      stuck_since = 0;
    }
  }
  if (partial) partial_records_--;
  for (auto& e : traced) trace->Record(e);  // replies never written
  shutdown(fd, SHUT_RDWR);                  // first: a delay line blocked in send returns
  if (delay) delay->Stop();                 // replies still held are dropped with the connection
  if (trace && dropped) {
    trace->Record(SetupEvent{SetupEventKind::kServerClosed, conn->index, common::NowNs()});
  }
  usage_.Add(meter.Elapsed());
  reads_ += reads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    conns_.erase(conn->index);  // Stop no longer shuts it down
  }
  {
    // The descriptor goes now, not when the thread is joined; workers and
    // the flusher check `closed` before they use it.
    std::lock_guard<std::mutex> lock(conn->write_mu);
    conn->closed = true;
    conn->closing = true;
    conn->fd.Reset();
    DropPending(*conn);
  }
  reader = RecordReader(options_.max_record);
  Bytes().swap(reply);
  Bytes().swap(out);
  delay.reset();
  Charge(*conn, &charged, 0);
  std::lock_guard<std::mutex> lock(mu_);
  open_--;
  if (conn->evicted) evicting_--;
  if (--per_host_[conn->host].connections == 0) per_host_.erase(conn->host);
  finished_.push_back(conn->index);
  reap_cv_.notify_one();
}

}  // namespace secmode::rpc
