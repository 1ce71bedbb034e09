// SequenceWindow: the server's RPCSEC_GSS replay window (RFC 2203 section
// 5.3.3.1). It remembers the highest sequence number seen and, in a bitmap,
// which of the `size` numbers at and below it were seen. A number above the
// highest advances the window; one inside it is accepted once (a second time
// it is a duplicate); one below the window is too old. RFC 2203 says both
// are silently discarded; what the server does beyond that (drop, drop the
// connection, discard the context) is its policy (rpc/server_core.h).
//
// Callers check the header MIC before Check(), so forged numbers never move
// the window. Thread safety: none; the owning context serialises calls.
#ifndef SECMODE_RPC_WINDOW_H_
#define SECMODE_RPC_WINDOW_H_

#include <cstdint>
#include <vector>

namespace secmode::rpc {

enum class SeqVerdict { kAccept, kDuplicate, kBelowWindow };

class SequenceWindow {
 public:
  explicit SequenceWindow(uint32_t size = 128);
  SeqVerdict Check(uint32_t seq);
  uint32_t size() const { return size_; }
  uint32_t highest() const { return highest_; }

 private:
  bool Test(uint32_t seq) const { return bits_[(seq % size_) / 64] >> ((seq % size_) % 64) & 1; }
  void Set(uint32_t seq) { bits_[(seq % size_) / 64] |= uint64_t{1} << ((seq % size_) % 64); }
  void Clear(uint32_t seq) { bits_[(seq % size_) / 64] &= ~(uint64_t{1} << ((seq % size_) % 64)); }

  uint32_t size_;
  bool any_ = false;            // nothing seen yet
  uint32_t highest_ = 0;        // highest sequence number accepted
  std::vector<uint64_t> bits_;  // ring: bit (seq % size) says "seen"
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_WINDOW_H_
