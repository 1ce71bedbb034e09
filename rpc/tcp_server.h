// TcpServer: serves RpcServerCore over TCP with RFC 5531 section 11 record
// marking. One thread accepts; each connection gets a thread that reads
// whatever arrived, handles every complete record in it and writes all the
// replies with one send (replies to pipelined calls are batched, as a
// kernel server's socket would coalesce them). With `workers` > 0 the
// records are handed to that many worker threads instead (one FIFO), and
// replies are written by the workers under the connection's write lock.
//
// A connection whose byte stream is broken (oversize or malformed record
// mark) is closed and counted; a record that does not decode is dropped;
// the window policy `drop-disconnect` closes the connection. Every other
// connection keeps being served.
//
// Limits (TcpServerOptions; `secmode serve` has a flag for each), so that a
// hostile or careless client can only stall itself:
//  - max_connections open at once (by default as many as the descriptor
//    limit allows with 64 to spare, at most 1024), and at most
//    max_connections_per_host from one peer address (64). A newcomer over
//    its host's cap is closed at once; at the global cap the connection
//    idle longest with nothing pending (no part of a record, no bytes
//    unread in its socket, no call queued, no reply waiting or held in its
//    delay line; one that has completed no record yet goes first, once it
//    has been open a tick; one that has completed a record only while no
//    newcomer is in that tick) is closed to admit it, and only when there
//    is none is the newcomer closed (each with a log line). Out of
//    descriptors (EMFILE), the waiting client is accepted on a reserve
//    descriptor and closed; a connection's descriptor is closed as soon as
//    its thread ends, and a housekeeping thread joins ended threads at
//    once. Every accept error and a thread that cannot start are logged and
//    survived.
//  - max_memory: one byte budget for the whole server. Every connection's
//    read buffer, gathered replies and reply scratch, calls queued for the
//    workers, reply backlog and delay line are charged to one accountant as
//    they grow and released as they shrink. Above the budget a connection
//    holding its share (budget / open connections) or more neither reads
//    nor executes (a worker puts its call back at the end of the queue)
//    until the total is back under it, nor does any above a quarter more
//    than the budget. Memory that comes free goes to the lightest peer
//    first: a connection that has waited for memory, or any over the
//    budget, waits on while a connection from a host holding less (all its
//    connections together) waits, so a host with many connections cannot
//    crowd out one with few. The
//    housekeeping thread resets the connections holding the most (every
//    tenth of a second) until the total is under it. A reset or evicted
//    connection ends at once: its reader wakes, the workers drop its
//    calls. max_memory is at least 4 x max_gather.
//  - replies of one read are gathered up to max_gather bytes, then sent
//    (flush as you go); the NFS program caps one call's reply
//    (MemoryNfsServer's max_reply). No call of a connection is executed
//    while it holds max_gather unsent bytes (its thread waits in send, its
//    delay line is full, or, with workers, its backlog holds max_backlog).
//  - idle_timeout: a connection that sends nothing that long (with no call
//    of it pending) is closed; first_record_timeout: one that has sent
//    not a byte that long after it was accepted is closed (after its first
//    byte, record_timeout rules);
//    record_timeout: one that has sent part of a record and completes no
//    record that long is closed; send_timeout: one that does not take a
//    batch of its replies (max_gather bytes, or max_backlog with workers)
//    within that long is reset, however it trickles. An idle thread looks
//    at its deadlines every tick (SO_RCVTIMEO and SO_SNDTIMEO of a quarter
//    of the shortest deadline, 10 ms .. 1 s, inherited from the listening
//    socket: no system call per call).
//  - the read buffer grows as bytes arrive (RecordReader); when a batch is
//    done with nothing more to read, a connection's buffers beyond 64 KiB,
//    and its thread's scratch, are given back at once.
//  - with workers: each connection may have max_queue calls (of at most
//    max_queue_bytes) handed to the workers and not yet answered; beyond
//    that its reader stops reading (TCP pushes back on that client only).
//    Workers never block in send: a reply the socket does not take at once
//    waits in the connection's backlog, which a flusher thread writes as
//    the client reads; while the backlog holds max_backlog bytes or more,
//    the workers set that connection's calls aside instead of running them.
// Memory: what the accountant holds (TcpServerStats::memory_held) is at
// most 1.25 x max_memory or max_memory + the largest reservation if more
// (a call goes ahead while the total without its own reservation is
// under the budget), plus what calls grow beyond what they reserved
// (a call reserves 2 x max_gather if it is its connection's first, else
// what its connection's last call grew: a connection whose calls grow
// takes at most one call's growth, about 4 x max_reply, unreserved), and
// a read of 64 KiB per connection, for the tenth of a second until the
// resets bring it back under the budget. Not charged: threads' stacks, and
// the workers' own reply scratch (workers x 2 x max_reply).
//
// Thread safety: Start/Stop from one thread; stats() from any.
#ifndef SECMODE_RPC_TCP_SERVER_H_
#define SECMODE_RPC_TCP_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/socket.h"
#include "rpc/call_trace.h"
#include "rpc/record.h"
#include "rpc/server_core.h"
#include "rpc/server_log.h"

