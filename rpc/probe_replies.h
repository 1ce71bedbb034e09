// ProbeReplies: the reply side of one of `secmode probe`'s connections
// (window_probe.h), bytes in and replies out, without a socket (the probe
// reads its socket into it; the fuzz target feeds it bytes).
//
// Records are reassembled from the stream (rpc/record.h) up to
// kProbeMaxRecord bytes each: a NULL reply or an INIT reply's GSS token is
// far smaller, so a larger record breaks the stream (an error naming its
// size) instead of being buffered. Each reply is matched by its xid to a
// call sent on this connection (Sent):
//   - the reply to the call waited for is handed out (Next);
//   - a reply to another call sent and not yet answered (a late answer to
//     an earlier call) is kept for it, one per call (Take);
//   - any other reply (to no call sent, to one already answered, a second
//     one, a record too short to hold an xid) is dropped and counted as
//     stray.
// The calls remembered are the last kProbeMaxPending sent (the oldest is
// forgotten beyond that, with its kept reply, which then counts as stray),
// so a connection keeps at most kProbeMaxPending replies of at most
// kProbeMaxRecord bytes each, whatever a server sends.
//
// Thread safety: one thread at a time.
#ifndef SECMODE_RPC_PROBE_REPLIES_H_
#define SECMODE_RPC_PROBE_REPLIES_H_

#include <cstddef>
#include <cstdint>
#include <deque>

#include "common/bytes.h"
#include "common/status.h"
#include "rpc/record.h"

namespace secmode::rpc {

// The largest reply record the probe reads.
inline constexpr size_t kProbeMaxRecord = 64u << 10;
// Calls remembered per connection (a probe test sends at most five on one).
inline constexpr size_t kProbeMaxPending = 8;

class ProbeReplies {
 public:
  // Forgets the stream, the calls and the replies kept (a new connection);
  // the stray counts go on.
  void Reset();
  // A call with `xid` was sent.
  void Sent(uint32_t xid);

  // Space to read at least `min` more stream bytes into; then Commit(n).
  common::MutableByteView WriteSpace(size_t min) { return reader_.WriteSpace(min); }
  void Commit(size_t n) { reader_.Commit(n); }
  void Feed(common::ByteView data) { reader_.Feed(data); }

  // Sets *record to the reply to `xid` and returns true (one kept before,
  // or the next one in the stream), or returns false when the bytes so far
  // hold none; every other complete reply in the stream is kept or dropped
  // meanwhile. Errors: the stream broke (a record beyond kProbeMaxRecord);
  // the caller closes the connection.
  common::Result<bool> Next(uint32_t xid, common::Bytes* record);
  // The reply to `xid` that came while another was waited for.
  bool Take(uint32_t xid, common::Bytes* record);

  size_t kept() const;
  size_t kept_bytes() const;
  size_t pending() const { return pending_.size(); }
  uint64_t stray() const { return stray_; }
  uint64_t stray_bytes() const { return stray_bytes_; }

 private:
  struct Pending {
    uint32_t xid = 0;
    bool has_reply = false;
    common::Bytes reply;
  };
  void Drop(size_t bytes) {
    ++stray_;
    stray_bytes_ += bytes;
  }
  RecordReader reader_{kProbeMaxRecord};
  std::deque<Pending> pending_;
  uint64_t stray_ = 0, stray_bytes_ = 0;
};

// The xid of an RPC message (its first four bytes), or nothing when it is
// shorter.
bool MessageXid(common::ByteView message, uint32_t* xid);

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_PROBE_REPLIES_H_
