// WindowPolicy: what a server does with a call whose sequence number is below
// its RPCSEC_GSS window (RFC 2203 section 5.3.3.1 says: silently discard).
// The three reactions of real servers, one enum for secmode's RPC server
// (rpc/server_core.h, ServerOptions::policy) and the nconnect simulator's
// server (sim/scenario.h, Scenario::reaction). Part of secmode_rpc_window.
#ifndef SECMODE_RPC_WINDOW_POLICY_H_
#define SECMODE_RPC_WINDOW_POLICY_H_

#include <string>

#include "common/status.h"

namespace secmode::rpc {

enum class WindowPolicy {
  kDrop,            // discard, no reply; the client retransmits after its timeout
  kDropDisconnect,  // discard and close the connection (Linux nfsd in practice);
                    // the client reconnects and resends what was on it
  kDiscardContext,  // discard the whole GSS context (NetApp ONTAP, per Azure
                    // NetApp Files); the client creates a new context and
                    // resends everything sent under the old one
};

// "drop", "drop-disconnect", "discard-context": the names the flag
// (--reaction), the JSON and the reports use.
const char* WindowPolicyName(WindowPolicy p);
// The policy of that name; an unknown name is an error naming the flag
// ("reaction: unknown value 'x' (known: ...)").
common::Result<WindowPolicy> ParseWindowPolicy(const std::string& name);

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_WINDOW_POLICY_H_