namespace secmode::rpc {

// Defaults of TcpServerOptions (see there).
constexpr int kDefaultMaxConnectionsPerHost = 64;
constexpr size_t kDefaultMaxMemory = size_t{512} << 20;
// max_memory is at least this many times max_gather (a connection's first
// call reserves 2 x max_gather; see "Memory" above).
constexpr size_t kMinMemoryPerGather = 4;

struct TcpServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0 = pick a free port
  size_t max_record = kDefaultMaxRecord;
  int workers = 0;  // 0 = handle calls on the connection's thread
  // Records every checked call (rpc/call_trace.h); must outlive the server.
  CallTrace* trace = nullptr;
  // Count the threads' sleeps, preemptions, run-queue waits and runs
  // (TcpServerStats; common::ThreadUsageMeter, which reads
  // /proc/thread-self/schedstat at each thread's start and end). Off, only
  // their CPU time is counted and a thread opens no file: a server on a real
  // network must not spend a descriptor per connection on it.
  bool thread_scheduling = false;

  // Connections open at once; at the cap the longest idle one with nothing
  // pending is closed for a newcomer, else the newcomer is (logged).
  // 0 = 1024, or fewer where RLIMIT_NOFILE would not leave 64 descriptors
  // for the server's own files (the acceptor's keytab and replay cache).
  int max_connections = 0;
  // Connections open at once from one peer address; the next one from it
  // is closed at once (logged). 0 = kDefaultMaxConnectionsPerHost. (With
  // max_connections lower, that cap is met first: at it, a host's idle
  // connection may be evicted for its own newcomer.)
  int max_connections_per_host = 0;
  // Bytes the server's buffers may hold in all (see "Memory" above).
  // 0 = kDefaultMaxMemory, or a quarter of physical memory if less.
  size_t max_memory = 0;
  // Reply bytes gathered from one read before they are sent.
  size_t max_gather = 2u << 20;
  // Workers only: calls of one connection handed to the workers and not yet
  // answered, and their bytes; beyond either, the connection is not read.
  int max_queue = 1024;
  size_t max_queue_bytes = 8u << 20;
  // Workers only: reply bytes waiting for a client that does not read;
  // beyond, its calls are set aside until it reads.
  size_t max_backlog = 2u << 20;
  // Deadlines in seconds (0 = none): no bytes from the client; no byte
  // since the connection was accepted; part of a record and no complete
  // record; a batch of replies (max_gather bytes,
  // or max_backlog with workers) not taken by the client.
  double idle_timeout_s = 360;
  double first_record_timeout_s = 5;
  double record_timeout_s = 30;
  double send_timeout_s = 30;
  // Holds every batch of replies this long before it is written: a one-way
  // network delay from server to client, emulated in user space
  // (common/delay_line.h; the lab's RTT where the kernel has no netem). Each
  // connection's delay line holds at most max_gather bytes; beyond, its
  // thread waits (so a delay of D caps one connection at max_gather / D).
  // Replies still held when a connection ends are dropped; a write that
  // fails closes the connection. Only with workers 0. TCP does not see the
  // delay. Traced calls (`trace`) are stamped replied when handed to the
  // line, not when written.
  uint32_t reply_delay_us = 0;
  // Where refusals, deadlines and accept errors are reported (empty:
  // standard error); each kind at most once a second.
  LogSink log;
};

