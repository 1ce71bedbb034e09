// LocalServer: the whole secmode RPC server in-process: the in-memory
// NFSv4.1-shaped program (nfs.h), RpcServerCore and a TcpServer listening on
// loopback (a free port by default). For `secmode load --local`, the e2e
// suite section and the nconnect simulator's validation runs (which pair it
// with RunLoad and read the server's window counters).
//
// Thread safety: Start/Stop from one thread; port() and counters() from any.
#ifndef SECMODE_RPC_LOCAL_SERVER_H_
#define SECMODE_RPC_LOCAL_SERVER_H_

#include <memory>

#include "common/status.h"
#include "rpc/nfs.h"
#include "rpc/server_core.h"
#include "rpc/tcp_server.h"

namespace secmode::rpc {

class LocalServer {
 public:
  // `options.keytab` empty = AUTH_SYS only.
  static common::Result<std::unique_ptr<LocalServer>> Start(const ServerOptions& options,
                                                            const TcpServerOptions& tcp = {});
  ~LocalServer() { Stop(); }
  void Stop() {
    if (tcp_) tcp_->Stop();
  }
  uint16_t port() const { return tcp_->port(); }
  ServerCounters counters() const { return core_->counters(); }
  TcpServerStats stats() const { return tcp_->stats(); }
  RpcServerCore& core() { return *core_; }

 private:
  LocalServer() = default;
  MemoryNfsServer nfs_;
  std::unique_ptr<RpcServerCore> core_;
  std::unique_ptr<TcpServer> tcp_;
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_LOCAL_SERVER_H_
