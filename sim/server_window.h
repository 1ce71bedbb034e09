// ServerWindow: the simulated server's sequence window for one GSS context,
// a thin adapter over rpc::SequenceWindow (rpc/sequence_window.h), the same
// code the RPC server runs, so the simulator's verdicts are the server's.
//
// It adds what the simulator needs per call the server looks at: the call's
// lag below the highest number seen before the check (the spread the
// simulator reports), and the conversion of the simulator's 64-bit sequence
// counters to RFC 2203's 32-bit seq_num. The conversion never truncates: a
// context's number n reaches the server only after more than n simulator
// events were processed, and the event budget keeps that below RFC 2203's
// MAXSEQ (rpc::kMaxGssSeq, 2^31). sim/simulator.cc gives the argument and
// checks the bound at compile time.
//
// Not thread-safe: one per simulated context.
#ifndef SECMODE_SIM_SERVER_WINDOW_H_
#define SECMODE_SIM_SERVER_WINDOW_H_

#include <cassert>
#include <cstdint>

#include "rpc/sequence_window.h"

namespace secmode::sim {

struct WindowCheck {
  rpc::SeqVerdict verdict;
  uint32_t lag;  // how far below the highest number seen before this call
};

class ServerWindow {
 public:
  // `window` is Scenario::window, which Validate() keeps in 1..kMaxWindow.
  explicit ServerWindow(int64_t window) : w_(static_cast<uint32_t>(window)) {}

  WindowCheck Check(uint64_t seq) {
    assert(seq < rpc::kMaxGssSeq);
    const uint32_t s = static_cast<uint32_t>(seq);
    const uint32_t lag = w_.Lag(s);
    return {w_.Check(s), lag};
  }
  // A new context: a new sequence.
  void Reset() { w_.Reset(); }

 private:
  rpc::SequenceWindow w_;
};

}  // namespace secmode::sim

#endif  // SECMODE_SIM_SERVER_WINDOW_H_
