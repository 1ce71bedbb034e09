// SeqState: receive-side replay and sequence detection for RFC 4121 tokens,
// with the semantics of MIT's g_seqstate (lib/gssapi/generic, whose name it
// takes; not RPCSEC_GSS's sequence window, rpc/sequence_window.h), so the native
// engine reports what the mit engine would for the same arrival order:
//   expected next number            -> kInOrder
//   ahead of the expected number    -> kGap      (accepted; sequence flag)
//   behind, not seen, within 64     -> kUnseq    (accepted; sequence flag)
//   seen before, within 64          -> kDuplicate (replay flag)
//   more than 64 behind             -> kUnseq with the sequence flag,
//                                      kOld without it (MIT's choice)
// Only a token whose checksum verified may be passed to Check().
// Thread safety: one thread at a time.
#ifndef SECMODE_GSS_SEQ_STATE_H_
#define SECMODE_GSS_SEQ_STATE_H_

#include <cstdint>

namespace secmode::gss {

class SeqState {
 public:
  enum class Verdict { kInOrder, kGap, kUnseq, kDuplicate, kOld };

  // `base` is the peer's first sequence number (lucid recv_seq).
  SeqState(uint64_t base, bool do_replay, bool do_sequence)
      : base_(base), do_replay_(do_replay), do_sequence_(do_sequence) {}
  Verdict Check(uint64_t seqnum);

 private:
  uint64_t base_;
  bool do_replay_, do_sequence_;
  uint64_t next_ = 0;     // expected next number, relative to base
  uint64_t recvmap_ = 0;  // bit i-1 set: next-i was received
};

}  // namespace secmode::gss

#endif  // SECMODE_GSS_SEQ_STATE_H_
