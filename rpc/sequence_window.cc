#include "rpc/sequence_window.h"

#include <algorithm>

namespace secmode::rpc {

namespace {

// The smallest power of two >= max(size, 64), minus one. Computed in 64 bits:
// a size above 2^31 needs a ring of 2^32 slots.
uint32_t RingMask(uint32_t size) {
  uint64_t ring = 64;
  while (ring < size) ring <<= 1;
  return static_cast<uint32_t>(ring - 1);
}

}  // namespace

SequenceWindow::SequenceWindow(uint32_t size)
    : size_(std::max<uint32_t>(size, 1)),
      mask_(RingMask(size_)),
      bits_((uint64_t{mask_} + 1) / 64, 0) {}

void SequenceWindow::Reset() {
  std::fill(bits_.begin(), bits_.end(), 0);
  highest_ = 0;
  any_ = false;
}

SeqVerdict SequenceWindow::Check(uint32_t seq) {
  if (!any_) {
    any_ = true;
    highest_ = seq;
    Mark(seq);
    return SeqVerdict::kAccept;
  }
  if (seq > highest_) {
    // The window moves up to seq. The ring slots of the numbers between the
    // old and the new highest still hold bits of numbers a ring below them:
    // clear them (at most one ring's worth), then mark seq.
    const uint32_t gap = seq - highest_;
    if (gap > mask_) {
      std::fill(bits_.begin(), bits_.end(), 0);
    } else {
      for (uint32_t s = highest_ + 1; s != seq; ++s) Clear(s);
    }
    highest_ = seq;
    Mark(seq);
    return SeqVerdict::kAccept;
  }
  // Inside: highest - size + 1 .. highest, both inclusive.
  if (highest_ - seq >= size_) return SeqVerdict::kBelowWindow;
  if (Seen(seq)) return SeqVerdict::kDuplicate;
  Mark(seq);
  return SeqVerdict::kAccept;
}

}  // namespace secmode::rpc
