// DelayLine: holds batches of bytes for a fixed time, then hands them to a
// writer in the order they came: a one-way network delay emulated in user
// space (the lab's RTT, lab/README.md; this kernel has no netem). secmode's
// server holds each connection's replies in one (TcpServerOptions::
// reply_delay_us), the SMB client each connection's requests for the whole
// round trip (SmbClient::HoldRequests); the NFS load generator's calls have
// their own delay line (LoadOptions::delay_us), which numbers each call as
// it leaves.
//
// Every batch waits exactly `delay` from Push (one delay per line, so the
// queue is in due order); the batches due at one wakeup are written one
// after the other (not copied together: a batch may hold megabytes), and
// their buffers are handed back to Push (as many as were held at once, up
// to max_bytes of capacity), so the line allocates nothing per batch once
// it runs. At most `max_bytes` wait at once: Push blocks while they do
// (back-pressure, as a full TCP window pushes back), so memory is bounded.
// The writer runs on the line's own thread; when it fails, Push returns
// false from then on and what is queued is dropped.
//
// Thread safety: Push from one thread at a time; Stop from the owner.
// Ownership: the line owns its thread; the writer must outlive Stop().
#ifndef SECMODE_COMMON_DELAY_LINE_H_
#define SECMODE_COMMON_DELAY_LINE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "common/bytes.h"

namespace secmode::common {

class DelayLine {
 public:
  // `write` sends one joined batch; false: the peer is gone (the line fails).
  using Writer = std::function<bool(Bytes&)>;
  DelayLine(uint64_t delay_ns, size_t max_bytes, Writer write);
  ~DelayLine() { Stop(); }
  DelayLine(const DelayLine&) = delete;
  DelayLine& operator=(const DelayLine&) = delete;

  // Queues `bytes` (taken; `bytes` is left empty, or with a spent buffer's
  // capacity), due `delay` from now.
  // False once the writer failed or the line stopped (nothing queued).
  bool Push(Bytes& bytes);
  // Wakes the thread, drops what is still queued, joins. Idempotent.
  void Stop();
  // Batches the writer took (a failed write and what was dropped after it
  // do not count).
  uint64_t batches_written() const;
  // Bytes the line holds now: queued, and spare buffers' capacity (at most
  // about 2 x max_bytes), for a caller's memory accounting.
  size_t held_bytes() const;
  // Bytes pushed and not written yet (0: every batch went out).
  size_t queued_bytes() const;

 private:
  struct Item {
    uint64_t due_ns = 0;
    Bytes bytes;
  };
  void Loop();

  const uint64_t delay_ns_;
  const size_t max_bytes_;
  Writer write_;
  mutable std::mutex mu_;
  std::condition_variable cv_;       // items came, or stopping
  std::condition_variable room_cv_;  // bytes left the queue, or failing
  std::deque<Item> q_;
  // Written batches' buffers, for Push to hand back: as many as were held
  // at once, their capacity at most max_bytes in all.
  std::vector<Bytes> spare_;
  size_t spare_capacity_ = 0;
  size_t queued_bytes_ = 0;
  bool stopping_ = false, failed_ = false;
  uint64_t batches_ = 0;
  std::thread thread_;
};

}  // namespace secmode::common

#endif  // SECMODE_COMMON_DELAY_LINE_H_
