// The throwaway test bed of an end-to-end RPC run on this machine: the run's
// Kerberos realm (a ModeEnvironment's, started on first use) and the whole
// secmode RPC server in-process on a free loopback port, keyed with that
// realm's service keytab. `secmode load --local`, the e2e section and the
// nconnect validation all start their servers here.
//
// Ownership: the LocalRpcServer owns its server (stopped when destroyed);
// the realm belongs to the ModeEnvironment, which must outlive it.
#ifndef SECMODE_HARNESS_LOCAL_RPC_H_
#define SECMODE_HARNESS_LOCAL_RPC_H_

#include <memory>

#include "common/status.h"
#include "gss/realm.h"
#include "harness/modes.h"
#include "rpc/load.h"
#include "rpc/local_server.h"

namespace secmode::harness {

struct LocalRpcServer {
  gss::Realm* realm = nullptr;  // null: the server speaks AUTH_SYS only
  std::unique_ptr<rpc::LocalServer> server;

  // Points `load` at this server: loopback host, its port, the realm's ccache.
  void Aim(rpc::LoadOptions& load) const;
};

// With `kerberos`, the realm is started (or reused) and its service keytab
// replaces `server.keytab`; without, the server has no keytab (AUTH_SYS).
common::Result<LocalRpcServer> StartLocalRpcServer(ModeEnvironment& env, bool kerberos,
                                                   rpc::ServerOptions server,
                                                   const rpc::TcpServerOptions& tcp = {});

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_LOCAL_RPC_H_
