// SequenceWindow: the server side of the RPCSEC_GSS sequence window, RFC
// 2203 section 5.3.3.1, the one implementation used by the RPC server
// (rpc/server_core.h, one per GSS context) and by the nconnect simulator
// (sim/simulator.h), so the simulator models exactly the check the server
// makes.
//
// The rule: "If the last sequence number seen is N, the server is prepared
// to receive requests with sequence numbers in the range N through
// (N - seq_window + 1), both inclusive." A number above N moves the window
// up; a number in the range is accepted once and remembered; a number below
// the range, or one already seen, "is silently discarded". Check() says
// which:
//   kAccept      - above the highest number seen (the window moves up to
//                  it), or inside the window and not seen before; the call
//                  may be processed. The first number after construction or
//                  Reset() is always accepted and becomes the highest.
//   kDuplicate   - inside the window and seen before: a replay (or a
//                  retransmission that kept its number, which RFC 2203
//                  forbids).
//   kBelowWindow - seq <= highest - size: too old to tell whether it was
//                  seen. With nconnect this is what a call delayed on a slow
//                  connection runs into.
// Neither rejection changes the window.
//
// Sequence numbers are RFC 2203's unsigned 32-bit seq_num. The window does
// not wrap: a client never sends MAXSEQ (kMaxGssSeq) or above, it creates a
// new context instead, and the server answers such a number with
// RPCSEC_GSS_CTXPROBLEM before it reaches the window.
//
// The caller verifies the call header's MIC (the RPCSEC_GSS verifier) before
// Check(), so only numbers the context's peer really sent move the window;
// a forged number could otherwise push it up and make every genuine call
// "below the window". What the server does beyond the verdict (drop, drop
// the connection, discard the context) is its policy (rpc/server_core.h).
//
// Memory: one bit per ring slot; the ring is the smallest power of two
// holding max(size, 64) slots, so a slot is a mask away from its number (no
// division per check). Thread safety: none; the owning context serialises
// its calls.
#ifndef SECMODE_RPC_SEQUENCE_WINDOW_H_
#define SECMODE_RPC_SEQUENCE_WINDOW_H_

#include <cstdint>
#include <vector>

namespace secmode::rpc {

// RFC 2203 5.3.3.1 MAXSEQ: the first sequence number a context may not use.
inline constexpr uint32_t kMaxGssSeq = 0x80000000u;

enum class SeqVerdict { kAccept, kDuplicate, kBelowWindow };

class SequenceWindow {
 public:
  // `size` is the RFC's seq_window, the number of sequence numbers the
  // window spans; 0 is taken as 1.
  explicit SequenceWindow(uint32_t size = 128);

  // The verdict on `seq`; an accepted number is remembered.
  SeqVerdict Check(uint32_t seq);
  // Forgets everything: a new context starts a new sequence.
  void Reset();
  // How far `seq` is below the highest number seen; 0 if it is at or above
  // it, or if nothing was seen yet.
  uint32_t Lag(uint32_t seq) const { return any_ && seq < highest_ ? highest_ - seq : 0; }

  uint32_t size() const { return size_; }
  // The highest number accepted (0 if nothing was seen yet).
  uint32_t highest() const { return highest_; }

 private:
  // The ring holds a whole number of 64-bit words, so the bit within a word
  // is the low six bits of the number itself.
  bool Seen(uint32_t seq) const { return (bits_[(seq & mask_) >> 6] >> (seq & 63)) & 1; }
  void Mark(uint32_t seq) { bits_[(seq & mask_) >> 6] |= uint64_t{1} << (seq & 63); }
  void Clear(uint32_t seq) { bits_[(seq & mask_) >> 6] &= ~(uint64_t{1} << (seq & 63)); }

  uint32_t size_;
  uint32_t mask_;               // ring slots - 1
  std::vector<uint64_t> bits_;  // bit (seq & mask_): seq was seen
  uint32_t highest_ = 0;        // highest number accepted
  bool any_ = false;            // whether any number was accepted
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_SEQUENCE_WINDOW_H_
