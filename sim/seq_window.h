// SeqWindow: the server side of the RPCSEC_GSS sequence window, RFC 2203
// section 5.3.3.1.
//
// The server keeps the highest sequence number seen and which of the
// `window` numbers at and below it were seen. A number above the highest
// moves the window up and is accepted; one inside the window is accepted
// once (a second time is a replay); one below the window ("seq_num <=
// highest - window") is silently discarded. The check happens when the
// server first looks at the call, before the body is processed.
//
// Memory is one bit per window slot (window <= kMaxWindow). Not
// thread-safe: one per GSS context on the server.
#ifndef SECMODE_SIM_SEQ_WINDOW_H_
#define SECMODE_SIM_SEQ_WINDOW_H_

#include <cstdint>
#include <vector>

namespace secmode::sim {

class SeqWindow {
 public:
  enum class Verdict { kAccept, kBelowWindow, kReplay };

  explicit SeqWindow(int64_t window);

  Verdict Check(uint64_t seq);
  // Forgets everything (a new context starts a new sequence).
  void Reset();
  // How far below the highest number seen `seq` is (0 if at or above).
  uint64_t Lag(uint64_t seq) const { return any_ && seq < highest_ ? highest_ - seq : 0; }

 private:
  bool Seen(uint64_t seq) const { return (bits_[(seq & mask_) >> 6] >> (seq & 63)) & 1; }
  void Mark(uint64_t seq) { bits_[(seq & mask_) >> 6] |= uint64_t{1} << (seq & 63); }
  void Clear(uint64_t seq) { bits_[(seq & mask_) >> 6] &= ~(uint64_t{1} << (seq & 63)); }

  uint64_t window_;
  uint64_t mask_;  // ring size - 1; ring size is a power of two >= window, >= 64
  std::vector<uint64_t> bits_;
  uint64_t highest_ = 0;
  bool any_ = false;
};

}  // namespace secmode::sim

#endif  // SECMODE_SIM_SEQ_WINDOW_H_
