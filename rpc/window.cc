#include "rpc/window.h"

#include <algorithm>

namespace secmode::rpc {

SequenceWindow::SequenceWindow(uint32_t size)
    : size_(std::max<uint32_t>(size, 1)), bits_((size_ + 63) / 64, 0) {}

// RFC 2203 section 5.3.3.1: "the server maintains a window of seq_window
// sequence numbers, starting with the last sequence number seen ..."
SeqVerdict SequenceWindow::Check(uint32_t seq) {
  if (!any_) {
    any_ = true;
    highest_ = seq;
    Set(seq);
    return SeqVerdict::kAccept;
  }
  if (seq > highest_) {
    // Slide: the numbers between the old and new highest become "unseen".
    uint64_t advance = uint64_t{seq} - highest_;
    if (advance >= size_) {
      std::fill(bits_.begin(), bits_.end(), 0);
    } else {
      for (uint32_t s = highest_ + 1; s != seq; ++s) Clear(s);
    }
    highest_ = seq;
    Set(seq);
    return SeqVerdict::kAccept;
  }
  // The window holds highest-size+1 .. highest.
  if (uint64_t{highest_} - seq >= size_) return SeqVerdict::kBelowWindow;
  if (Test(seq)) return SeqVerdict::kDuplicate;
  Set(seq);
  return SeqVerdict::kAccept;
}

}  // namespace secmode::rpc
