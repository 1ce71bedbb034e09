#include "harness/local_rpc.h"

namespace secmode::harness {

void LocalRpcServer::Aim(rpc::LoadOptions& load) const {
  load.host = "127.0.0.1";
  load.port = server->port();
  if (realm != nullptr) load.ccache = realm->ccache();
}

common::Result<LocalRpcServer> StartLocalRpcServer(ModeEnvironment& env, bool kerberos,
                                                   rpc::ServerOptions server,
                                                   const rpc::TcpServerOptions& tcp) {
  LocalRpcServer out;
  server.keytab.clear();
  if (kerberos) {
    SECMODE_ASSIGN_OR_RETURN(out.realm, env.GetRealm());
    server.keytab = out.realm->service_keytab();
  }
  SECMODE_ASSIGN_OR_RETURN(out.server, rpc::LocalServer::Start(server, tcp));
  return out;
}

}  // namespace secmode::harness
