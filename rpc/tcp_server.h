// TcpServer: serves RpcServerCore over TCP with RFC 5531 section 11 record
// marking. One thread accepts; each connection gets a thread that reads
// whatever arrived, handles every complete record in it and writes all the
// replies with one send (replies to pipelined calls are batched, as a
// kernel server's socket would coalesce them). With `workers` > 0 the
// records are handed to that many worker threads instead, and replies are
// written by the workers under the connection's write lock.
//
// A connection whose byte stream is broken (oversize or malformed record
// mark) is closed and counted; a record that does not decode is dropped;
// the window policy `drop-disconnect` closes the connection. Every other
// connection keeps being served.
//
// Thread safety: Start/Stop from one thread; counters() from any.
#ifndef SECMODE_RPC_TCP_SERVER_H_
#define SECMODE_RPC_TCP_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "rpc/call_trace.h"
#include "rpc/record.h"
#include "rpc/server_core.h"
#include "rpc/socket.h"

namespace secmode::rpc {

struct TcpServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0 = pick a free port
  size_t max_record = kDefaultMaxRecord;
  int workers = 0;  // 0 = handle calls on the connection's thread
  // Records every checked call (rpc/call_trace.h); must outlive the server.
  CallTrace* trace = nullptr;
};

struct TcpServerStats {
  uint64_t connections = 0;
  uint64_t bad_streams = 0;  // connections closed for a broken record stream
  // CPU time of connection and worker threads that have finished (all of
  // them once Stop() returned).
  uint64_t thread_cpu_ns = 0;
};

class TcpServer {
 public:
  // `core` must outlive the server.
  static common::Result<std::unique_ptr<TcpServer>> Start(const TcpServerOptions& options,
                                                          RpcServerCore* core);
  ~TcpServer();
  void Stop();
  uint16_t port() const { return port_; }
  TcpServerStats stats() const {
    return {connections_.load(), bad_streams_.load(), thread_cpu_ns_.load()};
  }

 private:
  struct Conn;
  struct Job;
  TcpServer() = default;
  void AcceptLoop();
  void Serve(std::shared_ptr<Conn> conn);
  void WorkerLoop();

  TcpServerOptions options_;
  RpcServerCore* core_ = nullptr;
  Fd listen_fd_;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::mutex mu_;
  std::list<std::shared_ptr<Conn>> conns_;
  // Connection threads; finished ones are joined on the next accept, so a
  // long-running server with many reconnects does not accumulate them.
  std::list<std::pair<std::shared_ptr<Conn>, std::thread>> threads_;
  std::atomic<uint64_t> connections_{0}, bad_streams_{0}, thread_cpu_ns_{0};
  // Worker pool (workers > 0).
  std::mutex jobs_mu_;
  std::condition_variable jobs_cv_;
  std::deque<Job> jobs_;
  std::list<std::thread> workers_;
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_TCP_SERVER_H_
