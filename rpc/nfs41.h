// Nfs41Open / Nfs41Close: what a real NFSv4.1 server (RFC 8881) needs
// before and after the COMPOUNDs of nfs.h. Open gets a client ID
// (EXCHANGE_ID, 18.35, no state protection) and two sessions (CREATE_SESSION,
// 18.36, no back channel): one of one slot for its own calls, so they never
// touch the load's slots' sequence ids, and the load's with the slots asked
// (the server may grant fewer; the load must then use no more). On the
// first it says RECLAIM_COMPLETE (18.51) and opens the read file (it must
// exist) and the write file (created if it does not): PUTROOTFH, LOOKUP per
// directory, OPEN (18.16, no delegation wanted), GETFH. The NfsTarget it
// returns names the load's session, those handles and the open stateids.
// Close closes both files (CLOSE, 18.2) and ends both sessions
// (DESTROY_SESSION, 18.37) and the client ID (DESTROY_CLIENTID, 18.50).
// Each step's error names the operation and the server's NFS4ERR.
//
// Both go through `call`: one COMPOUND (program 100003 version 4 procedure
// 1) with the caller's security on the caller's connection, returning the
// results once the reply is checked and unprotected. Connections used later
// for the session's calls are bound to it by their first SEQUENCE (SP4_NONE,
// RFC 8881 2.10.5.1).
//
// Thread safety: none needed; one caller, one connection.
#ifndef SECMODE_RPC_NFS41_H_
#define SECMODE_RPC_NFS41_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/status.h"
#include "rpc/nfs.h"

namespace secmode::rpc {

struct Nfs41Options {
  // Path components from the server's root (the pseudo-fs root for
  // NFSv4.1 servers such as Ganesha).
  std::vector<std::string> read_path = {"export", "read"};
  std::vector<std::string> write_path = {"export", "write"};
  uint32_t slots = 64;  // fore-channel slots asked for the load's session
  uint32_t max_request = (1u << 20) + (64u << 10);
  uint32_t max_response = (1u << 20) + (64u << 10);
  // The read file holds nfs.h's ReadPattern (secmode wrote it): READ data is
  // compared byte for byte; otherwise only its length is.
  bool read_file_has_pattern = false;
  std::string owner;  // client owner; "" = secmode, this host, pid and time
};

struct Nfs41Session {
  NfsTarget target;
  uint64_t clientid = 0;
  uint32_t slots = 0;              // the load session's slots granted: 0 .. slots-1
  common::Bytes setup_session_id;  // the set-up's own session (one slot)
  uint32_t setup_sequence = 0;     // and the last sequence id used on it
  std::string owner;               // the client owner, also the open owner
  std::string server;              // the server's implementation id, if it gave one
};

// One COMPOUND: its arguments in, its results (COMPOUND4res) out.
using Nfs41Call = std::function<common::Result<common::Bytes>(common::ByteView args)>;

common::Result<Nfs41Session> Nfs41Open(const Nfs41Options& options, const Nfs41Call& call);
common::Status Nfs41Close(Nfs41Session& session, const Nfs41Call& call);

// "a/b/c" -> {"a", "b", "c"}; empty components are refused.
common::Result<std::vector<std::string>> SplitNfsPath(const std::string& path);

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_NFS41_H_