struct TcpServerStats {
  uint64_t connections = 0;
  uint64_t bad_streams = 0;  // connections closed for a broken record stream
  // What the connection and worker threads that have finished (all of them
  // once Stop() returned) used: their CPU time and, with
  // TcpServerOptions::thread_scheduling, their sleeps (blocked, on a socket
  // mostly) and preemptions, time runnable but waiting for a CPU, and times
  // given one (the last two 0 where schedstat is unknown); without it only
  // the CPU time, the rest 0.
  common::ThreadUsage threads;
  // The connection threads' recv() calls that returned bytes (with workers 0
  // each read's calls are handled and answered as one batch).
  uint64_t reads = 0;
  uint64_t open_connections = 0;  // now
  uint64_t refused = 0;           // closed at accept: a connection cap or out of descriptors
  uint64_t host_refused = 0;      // of them, at max_connections_per_host
  uint64_t evicted = 0;           // idle connections closed to admit one at max_connections
  uint64_t accept_errors = 0;     // accept() failures other than EINTR / ECONNABORTED
  uint64_t thread_failures = 0;   // connections closed because no thread could start
  uint64_t idle_closed = 0, record_timeouts = 0, send_timeouts = 0;  // deadlines
  uint64_t first_record_timeouts = 0;
  // The memory accountant: bytes held now and at most since Start, and
  // connections reset to bring it back under max_memory.
  uint64_t memory_held = 0, memory_peak = 0, memory_resets = 0;
  // Connections holding part of a record they sent, now (as of their last
  // read).
  uint64_t partial_records = 0;
  // With workers, now: calls handed to the workers and not yet answered
  // (queued, set aside or running), and their bytes, over all connections.
  uint64_t queued_calls = 0, queued_bytes = 0;
};

class TcpServer {
 public:
  // `core` must outlive the server.
  static common::Result<std::unique_ptr<TcpServer>> Start(const TcpServerOptions& options,
                                                          RpcServerCore* core);
  ~TcpServer();
  void Stop();
  uint16_t port() const { return port_; }
  // The connection cap in force (TcpServerOptions::max_connections resolved).
  int max_connections() const { return max_connections_; }
  // The per-host cap and memory budget in force (resolved likewise).
  int max_connections_per_host() const { return max_per_host_; }
  size_t max_memory() const { return budget_; }
  // A count that a log line says is raised after the line is said: whoever
  // sees the count finds the line in TcpServerOptions::log.
  TcpServerStats stats() const;

 private:
  struct Conn;
  struct Job;
  TcpServer() = default;
  void AcceptLoop();
  void Admit(common::Fd fd);
  // At the connection cap: closes the connection idle longest with nothing
  // pending (mu_ held); false if there is none.
  bool EvictIdlest(const std::string& newcomer);
  // Ends a connection (evicted or reset; mu_ held, so its descriptor is
  // open): its thread's recv and send return, a reader waiting for queue
  // space wakes, and the workers drop its calls.
  void Cut(Conn& conn);
  // The memory accountant: moves `charged` (what `conn` was charged for one
  // of its buffers) to `now`.
  void Charge(Conn& conn, size_t* charged, size_t now);
  // Whether `conn` may grow now by `own` bytes reserved, with `others`
  // reserved by other calls: the total without `own` is under the budget
  // (and, if it `waited`, it is FirstInLine), or `conn` holds less than its
  // share, the total with `own` is under 1.25 x the budget and it is
  // FirstInLine.
  bool MayGrow(const Conn& conn, size_t others, size_t own, bool waited) const;
  // Whether no connection from a host holding less than `conn`'s host is
  // waiting for memory (takes waiting_mu_ if any is).
  bool FirstInLine(const Conn& conn) const;
  // Reserves `step` bytes (reserved_) for a growth of `conn`, waiting (a
  // tick at a time, in waiting_) until MayGrow; false if the connection or
  // the server is ending. The caller takes `step` off reserved_ once it has
  // charged.
  bool WaitForMemory(const Conn& conn, size_t step);
  // Over the budget: resets the connections holding the most until what is
  // left is under it (housekeeping thread).
  void ResetHeaviest();
  void RefuseWaitingClient();
  void Serve(std::shared_ptr<Conn> conn);
  void WorkerLoop();
  void FlushLoop();
  void Housekeeping();
  // Workers: hands a record to the FIFO, waiting while the connection has
  // too much queued; false when the connection or server is ending.
  bool Enqueue(const std::shared_ptr<Conn>& conn, common::ByteView record, uint64_t read_ns,
               uint32_t position);
  // Workers: a call of `conn` is answered (or dropped); write_mu held.
  void Answered(Conn& conn, size_t record_bytes);
  // Workers: writes or queues one reply; write_mu held.
  void SendOrQueue(const std::shared_ptr<Conn>& conn, common::ByteView mark,
                   common::ByteView reply);
  // Workers: drops the backlog and set-aside calls of a closed connection;
  // write_mu held.
  void DropPending(Conn& conn);

