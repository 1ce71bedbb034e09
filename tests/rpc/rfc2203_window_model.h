// Rfc2203WindowModel: RFC 2203 section 5.3.3.1 written down as plainly as
// the RFC says it (a set of every number seen, no ring, no bit tricks), for
// tests to hold rpc::SequenceWindow and its users against. Slow on purpose.
#ifndef SECMODE_TESTS_RPC_RFC2203_WINDOW_MODEL_H_
#define SECMODE_TESTS_RPC_RFC2203_WINDOW_MODEL_H_

#include <cstdint>
#include <set>

#include "rpc/sequence_window.h"

namespace secmode::rpc {

class Rfc2203WindowModel {
 public:
  explicit Rfc2203WindowModel(uint32_t seq_window) : seq_window_(seq_window) {}

  SeqVerdict Check(uint32_t seq) {
    // "If a sequence number higher than the last number seen is received,
    // the window is moved forward to the new sequence number."
    if (seen_.empty() || seq > last_) {
      last_ = seq;
      seen_.insert(seq);
      return SeqVerdict::kAccept;
    }
    // "If the last sequence number seen is N, the server is prepared to
    // receive requests with sequence numbers in the range N through
    // (N - seq_window + 1), both inclusive."
    if (uint64_t{seq} + seq_window_ - 1 < last_) return SeqVerdict::kBelowWindow;
    if (!seen_.insert(seq).second) return SeqVerdict::kDuplicate;
    return SeqVerdict::kAccept;
  }
  void Reset() { seen_.clear(); }
  // The highest number seen before the next call.
  uint32_t last() const { return last_; }
  bool any() const { return !seen_.empty(); }

 private:
  uint64_t seq_window_;
  std::set<uint32_t> seen_;
  uint32_t last_ = 0;
};

}  // namespace secmode::rpc

#endif  // SECMODE_TESTS_RPC_RFC2203_WINDOW_MODEL_H_
