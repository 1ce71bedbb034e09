// NFSv4.1-shaped payloads (RFC 8881 section 16/18): COMPOUND { SEQUENCE,
// PUTFH, READ | WRITE | GETATTR } arguments and results with the real XDR
// layout and sizes, so per-operation costs are for messages of the real
// shape: a GETATTR call is ~150 bytes and its reply ~200, READ/WRITE carry
// 4 KiB .. 1 MiB of data.
//
// MemoryNfsServer executes them against memory: READ returns bytes of a
// deterministic pattern file (the client checks them), WRITE stores into a
// second file and answers with a 64-bit FNV-1a of the data it received in
// the write verifier, which the client compares with its own: an end-to-end
// integrity check of every WRITE. A COMPOUND whose results would grow
// beyond `max_reply` bytes stops at the operation that would cross it with
// NFS4ERR_REP_TOO_BIG (RFC 8881 section 15.1.3, what a session's
// ca_maxresponsesize gives), so one small call (64 READs of 1 MiB) can never
// make the server build a reply of 64 MiB.
//
// Thread safety: MemoryNfsServer::Execute may run on many threads; writes
// into the file are serialised by a mutex (the digest is taken outside it).
#ifndef SECMODE_RPC_NFS_H_
#define SECMODE_RPC_NFS_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "common/bytes.h"
#include "common/status.h"
#include "rpc/server_core.h"

namespace secmode::rpc {

inline constexpr uint32_t kNfsProgram = 100003;
inline constexpr uint32_t kNfsVersion = 4;
inline constexpr uint32_t kNfsProcNull = 0;
inline constexpr uint32_t kNfsProcCompound = 1;
inline constexpr size_t kNfsFileSize = 1u << 20;  // each in-memory file
inline constexpr size_t kNfsMaxIo = 1u << 20;
// COMPOUND results of one call at most: one 1 MiB READ and its headers.
inline constexpr size_t kDefaultMaxReply = kNfsMaxIo + (4u << 10);
// RFC 8881 section 15.1: the status of an operation that would make the
// reply larger than the server allows.
inline constexpr uint32_t kNfs4ErrRepTooBig = 10066;

enum class NfsOp { kGetattr, kRead, kWrite };
const char* NfsOpName(NfsOp op);
common::Result<NfsOp> ParseNfsOp(const std::string& name);

// Where the COMPOUNDs go: the session, file handles and stateid they name
// and how a WRITE is checked. OwnServerTarget() is secmode's own server
// (MemoryNfsServer), which needs no set-up; a real NFSv4.1 server's comes
// from rpc/nfs41.h (a session created, the files looked up).
struct NfsTarget {
  common::Bytes session_id;         // NFS4_SESSIONID_SIZE (16) bytes
  common::Bytes fh_read, fh_write;  // the files READ and WRITE (GETATTR: fh_read)
  common::Bytes stateid_read, stateid_write;  // 16 bytes each: seqid and other
  uint32_t highest_slot = 63;       // SEQUENCE's sa_highest_slotid
  // The WRITE verifier is the digest of the data (secmode's server only; a
  // real server's is its boot verifier, and only the count is checked).
  bool write_digest = true;
  // READ data is nfs.h's ReadPattern and is compared byte for byte
  // (otherwise only its length is).
  bool read_pattern = true;
};
const NfsTarget& OwnServerTarget();
// "NFS4ERR_BADSESSION (10052)"; the number alone for one not in the table.
std::string Nfs4StatusName(uint32_t status);

struct NfsRequest {
  const NfsTarget* target = nullptr;  // nullptr: OwnServerTarget()
  NfsOp op = NfsOp::kGetattr;
  uint64_t offset = 0;
  uint32_t count = 0;     // READ/WRITE bytes
  uint32_t slot = 0;      // SEQUENCE slot id
  uint32_t sequence = 1;  // SEQUENCE sequenceid
};

// Payload bytes the client writes for a request (deterministic per offset).
common::ByteView WritePattern(uint64_t offset, uint32_t count);
// Contents of the read-only file at [offset, offset+count).
common::ByteView ReadPattern(uint64_t offset, uint32_t count);
// The WRITE digest: FNV-1a-style over 64-bit words (not cryptographic; it
// catches corruption, authentication is RPCSEC_GSS's job).
uint64_t Fnv1a64(common::ByteView data);

// COMPOUND4args for the request (RFC 8881 section 16.2).
void EncodeCompoundArgs(const NfsRequest& r, common::Bytes* out);
// Checks COMPOUND4res: NFS4_OK, the op sequence, READ data equal to the
// pattern, WRITE count and verifier = FNV-1a of the data sent.
common::Status CheckCompoundResults(const NfsRequest& r, common::ByteView results);

class MemoryNfsServer {
 public:
  // `max_reply`: the most bytes of COMPOUND results one call may return.
  explicit MemoryNfsServer(size_t max_reply = kDefaultMaxReply);
  // The NFS program for RpcServerCore: NULL and COMPOUND.
  ProgramSpec Program();
  uint32_t Execute(uint32_t proc, common::ByteView args, common::Bytes* results);
  uint64_t writes_checked() const { return writes_; }
  size_t max_reply() const { return max_reply_; }

 private:
  const size_t max_reply_;
  std::mutex write_mu_;
  common::Bytes write_file_;
  std::atomic<uint64_t> writes_{0};
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_NFS_H_
