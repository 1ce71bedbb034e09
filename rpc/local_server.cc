#include "rpc/local_server.h"

namespace secmode::rpc {

common::Result<std::unique_ptr<LocalServer>> LocalServer::Start(const ServerOptions& options,
                                                                const TcpServerOptions& tcp) {
  std::unique_ptr<LocalServer> s(new LocalServer());
  SECMODE_ASSIGN_OR_RETURN(s->core_, RpcServerCore::Create(options, {s->nfs_.Program()}));
  // Its clients are this process's, all from 127.0.0.1: a cap per host
  // would only be a lower global one.
  TcpServerOptions t = tcp;
  if (t.max_connections_per_host == 0) t.max_connections_per_host = 1 << 20;
  SECMODE_ASSIGN_OR_RETURN(s->tcp_, TcpServer::Start(t, s->core_.get()));
  return s;
}

}  // namespace secmode::rpc