  TcpServerOptions options_;
  RpcServerCore* core_ = nullptr;
  common::Fd listen_fd_;
  common::Fd reserve_fd_;  // given back to accept one client when out of descriptors
  uint16_t port_ = 0;
  int max_connections_ = 0;
  int max_per_host_ = 0;
  size_t budget_ = 0;
  std::atomic<size_t> held_{0}, peak_{0};
  std::atomic<size_t> reserved_{0};  // for calls running, not yet charged
  // Connections waiting in WaitForMemory (their threads keep them alive).
  mutable std::mutex waiting_mu_;
  std::vector<const Conn*> waiting_;
  std::atomic<size_t> waiting_count_{0};  // waiting_.size()
  uint64_t tick_ns_ = 1000000000ull;      // SO_RCVTIMEO: how often an idle thread looks up
  uint64_t idle_ns_ = 0, first_ns_ = 0, record_ns_ = 0, send_ns_ = 0;
  std::unique_ptr<RateLimitedLog> log_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> trim_wanted_{false};  // buffers were given back: malloc_trim
  std::thread accept_thread_, housekeeping_thread_;
  mutable std::mutex mu_;  // guards conns_, threads_, finished_, per_host_, evicting_
  std::condition_variable reap_cv_;
  std::unordered_map<uint32_t, std::shared_ptr<Conn>> conns_;
  // Connection threads by connection index; ended ones are joined by the
  // housekeeping thread as soon as they say so in finished_.
  std::unordered_map<uint32_t, std::thread> threads_;
  std::vector<uint32_t> finished_;
  // Open connections by peer address, and what they hold together.
  struct Host {
    int connections = 0;
    std::shared_ptr<std::atomic<size_t>> held;
  };
  std::unordered_map<std::string, Host> per_host_;
  int evicting_ = 0;  // evicted connections whose threads have not ended yet
  std::atomic<uint64_t> connections_{0}, bad_streams_{0}, reads_{0}, open_{0}, refused_{0},
      accept_errors_{0}, thread_failures_{0}, idle_closed_{0}, record_timeouts_{0},
      send_timeouts_{0}, host_refused_{0}, evicted_{0}, first_record_timeouts_{0},
      memory_resets_{0}, partial_records_{0};
  common::ThreadUsageTotal usage_;  // of the connection and worker threads that ended
  // Worker pool (workers > 0).
  std::mutex jobs_mu_;
  std::condition_variable jobs_cv_;
  std::deque<Job> jobs_;
  std::vector<std::thread> workers_;
  // Flusher (workers > 0): connections with a backlog.
  std::mutex flush_mu_;
  std::condition_variable flush_cv_;
  std::vector<std::shared_ptr<Conn>> flushing_;
  common::Fd wake_fd_;  // eventfd: a connection was added to flushing_
  std::thread flusher_;
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_TCP_SERVER_H_
