#include "sim/seq_window.h"

#include <algorithm>

namespace secmode::sim {

SeqWindow::SeqWindow(int64_t window) : window_(window < 1 ? 1 : static_cast<uint64_t>(window)) {
  uint64_t ring = 64;
  while (ring < window_) ring <<= 1;
  mask_ = ring - 1;
  bits_.assign(ring / 64, 0);
}

void SeqWindow::Reset() {
  std::fill(bits_.begin(), bits_.end(), 0);
  highest_ = 0;
  any_ = false;
}

SeqWindow::Verdict SeqWindow::Check(uint64_t seq) {
  if (!any_) {
    any_ = true;
    highest_ = seq;
    Mark(seq);
    return Verdict::kAccept;
  }
  if (seq > highest_) {
    // Slide: the numbers between the old and new highest become "not seen".
    // Ring positions are reused, so clear them (at most one ring's worth).
    const uint64_t gap = seq - highest_;
    if (gap > mask_) {
      std::fill(bits_.begin(), bits_.end(), 0);
    } else {
      for (uint64_t s = highest_ + 1; s <= seq; ++s) Clear(s);
    }
    highest_ = seq;
    Mark(seq);
    return Verdict::kAccept;
  }
  // RFC 2203 5.3.3.1: below the window -> silently discard.
  if (highest_ - seq >= window_) return Verdict::kBelowWindow;
  if (Seen(seq)) return Verdict::kReplay;
  Mark(seq);
  return Verdict::kAccept;
}

}  // namespace secmode::sim
