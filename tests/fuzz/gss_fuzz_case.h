// The input language of rpc_gss_fuzzer (rpc_gss_fuzzer.cc), shared with the
// corpus generator (fuzz_corpus_gen.cc) so seeds are written by the same
// code that reads them. Every byte string is a valid case (FuzzReader).
//
//   [0] op (mod kOpCount)   [1] bit 0: the MIT fixture (else native)
//   [2] service   [3] NFS procedure   [4..7] base seq_num (big-endian)
//   [8] number of calls (mod 9), then per call:
//         i16 seq delta, u8 (bit 7: mutations anywhere, not only in the
//         body; bits 0-2: count mod 5), count x (u16 offset, u8 xor)
//   then u8 mutation count (mod 9) and the mutations for kInitToken/kBody,
//   u16 bytes cut off the end, and the rest: the payload.
#ifndef SECMODE_TESTS_FUZZ_GSS_FUZZ_CASE_H_
#define SECMODE_TESTS_FUZZ_GSS_FUZZ_CASE_H_

#include <cstdint>
#include <vector>

#include "common/bytes.h"
#include "tests/fuzz/fuzz_io.h"

namespace secmode::fuzz {

enum class GssOp : uint8_t {
  kRawRecord = 0,     // payload: a call record, to the established fixture's server
  kInitToken = 1,     // a genuine AP-REQ from a new initiator context, mutated, in an INIT call
  kInitRaw = 2,       // payload: the INIT token
  kContinueInit = 3,  // CONTINUE_INIT; payload: token; the handle is the fixture's or
                      // the first 8 payload bytes (service byte odd)
  kData = 4,          // DATA calls on the established context (the window, open, run, seal)
  kBody = 5,          // OpenGssBody / SealGssBody and SealReply directly on the context
  kDestroy = 6,       // DESTROY the established context (made again on the next input)
};
inline constexpr uint8_t kOpCount = 7;

struct Mutation {
  uint16_t offset = 0;  // taken modulo the target's size
  uint8_t value = 0;    // xored in
};

struct DataCall {
  int16_t seq_delta = 0;  // seq_num = base_seq + seq_delta (mod 2^32)
  bool anywhere = false;  // mutations over the whole record (else the body only)
  std::vector<Mutation> mutations;
};

struct GssCase {
  GssOp op = GssOp::kRawRecord;
  bool mit = false;
  uint8_t service = 1;  // RFC 2203 1..3; anything else goes out as is
  uint8_t proc = 1;     // NFS: 0 NULL, 1 COMPOUND, others PROC_UNAVAIL
  uint32_t base_seq = 1;
  std::vector<DataCall> calls;
  std::vector<Mutation> mutations;
  uint16_t cut = 0;
  common::Bytes payload;
};

inline GssCase DecodeGssCase(common::ByteView in) {
  FuzzReader r(in);
  GssCase c;
  c.op = static_cast<GssOp>(r.U8() % kOpCount);
  c.mit = (r.U8() & 1) != 0;
  c.service = r.U8();
  c.proc = r.U8();
  c.base_seq = r.U32();
  const int calls = r.U8() % 9;
  for (int i = 0; i < calls; ++i) {
    DataCall d;
    d.seq_delta = static_cast<int16_t>(r.U16());
    const uint8_t m = r.U8();
    d.anywhere = (m & 0x80) != 0;
    for (int k = 0; k < (m & 7) % 5; ++k) d.mutations.push_back({r.U16(), r.U8()});
    c.calls.push_back(std::move(d));
  }
  const int muts = r.U8() % 9;
  for (int k = 0; k < muts; ++k) c.mutations.push_back({r.U16(), r.U8()});
  c.cut = r.U16();
  common::ByteView rest = r.Rest();
  c.payload.assign(rest.begin(), rest.end());
  return c;
}

inline common::Bytes EncodeGssCase(const GssCase& c) {
  FuzzWriter w;
  w.U8(static_cast<uint8_t>(c.op)).U8(c.mit ? 1 : 0).U8(c.service).U8(c.proc).U32(c.base_seq);
  w.U8(static_cast<uint8_t>(c.calls.size()));
  for (const DataCall& d : c.calls) {
    w.U16(static_cast<uint16_t>(d.seq_delta));
    w.U8(static_cast<uint8_t>((d.anywhere ? 0x80 : 0) | d.mutations.size()));
    for (const Mutation& m : d.mutations) w.U16(m.offset).U8(m.value);
  }
  w.U8(static_cast<uint8_t>(c.mutations.size()));
  for (const Mutation& m : c.mutations) w.U16(m.offset).U8(m.value);
  w.U16(c.cut).Raw(c.payload);
  return w.bytes();
}

// Applies mutations to bytes [from, end) of *b, then cuts `cut` bytes (at
// most all of them) off its end.
inline void Mutate(const std::vector<Mutation>& mutations, uint16_t cut, size_t from,
                   common::Bytes* b) {
  if (b->size() > from) {
    const size_t span = b->size() - from;
    for (const Mutation& m : mutations) (*b)[from + m.offset % span] ^= m.value;
  }
  b->resize(b->size() - std::min<size_t>(cut, b->size()));
}

}  // namespace secmode::fuzz

#endif  // SECMODE_TESTS_FUZZ_GSS_FUZZ_CASE_H_
