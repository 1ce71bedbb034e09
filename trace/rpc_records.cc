#include "trace/rpc_records.h"

#include <algorithm>
#include <optional>

#include "rpc/record.h"
#include "rpc/rpc_msg.h"
#include "smb/message.h"
#include "smb/transform.h"

namespace secmode::trace {

using common::ByteView;

namespace {

uint32_t Be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// The fewest bytes of a reply (xid, type, reply_stat MSG_DENIED,
// reject_stat AUTH_ERROR, auth_stat) and of a call header (xid, type,
// rpcvers, prog, vers, proc, empty credential and verifier).
constexpr size_t kMinReply = 20, kMinCall = 40;

// Whether a record starts at `at`: a mark, then a header the RPC decoders
// accept.
RecordStart RpcStartsAt(ByteView view, size_t at, uint64_t max_record) {
  const size_t have = view.size() - at;
  if (have < 4 + kMinReply) return RecordStart::kCannotTell;
  const uint8_t* p = view.data() + at;
  const uint64_t frag = Be32(p) & 0x7fffffffu;
  if (frag < kMinReply || frag > max_record) return RecordStart::kNo;
  const uint32_t type = Be32(p + 8);
  if (type == rpc::kCall) {
    if (frag < kMinCall || Be32(p + 12) != rpc::kRpcVersion) return RecordStart::kNo;
  } else if (type != rpc::kReply || Be32(p + 12) > rpc::kMsgDenied) {
    return RecordStart::kNo;
  }
  const size_t header = static_cast<size_t>(std::min<uint64_t>(frag, have - 4));
  const ByteView message = view.subspan(at + 4, header);
  common::Status s;
  if (type == rpc::kCall) {
    rpc::CallHeader h;  // up to the credential: a snap length may cut the verifier
    s = rpc::DecodeCallCredential(message, &h);
  } else {
    rpc::ReplyHeader h;
    s = rpc::DecodeReplyHeader(message, &h);
  }
  if (s.ok()) return RecordStart::kYes;
  // The decoder may have wanted bytes that come later.
  return header < frag && header < RecordWalker::kRecordHead ? RecordStart::kCannotTell
                                                             : RecordStart::kNo;
}

MarkKind RpcMark(const uint8_t* mark, uint64_t* length, bool* last) {
  const uint32_t m = Be32(mark);
  *length = m & 0x7fffffffu;
  *last = (m & rpc::kLastFragment) != 0;
  return MarkKind::kFragment;
}

// SMB2 over Direct TCP (MS-SMB2 2.1): a zero byte, the message's length in
// 24 bits, then the message: an SMB2 header (ProtocolId 0xFE 'SMB',
// StructureSize 64), a TRANSFORM_HEADER (0xFD 'SMB', 52 bytes) or a
// COMPRESSION_TRANSFORM_HEADER (0xFC 'SMB').
constexpr size_t kSmbSmallest = 16;  // a COMPRESSION_TRANSFORM_HEADER's

// A NetBIOS session keep-alive (RFC 1002 4.3.7: type 0x85, no body), which
// clients also send on port 445, carries no message.
constexpr uint8_t kNbssKeepAlive = 0x85;

MarkKind SmbMark(const uint8_t* mark, uint64_t* length, bool* last) {
  *length = uint64_t{mark[1]} << 16 | uint64_t{mark[2]} << 8 | mark[3];
  *last = true;
  if (mark[0] == kNbssKeepAlive && *length == 0) return MarkKind::kKeepAlive;
  return mark[0] == 0 ? MarkKind::kFragment : MarkKind::kNone;
}

RecordStart SmbStartsAt(ByteView view, size_t at, uint64_t max_record) {
  const size_t have = view.size() - at;
  if (have < 10) return RecordStart::kCannotTell;
  const uint8_t* p = view.data() + at;
  uint64_t length = 0;
  bool last = false;
  if (SmbMark(p, &length, &last) != MarkKind::kFragment || length < kSmbSmallest ||
      length > max_record) {
    return RecordStart::kNo;
  }
  if (p[5] != 'S' || p[6] != 'M' || p[7] != 'B') return RecordStart::kNo;
  switch (p[4]) {
    case 0xFE:
      return length >= smb::kHeaderSize && smb::Le16(p + 8) == smb::kHeaderSize ? RecordStart::kYes
                                                                                : RecordStart::kNo;
    case 0xFD: return length >= smb::kTransformHeaderSize ? RecordStart::kYes : RecordStart::kNo;
    case 0xFC: return RecordStart::kYes;
    default: return RecordStart::kNo;
  }
}

}  // namespace

const RecordFraming kRpcFraming = {RpcMark, RpcStartsAt, rpc::kMaxFragments};
const RecordFraming kSmbFraming = {SmbMark, SmbStartsAt, 1};

bool StartsWithRpcCall(ByteView bytes) {
  return bytes.size() >= 12 && Be32(bytes.data() + 8) == rpc::kCall &&
         RpcStartsAt(bytes, 0, RecordWalker::kDefaultMaxRecord) == RecordStart::kYes;
}

void RecordWalker::LosePlace() {
  if (in_record_) ++counts_.records_cut;
  in_record_ = false;
  state_ = State::kSearching;
  mark_have_ = 0;
  carry_.clear();
  ++counts_.lost_place;
}

void RecordWalker::MarkDone(int64_t ts_ns) {
  mark_have_ = 0;
  uint64_t frag = 0;
  const MarkKind kind = framing_->mark(mark_, &frag, &last_);
  if (kind == MarkKind::kKeepAlive && !in_record_) {
    ++counts_.keepalives;
    return;
  }
  const bool mark = kind == MarkKind::kFragment;
  if (!in_record_) {
    in_record_ = true;
    length_ = 0;
    fragments_ = 0;
    head_.clear();
    head_open_ = true;
    first_ts_ = ts_ns;
  }
  if (!mark || ++fragments_ > framing_->max_fragments || length_ + frag > max_record_ ||
      (frag == 0 && last_ && length_ == 0)) {
    LosePlace();
    return;
  }
  left_ = frag;
  last_ts_ = ts_ns;
  state_ = State::kFragment;
  if (left_ == 0) FragmentDone(ts_ns);
}

void RecordWalker::FragmentDone(int64_t ts_ns) {
  state_ = State::kMark;
  if (!last_) return;
  RecordSeen r;
  r.first_ts_ns = first_ts_;
  r.last_ts_ns = std::max(last_ts_, ts_ns);
  r.length = length_;
  r.head = head_;
  r.resynced = resynced_;
  resynced_ = false;
  in_record_ = false;
  ++counts_.records;
  sink_.Record(r);
}

void RecordWalker::Finish() {
  counts_.passed_over += carry_.size();
  carry_.clear();
  if (in_record_) ++counts_.records_cut;
  in_record_ = false;
}

void RecordWalker::Bytes(int64_t ts_ns, ByteView data, uint64_t len) {
  const bool whole = data.size() == len;
  // The captured bytes; searching, after the carried ones.
  common::Bytes joined;
  ByteView view = data;
  if (state_ == State::kSearching && !carry_.empty() && !data.empty()) {
    joined = std::move(carry_);
    carry_.clear();
    joined.insert(joined.end(), data.begin(), data.end());
    view = joined;
  }
  size_t p = 0;
  while (p < view.size()) {
    switch (state_) {
      case State::kSearching: {
        std::optional<size_t> wait;  // the first place that could not be told
        size_t q = p;
        for (; q < view.size(); ++q) {
          const RecordStart c = framing_->starts_at(view, q, max_record_);
          if (c == RecordStart::kYes) break;
          if (c == RecordStart::kCannotTell && whole && view.size() - q <= kSearchCarry) {
            // (kSearchCarry covers every place kCannotTell can come from.)
            wait = q;
            break;
          }
        }
        if (q < view.size() && !wait) {  // found
          counts_.passed_over += q - p;
          p = q;
          state_ = State::kMark;
          resynced_ = true;
          break;
        }
        const size_t keep_from = wait.value_or(view.size());
        counts_.passed_over += keep_from - p;
        carry_.assign(view.begin() + static_cast<std::ptrdiff_t>(keep_from), view.end());
        p = view.size();
        break;
      }
      case State::kMark:
        mark_[mark_have_++] = view[p++];
        if (mark_have_ == 4) MarkDone(ts_ns);
        break;
      case State::kFragment: {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(left_, view.size() - p));
        if (head_open_ && head_.size() < kRecordHead) {
          const size_t take = std::min(n, kRecordHead - head_.size());
          head_.insert(head_.end(), view.begin() + static_cast<std::ptrdiff_t>(p),
                       view.begin() + static_cast<std::ptrdiff_t>(p + take));
        }
        p += n;
        left_ -= n;
        length_ += n;
        last_ts_ = ts_ns;
        if (left_ == 0) FragmentDone(ts_ns);
        break;
      }
    }
  }
  // The stream bytes the capture does not have.
  uint64_t missing = len - data.size();
  while (missing > 0) {
    switch (state_) {
      case State::kSearching:
        counts_.passed_over += missing + carry_.size();
        carry_.clear();
        missing = 0;
        break;
      case State::kMark: LosePlace(); break;
      case State::kFragment: {
        const uint64_t n = std::min(left_, missing);
        if (head_.size() < kRecordHead) head_open_ = false;
        left_ -= n;
        length_ += n;
        missing -= n;
        last_ts_ = ts_ns;
        if (left_ == 0) FragmentDone(ts_ns);
        break;
      }
    }
  }
}

}  // namespace secmode::trace
