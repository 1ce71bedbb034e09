#include "rpc/record.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Status;

void AppendRecordMark(uint32_t length, Bytes* out) {
  uint32_t m = kLastFragment | length;
  uint8_t b[4] = {static_cast<uint8_t>(m >> 24), static_cast<uint8_t>(m >> 16),
                  static_cast<uint8_t>(m >> 8), static_cast<uint8_t>(m)};
  out->insert(out->end(), b, b + 4);
}

void FrameRecord(ByteView record, Bytes* wire) {
  wire->clear();
  AppendRecordMark(static_cast<uint32_t>(record.size()), wire);
  wire->insert(wire->end(), record.begin(), record.end());
}

namespace {

std::string Hex8(uint32_t v) {
  char h[9];
  snprintf(h, sizeof h, "%08x", v);
  return h;
}

}  // namespace

void RecordReader::Compact() {
  if (start_ == 0) return;
  if (start_ == end_) {
    start_ = end_ = 0;
    return;
  }
  std::memmove(buf_.data(), buf_.data() + start_, end_ - start_);
  end_ -= start_;
  start_ = 0;
}

common::MutableByteView RecordReader::WriteSpace(size_t min) {
  // Move unread bytes to the front only when the tail is short; a record
  // view handed out earlier is dead by contract now.
  if (buf_.size() - end_ < min) Compact();
  if (buf_.size() - end_ < min) buf_.resize(end_ + min);
  return common::MutableByteView(buf_.data() + end_, buf_.size() - end_);
}

void RecordReader::Commit(size_t n) { end_ += n; }

void RecordReader::Shrink(size_t keep) {
  Bytes().swap(assembled_out_);
  if (!in_multi_) Bytes().swap(assembled_);
  const size_t n = end_ - start_;
  if (buf_.capacity() <= keep || n > keep) return;
  Bytes smaller(keep);
  if (n > 0) std::memcpy(smaller.data(), buf_.data() + start_, n);
  buf_.swap(smaller);
  start_ = 0;
  end_ = n;
}

void RecordReader::Feed(ByteView data) {
  auto space = WriteSpace(data.size());
  if (!data.empty()) std::memcpy(space.data(), data.data(), data.size());
  Commit(data.size());
}

Status RecordReader::Fail(std::string why) {
  failed_ = true;
  failure_ = Status::Corrupt(std::move(why));
  return failure_;
}

common::Result<bool> RecordReader::Next(ByteView* record) {
  if (failed_) return failure_;
  while (true) {
    if (end_ - start_ < 4) return false;
    const uint8_t* p = buf_.data() + start_;
    uint32_t mark = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    bool last = (mark & kLastFragment) != 0;
    size_t len = mark & ~kLastFragment;
    // RFC 5531 section 11 leaves the maximum to the implementation; refuse
    // as soon as the mark announces too much, before buffering any of it.
    size_t total = assembled_.size() + len;
    if (total > max_record_) {
      return Fail("record of " + std::to_string(total) + " bytes (fragment mark 0x" + Hex8(mark) +
                  ") exceeds the maximum record size of " + std::to_string(max_record_));
    }
    if (end_ - start_ - 4 < len) {
      // Not all here yet. Make room for the whole fragment as its bytes
      // arrive: move what is here to the front (while it is short), then
      // grow toward len + 4 by at most twice what has arrived, so a mark
      // with nothing behind it costs nothing, and once the buffer holds a
      // whole fragment the reads end where it ends (no large move later).
      const size_t want = len + 4;
      if (buf_.size() - start_ < want) {
        Compact();
        const size_t target = std::min(want, std::max(buf_.size(), 2 * end_));
        if (target > buf_.size()) buf_.resize(target);
      }
      return false;
    }
    ByteView frag(buf_.data() + start_ + 4, len);
    start_ += 4 + len;
    if (last && total == 0) {
      return Fail("empty record (a last fragment of 0 bytes, mark 0x" + Hex8(mark) + ", after " +
                  std::to_string(fragments_) +
                  " empty ones): a record carries an RPC message (RFC 5531 section 11)");
    }
    if (++fragments_ > kMaxFragments) {
      return Fail("record of more than " + std::to_string(kMaxFragments) + " fragments (" +
                  std::to_string(total) + " bytes so far)");
    }
    if (!in_multi_ && last) {
      fragments_ = 0;
      *record = frag;
      return true;
    }
    assembled_.insert(assembled_.end(), frag.begin(), frag.end());
    in_multi_ = true;
    if (last) {
      in_multi_ = false;
      fragments_ = 0;
      // Hand out the assembled record; keep it alive in a second buffer
      // until the next call.
      std::swap(assembled_, assembled_out_);
      assembled_.clear();
      *record = ByteView(assembled_out_);
      return true;
    }
  }
}

}  // namespace secmode::rpc
