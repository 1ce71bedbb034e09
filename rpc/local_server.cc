#include "rpc/local_server.h"

namespace secmode::rpc {

common::Result<std::unique_ptr<LocalServer>> LocalServer::Start(const ServerOptions& options,
                                                                const TcpServerOptions& tcp) {
  std::unique_ptr<LocalServer> s(new LocalServer());
  SECMODE_ASSIGN_OR_RETURN(s->core_, RpcServerCore::Create(options, {s->nfs_.Program()}));
  SECMODE_ASSIGN_OR_RETURN(s->tcp_, TcpServer::Start(tcp, s->core_.get()));
  return s;
}

}  // namespace secmode::rpc
