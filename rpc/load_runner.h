// The load generator's insides (rpc/load.h's RunLoad), shared by its three
// files: load.cc (the run: connections, receivers, the timeout monitor,
// reconnects, the NFSv4.1 session, the report), load_send.cc (the send
// path: numbering checked at transmit, batches, each connection's write
// queue, the delay lines) and load_contexts.cc (the RPCSEC_GSS contexts'
// lifetime: creation, re-creation after the server dropped one, DESTROY at
// the end). Not an interface: only those files include it.
//
// Thread safety: as each member says; a Runner is used by the thread that
// called RunLoad and the threads it starts, all joined before Run returns.
#ifndef SECMODE_RPC_LOAD_RUNNER_H_
#define SECMODE_RPC_LOAD_RUNNER_H_

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/backoff.h"
#include "common/bytes.h"
#include "common/clock.h"
#include "common/latency.h"
#include "common/machine.h"
#include "common/socket.h"
#include "common/status.h"
#include "rpc/call_trace.h"
#include "rpc/client_auth.h"
#include "rpc/load.h"
#include "rpc/nfs.h"
#include "rpc/nfs41.h"

namespace secmode::rpc::load_internal {

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

// The client's security for `service` (0: AUTH_SYS); RPCSEC_GSS contexts are
// created over a short connection of their own (RFC 2203 5.2), each round
// trip within o.init_timeout_ms and `run` (the run's deadline).
Result<std::shared_ptr<ClientAuth>> NewLoadAuth(const LoadOptions& o, uint32_t service,
                                                Deadline run = {});

// RFC 2203 5.4: ends the contexts of `auths` on the server, one DESTROY
// after the other on one short connection, best effort within `deadline`.
// A DESTROY denied with RPCSEC_GSS_CREDPROBLEM or CTXPROBLEM (5.3.3.3: the
// server does not hold the handle) finds a context the server already
// forgot, e.g. discarded for a call that reached it after the run's last
// reply was read; it counts in *gone, not as left. Returns how many were
// destroyed; *first_error says why the first one left was.
uint64_t DestroyContexts(const LoadOptions& o,
                         const std::vector<std::shared_ptr<ClientAuth>>& auths, Deadline deadline,
                         uint64_t* gone, std::string* first_error);

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
// The thread-locals are defined in load_send.cc, beside the per-call path
// that reads them.
extern thread_local SendBatch* tl_batch;
// The thread that is numbering and writing calls (tracing).
extern thread_local TraceThread tl_thread;
extern thread_local uint32_t tl_thread_index;
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
  // The measured time: from the first calls (t0) to the end (stop), and the
  // machine's idle and steal shares and others' CPU from its start to its end.
  struct Span {
    uint64_t t0 = 0, stop = 0;
    double idle_fraction = -1, steal_fraction = -1;
    common::CpuShare others, steal;
  };
  // Run's steps, in order. CheckOptions refuses bad options and sets the
  // run's deadline; CreateContexts and OpenConnections (with the slots and
  // the NFSv4.1 session) destroy the contexts made when they fail, their
  // step named (StepFailed); Measure starts the threads and the first calls
  // and returns when the measured time is over, the run failed or its
  // deadline passed; StopThreads ends and joins them and closes the
  // sockets; Report is what was measured and Outcome the run's failure, if
  // any (a server that answered nothing included).
  Status CheckOptions();
  Status CreateContexts(const std::string& where);
  Status OpenConnections(const std::string& where);
  Span Measure(const std::string& where);
  void StopThreads();
  LoadReport Report(const Span& span);
  Status Outcome(const Span& span, const std::string& where);
  // `s` annotated with the step, and with the deadline when it has passed.
  Status StepFailed(const Status& s, const std::string& step) const;
  int ContextCount() const { return o_.context_per_connection ? o_.connections : 1; }
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

}  // namespace secmode::rpc::load_internal

#endif  // SECMODE_RPC_LOAD_RUNNER_H_
