#include "trace/tcp_stream.h"

#include <algorithm>

namespace secmode::trace {

using common::ByteView;

int64_t TcpDirection::OffsetOf(uint32_t seq) const {
  const uint32_t next_seq = base_seq_ + static_cast<uint32_t>(next_);
  const auto delta = static_cast<int32_t>(seq - next_seq);
  return static_cast<int64_t>(next_) + delta;
}

void TcpDirection::Deliver(int64_t ts_ns, ByteView data, uint64_t len, StreamSink& sink) {
  if (len == 0) return;
  counts_.bytes += len;
  counts_.captured += data.size();
  next_ += len;
  sink.Bytes(ts_ns, data, len);
}

void TcpDirection::LoseUpTo(uint64_t to, int64_t ts_ns, StreamSink& sink) {
  if (to <= next_) return;
  counts_.lost += to - next_;
  Deliver(ts_ns, {}, to - next_, sink);
}

TcpDirection::~TcpDirection() { Hold(pending_bytes_, false); }

void TcpDirection::Hold(size_t bytes, bool add) {
  if (add) {
    pending_bytes_ += bytes;
    if (budget_) budget_->used += bytes;
  } else {
    pending_bytes_ -= bytes;
    if (budget_) budget_->used -= bytes;
  }
}

bool TcpDirection::OverBudget() const {
  return pending_.size() > kMaxPending || pending_bytes_ > max_buffered_ ||
         (budget_ && budget_->used > budget_->most);
}

void TcpDirection::Drain(StreamSink& sink) {
  while (!pending_.empty()) {
    auto it = pending_.begin();
    if (it->first > next_) break;
    const Pending& p = it->second;
    const uint64_t end = it->first + p.len;
    if (end > next_) {
      const uint64_t skip = next_ - it->first;
      const size_t from = static_cast<size_t>(std::min<uint64_t>(skip, p.data.size()));
      Deliver(p.ts_ns, ByteView(p.data).subspan(from), p.len - skip, sink);
    } else {
      ++counts_.retransmitted;  // a stretch another segment already brought
    }
    Hold(kEntryCost + p.data.size(), false);
    pending_.erase(it);
  }
}

void TcpDirection::Add(const TcpSegment& s, StreamSink& sink) {
  if (s.flags & kTcpSyn) {
    counts_.syn = true;
    syn_seq_ = s.seq;
    if (!started_) {
      started_ = true;
      base_seq_ = s.seq + 1;
      next_ = 0;
    }
  }
  if (s.flags & kTcpFin) counts_.fin = true;
  if (s.flags & kTcpRst) counts_.rst = true;
  if (s.payload_len == 0) return;
  if (!started_) {  // begun mid-connection: the stream starts here
    started_ = true;
    base_seq_ = s.seq;
    next_ = 0;
  }
  ++counts_.segments;
  const int64_t off = OffsetOf(s.flags & kTcpSyn ? s.seq + 1 : s.seq);
  const int64_t end = off + s.payload_len;
  const auto next = static_cast<int64_t>(next_);
  if (end <= next) {
    ++counts_.retransmitted;
    return;
  }
  if (off <= next) {
    const auto skip = static_cast<uint64_t>(next - off);
    const size_t from = static_cast<size_t>(std::min<uint64_t>(skip, s.payload.size()));
    Deliver(s.ts_ns, s.payload.subspan(from), s.payload_len - skip, sink);
    Drain(sink);
    return;
  }
  ++counts_.out_of_order;
  const auto at = static_cast<uint64_t>(off);
  auto [it, fresh] = pending_.try_emplace(at);
  if (!fresh && it->second.len >= s.payload_len) {
    ++counts_.retransmitted;
    return;
  }
  if (!fresh) Hold(kEntryCost + it->second.data.size(), false);
  it->second.ts_ns = s.ts_ns;
  it->second.len = s.payload_len;
  it->second.data.assign(s.payload.begin(), s.payload.end());
  Hold(kEntryCost + it->second.data.size(), true);
  // Too much waits behind the hole: the capture lost it.
  while (!pending_.empty() && OverBudget()) {
    LoseUpTo(pending_.begin()->first, pending_.begin()->second.ts_ns, sink);
    Drain(sink);
  }
}

void TcpDirection::Acked(uint32_t ack, int64_t ts_ns, StreamSink& sink) {
  if (!started_ || pending_.empty()) return;
  const int64_t acked = OffsetOf(ack);
  // Only holes with bytes behind them (a tail the capture lost has nothing
  // to hand on): what the receiver acknowledged of a hole, it had.
  while (!pending_.empty() && static_cast<int64_t>(next_) < acked) {
    const uint64_t to = std::min(pending_.begin()->first, static_cast<uint64_t>(acked));
    LoseUpTo(to, ts_ns, sink);
    Drain(sink);
  }
}

void TcpDirection::Finish(StreamSink& sink) {
  while (!pending_.empty()) {
    LoseUpTo(pending_.begin()->first, pending_.begin()->second.ts_ns, sink);
    Drain(sink);
  }
}

}  // namespace secmode::trace
