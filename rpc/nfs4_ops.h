// NFSv4 operations (RFC 7530 section 16 for 4.0, RFC 8881 section 18 for
// 4.1, RFC 7862 section 15 and RFC 8276 for 4.2): their numbers and names,
// one row per operation in kNfs4Ops, which every user of an operation number
// reads; and a COMPOUND's arguments (COMPOUND4args: tag, minorversion,
// argarray) read only far enough to name its operations in order, as a
// reader of a capture needs.
//
// ReadCompoundOps reads each operation's number and passes over its
// arguments by their XDR layout. An operation whose arguments it does not
// lay out (the row has no skip: their layout is long or rare, such as
// LAYOUTGET or SET_SSV) is still named, and is the last one read; so is one
// whose arguments end beyond the bytes given (a capture's snap length, or a
// WRITE's data). What follows it is counted, not named. The first operation,
// when it is SEQUENCE (RFC 8881 18.46), also gives its session, slot and
// sequence id.
//
// Memory: at most kMaxNamedOps operation numbers per COMPOUND, whatever its
// argarray length says. Thread safety: the table is constant; the functions
// keep no state.
#ifndef SECMODE_RPC_NFS4_OPS_H_
#define SECMODE_RPC_NFS4_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/status.h"
#include "rpc/xdr.h"

namespace secmode::rpc {

// The operation numbers secmode's own client and server use.
inline constexpr uint32_t kOpClose = 4, kOpGetattr = 9, kOpGetfh = 10, kOpLookup = 15, kOpOpen = 18,
                          kOpPutfh = 22, kOpPutrootfh = 24, kOpRead = 25, kOpWrite = 38,
                          kOpExchangeId = 42, kOpCreateSession = 43, kOpDestroySession = 44,
                          kOpSequence = 53, kOpDestroyClientid = 57, kOpReclaimComplete = 58,
                          kOpIllegal = 10044;
inline constexpr size_t kNfs4SessionIdSize = 16;  // NFS4_SESSIONID_SIZE
inline constexpr size_t kNfs4FhSize = 128;        // NFS4_FHSIZE
inline constexpr size_t kNfs4OpaqueLimit = 1024;  // NFS4_OPAQUE_LIMIT

struct Nfs4Op {
  uint32_t opcode;
  const char* name;
  uint32_t minor_version;  // the first minor version that has it
  // Passes over the operation's arguments; null where they are not laid out.
  common::Status (*skip)(XdrDecoder& d);
};

extern const Nfs4Op kNfs4Ops[];
extern const size_t kNfs4OpCount;

// The row of `opcode`, or null for a number no minor version defines.
const Nfs4Op* FindNfs4Op(uint32_t opcode);
// Its name, or "OP<number>" for one no minor version defines.
std::string Nfs4OpName(uint32_t opcode);

struct CompoundOps {
  static constexpr size_t kMaxNamedOps = 64;
  uint32_t minor_version = 0;
  uint32_t stated = 0;            // argarray's length as the call states it
  std::vector<uint32_t> opcodes;  // the operations read, in order
  // Why the rest were not read (empty when all `stated` were): the bytes
  // ended, an operation's arguments are not laid out, or kMaxNamedOps.
  std::string stopped;
  // The first operation was SEQUENCE and its arguments were read.
  bool has_sequence = false;
  common::Bytes session_id;  // kNfs4SessionIdSize bytes
  uint32_t sequence_id = 0, slot_id = 0, highest_slot_id = 0;
};

// Reads COMPOUND4args from `args` (the call's body in clear) into `*out`,
// emptied first (its buffers kept for the next call). Fails
// (kCorrupt, naming the field and offset) only when not even the tag,
// minorversion and argarray length can be read; otherwise reads what it can
// and says in `stopped` where it stopped.
common::Status ReadCompoundOps(common::ByteView args, CompoundOps* out);

// "SEQUENCE PUTFH READ", with " +N" when N stated operations were not read.
std::string CompoundOpNames(const CompoundOps& ops);

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_NFS4_OPS_H_
