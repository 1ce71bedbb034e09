// Shared by the fuzz targets and the corpus generator (fuzz_corpus_gen.cc):
// reading and writing structured fuzz inputs, and the reply-size bound the
// RPC targets check.
//
// FuzzReader is total: every byte string decodes, a read past the end gives
// zeros (so the fuzzer never wastes inputs on "too short"). FuzzWriter is
// its inverse, for writing seeds.
#ifndef SECMODE_TESTS_FUZZ_FUZZ_IO_H_
#define SECMODE_TESTS_FUZZ_FUZZ_IO_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "common/bytes.h"
#include "rpc/nfs.h"

namespace secmode::fuzz {

class FuzzReader {
 public:
  explicit FuzzReader(common::ByteView in) : in_(in) {}
  uint8_t U8() { return at_ < in_.size() ? in_[at_++] : 0; }
  uint16_t U16() { return static_cast<uint16_t>(U8() << 8 | U8()); }
  uint32_t U32() { return uint32_t{U16()} << 16 | U16(); }
  bool Done() const { return at_ >= in_.size(); }
  // The next `n` bytes (fewer at the end).
  common::ByteView Bytes(size_t n) {
    const size_t from = std::min(at_, in_.size());
    const size_t take = std::min(n, in_.size() - from);
    at_ = from + take;
    return in_.subspan(from, take);
  }
  // Everything not read yet.
  common::ByteView Rest() {
    common::ByteView r = in_.subspan(std::min(at_, in_.size()));
    at_ = in_.size();
    return r;
  }

 private:
  common::ByteView in_;
  size_t at_ = 0;
};

class FuzzWriter {
 public:
  FuzzWriter& U8(uint8_t v) {
    out_.push_back(v);
    return *this;
  }
  FuzzWriter& U16(uint16_t v) {
    return U8(static_cast<uint8_t>(v >> 8)).U8(static_cast<uint8_t>(v));
  }
  FuzzWriter& U32(uint32_t v) {
    return U16(static_cast<uint16_t>(v >> 16)).U16(static_cast<uint16_t>(v));
  }
  FuzzWriter& Raw(common::ByteView v) {
    out_.insert(out_.end(), v.begin(), v.end());
    return *this;
  }
  const common::Bytes& bytes() const { return out_; }

 private:
  common::Bytes out_;
};

// The reply-size bound of the RPC targets: a reply is never larger than
//   kReplySlack + call bytes + 64 * kNfsOpResultMax
//   + min(min(64, call bytes / 32) * (kNfsMaxIo + 16), kDefaultMaxReply).
// RPC and RPCSEC_GSS add at most kReplySlack to what the program returns
// (header, verifier MIC, the integrity checksum or the wrap token's header,
// confounder, checksum and padding); the in-memory NFS program returns at
// most its tag (from the call) plus kNfsOpResultMax per operation (at most 64
// operations), and a READ, whose arguments take 32 bytes of the call, up to
// kNfsMaxIo of data, and never more than the server's cap on one COMPOUND's
// results (rpc::kDefaultMaxReply: past it the COMPOUND ends with
// NFS4ERR_REP_TOO_BIG). So the only amplification is the data READs ask for,
// up to that cap;
// anything more (an echo of an unchecked length, a buffer sealed twice) fails
// the target.
inline constexpr size_t kReplySlack = 1024;
inline constexpr size_t kNfsOpResultMax = 256;
inline constexpr size_t MaxReplyBytes(size_t call_bytes) {
  const size_t reads = std::min<size_t>(64, call_bytes / 32);
  return kReplySlack + call_bytes + 64 * kNfsOpResultMax +
         std::min<size_t>(reads * (rpc::kNfsMaxIo + 16), rpc::kDefaultMaxReply);
}

// The same for the RPC and GSS layers alone: a sealed reply is at most
// kReplySlack larger than the results the program produced.
inline constexpr size_t MaxSealedReplyBytes(size_t results_bytes) {
  return results_bytes + kReplySlack;
}

// Aborts (a crash libFuzzer reports with the input) when `ok` is false.
inline void Require(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace secmode::fuzz

#endif  // SECMODE_TESTS_FUZZ_FUZZ_IO_H_
