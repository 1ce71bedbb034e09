// One direction of a captured TCP connection put back in stream order.
//
// A capture is not the stream: segments come retransmitted, overlapping, out
// of order or not at all (the capture dropped them), and a snap length keeps
// only the first bytes of each. TcpDirection hands its sink the stream from
// its first byte to its last, each stretch once and in order, as
// Bytes(data, len): `len` stream bytes, of which the first data.size() were
// captured and the rest were not (cut by the snap length, or lost: then
// `data` is empty). So the sink always knows where it is in the stream, also
// across what it cannot see.
//
// Where the stream starts: after the SYN when the capture has it, else at
// the first segment seen (a capture begun mid-connection). A hole (bytes
// after the next expected one arrived first) is waited for until the other
// direction acknowledges bytes beyond it (Acked: the receiver had them, so
// the capture lost them), until more than `max_buffered` bytes or
// kMaxPending segments wait behind it or the directions sharing a
// PendingBudget hold more than it allows, or until Finish; then it is handed
// on as lost and the bytes behind it follow. Sequence numbers wrap (RFC 9293
// 3.4): positions are kept as 64-bit stream offsets. A SYN's data starts one
// after its sequence number.
//
// Memory: the captured bytes of the segments waiting behind a hole, at most
// `max_buffered` (and kMaxPending segments), and with a budget at most the
// budget's bytes over all the directions that share it. Thread safety: none.
#ifndef SECMODE_TRACE_TCP_STREAM_H_
#define SECMODE_TRACE_TCP_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <map>

#include "common/bytes.h"
#include "trace/capture.h"

namespace secmode::trace {

class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // `len` >= data.size() > 0 or `len` > 0 with `data` empty; `ts_ns` is the
  // time stamp of the segment that carried them (of the segment after a
  // lost stretch).
  virtual void Bytes(int64_t ts_ns, common::ByteView data, uint64_t len) = 0;
};

struct DirectionCounts {
  uint64_t bytes = 0;          // stream bytes handed on
  uint64_t captured = 0;       // of those, captured
  uint64_t lost = 0;           // of those, in no segment of the capture
  uint64_t segments = 0;       // with payload
  uint64_t retransmitted = 0;  // segments wholly before the next expected byte
  uint64_t out_of_order = 0;   // segments that arrived after a hole
  bool syn = false, fin = false, rst = false;
};

// Bytes waiting behind holes in all the directions that share it. Must
// outlive them.
struct PendingBudget {
  size_t used = 0, most;
};

class TcpDirection {
 public:
  static constexpr size_t kMaxPending = 4096;
  // What one waiting segment costs besides its captured bytes (its map
  // node), charged to max_buffered and the budget with them.
  static constexpr size_t kEntryCost = 64;
  explicit TcpDirection(size_t max_buffered = 4u << 20, PendingBudget* budget = nullptr)
      : max_buffered_(max_buffered), budget_(budget) {}
  ~TcpDirection();
  TcpDirection(const TcpDirection&) = delete;
  TcpDirection& operator=(const TcpDirection&) = delete;

  void Add(const TcpSegment& s, StreamSink& sink);
  // The other direction acknowledged everything before `ack`.
  void Acked(uint32_t ack, int64_t ts_ns, StreamSink& sink);
  // The capture ended: holes are lost, what waits behind them follows.
  void Finish(StreamSink& sink);

  const DirectionCounts& counts() const { return counts_; }
  bool started() const { return started_; }
  // The sequence number a SYN of this direction carried (valid when
  // counts().syn).
  uint32_t syn_seq() const { return syn_seq_; }

 private:
  struct Pending {
    int64_t ts_ns = 0;
    uint64_t len = 0;
    common::Bytes data;
  };
  // The stream offset of `seq`, taken as the one nearest the next expected
  // byte (a segment is never 2 GiB away from it).
  int64_t OffsetOf(uint32_t seq) const;
  void Deliver(int64_t ts_ns, common::ByteView data, uint64_t len, StreamSink& sink);
  void LoseUpTo(uint64_t to, int64_t ts_ns, StreamSink& sink);
  void Drain(StreamSink& sink);
  void Hold(size_t bytes, bool add);
  bool OverBudget() const;

  size_t max_buffered_;
  PendingBudget* budget_;
  bool started_ = false;
  uint32_t base_seq_ = 0;  // the sequence number of stream offset 0
  uint32_t syn_seq_ = 0;
  uint64_t next_ = 0;                    // the next stream offset to hand on
  std::map<uint64_t, Pending> pending_;  // by stream offset, all after next_
  size_t pending_bytes_ = 0;
  DirectionCounts counts_;
};

}  // namespace secmode::trace

#endif  // SECMODE_TRACE_TCP_STREAM_H_
