// The COMPOUND4res bytes an NFSv4.1 server sends to rpc/nfs41.h's set-up,
// built with the project's XDR encoder: the scripted server of
// tests/rpc/nfs41_test.cc and the seeds of the fuzz target that feeds
// Nfs41Open with what a hostile server might send (tests/fuzz).
#ifndef SECMODE_TESTS_SUPPORT_NFS41_REPLIES_H_
#define SECMODE_TESTS_SUPPORT_NFS41_REPLIES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "rpc/xdr.h"

namespace secmode::testing::nfs41 {

// RFC 8881 operation numbers used here.
inline constexpr uint32_t kClose = 4, kGetfh = 10, kLookup = 15, kOpen = 18, kPutfh = 22,
                          kPutrootfh = 24, kExchangeId = 42, kCreateSession = 43,
                          kDestroySession = 44, kSequence = 53, kDestroyClientid = 57,
                          kReclaimComplete = 58;

// COMPOUND4res header: status, tag "", `n` results to follow.
inline rpc::XdrEncoder Header(common::Bytes* out, uint32_t status, uint32_t n) {
  out->clear();
  rpc::XdrEncoder e(out);
  e.PutU32(status);
  e.PutString("");
  e.PutU32(n);
  return e;
}

inline common::Bytes SessionId(uint32_t which = 0) {
  return common::PatternBytes(16, 0x5e + which);
}

inline common::Bytes ExchangeIdOk(uint64_t clientid, uint32_t sequenceid, uint32_t protect = 0) {
  common::Bytes b;
  rpc::XdrEncoder e = Header(&b, 0, 1);
  e.PutU32(kExchangeId);
  e.PutU32(0);
  e.PutU64(clientid);
  e.PutU32(sequenceid);
  e.PutU32(0x00010000);  // EXCHGID4_FLAG_USE_NON_PNFS
  e.PutU32(protect);     // state_protect4_r: SP4_NONE unless told otherwise
  e.PutU64(7);           // so_minor_id
  e.PutString("scripted server");
  e.PutString("scope");
  e.PutU32(1);  // one nfs_impl_id4
  e.PutString("example.org");
  e.PutString("scripted 1.0");
  e.PutU64(1700000000);
  e.PutU32(0);
  return b;
}

inline void PutChannel(rpc::XdrEncoder& e, uint32_t requests) {
  for (uint32_t v : {0u, 1u << 20, 1u << 20, 8192u, 8u}) e.PutU32(v);
  e.PutU32(requests);
  e.PutU32(0);
}

// `which`: 0 the set-up's session, 1 the load's.
inline common::Bytes CreateSessionOk(uint32_t slots, uint32_t which = 0) {
  common::Bytes b;
  rpc::XdrEncoder e = Header(&b, 0, 1);
  e.PutU32(kCreateSession);
  e.PutU32(0);
  e.PutFixedOpaque(SessionId(which));
  e.PutU32(1);
  e.PutU32(0);
  PutChannel(e, slots);
  PutChannel(e, 1);
  return b;
}

inline void PutSequenceOk(rpc::XdrEncoder& e, uint32_t sequence) {
  e.PutU32(kSequence);
  e.PutU32(0);
  e.PutFixedOpaque(SessionId());
  for (uint32_t v : {sequence, 0u, 63u, 63u, 0u}) e.PutU32(v);
}

inline common::Bytes ReclaimCompleteOk(uint32_t sequence) {
  common::Bytes b;
  rpc::XdrEncoder e = Header(&b, 0, 2);
  PutSequenceOk(e, sequence);
  e.PutU32(kReclaimComplete);
  e.PutU32(0);
  return b;
}

inline common::Bytes Stateid(uint8_t which) { return common::PatternBytes(16, which); }

// SEQUENCE, PUTROOTFH, `dirs` LOOKUPs, OPEN with `stateid` and delegation
// type `delegation` (0: none), GETFH with `fh`.
inline common::Bytes OpenOk(uint32_t sequence, size_t dirs, const common::Bytes& fh,
                            const common::Bytes& stateid, uint32_t delegation = 0) {
  common::Bytes b;
  rpc::XdrEncoder e = Header(&b, 0, static_cast<uint32_t>(4 + dirs));
  PutSequenceOk(e, sequence);
  e.PutU32(kPutrootfh);
  e.PutU32(0);
  for (size_t i = 0; i < dirs; ++i) {
    e.PutU32(kLookup);
    e.PutU32(0);
  }
  e.PutU32(kOpen);
  e.PutU32(0);
  e.PutFixedOpaque(stateid);
  e.PutBool(true);  // cinfo
  e.PutU64(1);
  e.PutU64(2);
  e.PutU32(0);  // rflags
  e.PutU32(0);  // attrset
  e.PutU32(delegation);
  if (delegation == 3) e.PutU32(0);  // WND4_NOT_WANTED
  e.PutU32(kGetfh);
  e.PutU32(0);
  e.PutOpaque(fh);
  return b;
}

inline common::Bytes CloseOk(uint32_t sequence) {
  common::Bytes b;
  rpc::XdrEncoder e = Header(&b, 0, 3);
  PutSequenceOk(e, sequence);
  e.PutU32(kPutfh);
  e.PutU32(0);
  e.PutU32(kClose);
  e.PutU32(0);
  e.PutFixedOpaque(common::Bytes(16, 0));
  return b;
}

// A COMPOUND whose `failed_at`-th result (1-based) failed with `status`,
// every result before it NFS4_OK without a body (enough for the decoders,
// which stop at the status).
inline common::Bytes Failed(uint32_t status, const std::vector<uint32_t>& ops, size_t failed_at) {
  common::Bytes b;
  rpc::XdrEncoder e = Header(&b, status, static_cast<uint32_t>(failed_at));
  for (size_t i = 0; i < failed_at; ++i) {
    e.PutU32(ops[i]);
    e.PutU32(i + 1 == failed_at ? status : 0);
  }
  return b;
}

inline common::Bytes StatusOnly(uint32_t op, uint32_t status) {
  common::Bytes b;
  rpc::XdrEncoder e = Header(&b, status, 1);
  e.PutU32(op);
  e.PutU32(status);
  return b;
}

inline common::Bytes ReadHandle() { return common::PatternBytes(28, 0x11); }
inline common::Bytes WriteHandle() { return common::PatternBytes(28, 0x22); }

// The replies of a whole good set-up and end, in order, for the default
// Nfs41Options (one directory and a file each) and `granted` slots in the
// load's session.
inline std::vector<common::Bytes> GoodScript(uint32_t granted) {
  return {ExchangeIdOk(0x1234, 1),
          CreateSessionOk(1, 0),
          ReclaimCompleteOk(1),
          OpenOk(2, 1, ReadHandle(), Stateid(1)),
          OpenOk(3, 1, WriteHandle(), Stateid(2)),
          CreateSessionOk(granted, 1),
          CloseOk(4),
          CloseOk(5),
          StatusOnly(kDestroySession, 0),
          StatusOnly(kDestroySession, 0),
          StatusOnly(kDestroyClientid, 0)};
}

}  // namespace secmode::testing::nfs41

#endif  // SECMODE_TESTS_SUPPORT_NFS41_REPLIES_H_
