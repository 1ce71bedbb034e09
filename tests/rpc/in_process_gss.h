// Test helper: an RpcServerCore keyed with the shared realm's service keytab
// and a client context established against it in-process (INIT calls handed
// straight to HandleCall, no sockets).
#ifndef SECMODE_TESTS_RPC_IN_PROCESS_GSS_H_
#define SECMODE_TESTS_RPC_IN_PROCESS_GSS_H_

#include <memory>

#include "common/status.h"
#include "rpc/gss_client.h"
#include "rpc/nfs.h"
#include "rpc/server_core.h"
#include "tests/support/shared_realm.h"

namespace secmode::rpc::inproc {

// A client context of the shared realm's user, established by handing each
// INIT call to `core`.
inline common::Result<std::shared_ptr<GssClientContext>> EstablishInProcess(RpcServerCore& core) {
  GssClientConfig cfg;
  cfg.ccache = secmode::testing::SharedRealm()->ccache();
  cfg.prog = kNfsProgram;
  cfg.vers = kNfsVersion;
  return GssClientContext::Establish(
      cfg, [&core](common::ByteView call) -> common::Result<common::Bytes> {
        common::Bytes reply;
        if (core.HandleCall(call, &reply) != Disposition::kReply) {
          return common::Status::Internal("the server dropped a context-creation call");
        }
        return reply;
      });
}

// A server core for `nfs` with the shared realm's service keytab.
inline common::Result<std::unique_ptr<RpcServerCore>> StartGssCore(MemoryNfsServer& nfs,
                                                                   ServerOptions options) {
  options.keytab = secmode::testing::SharedRealm()->service_keytab();
  return RpcServerCore::Create(options, {nfs.Program()});
}

}  // namespace secmode::rpc::inproc

#endif  // SECMODE_TESTS_RPC_IN_PROCESS_GSS_H_
