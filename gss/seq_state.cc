#include "gss/seq_state.h"

namespace secmode::gss {

SeqState::Verdict SeqState::Check(uint64_t seqnum) {
  if (!do_replay_ && !do_sequence_) return Verdict::kInOrder;
  // Relative numbers make the 64-bit wraparound disappear.
  const uint64_t rel = seqnum - base_;
  if (rel >= next_) {
    const uint64_t offset = rel - next_;
    // Shifting a 64-bit value by 64 or more is undefined in C++; it means
    // every remembered number fell out of the window.
    recvmap_ = offset + 1 >= 64 ? 1 : (recvmap_ << (offset + 1)) | 1;
    next_ = rel + 1;
    return offset > 0 && do_sequence_ ? Verdict::kGap : Verdict::kInOrder;
  }
  const uint64_t offset = next_ - rel;
  if (offset > 64) return do_sequence_ ? Verdict::kUnseq : Verdict::kOld;
  const uint64_t bit = uint64_t{1} << (offset - 1);
  if (do_replay_ && (recvmap_ & bit)) return Verdict::kDuplicate;
  recvmap_ |= bit;
  return do_sequence_ ? Verdict::kUnseq : Verdict::kInOrder;
}

}  // namespace secmode::gss
