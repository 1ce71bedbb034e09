// TCP record marking (RFC 5531 section 11): a record is one or more
// fragments, each preceded by a 4-byte mark whose high bit says "last
// fragment" and whose low 31 bits are the fragment's length.
//
// AppendRecordMark/FrameRecord write one-fragment records (what every sender
// in this project emits). RecordReader reassembles records of any number of
// fragments from a byte stream and refuses, with a clear error, any record
// larger than its configured maximum as soon as a mark announces it. Its
// buffer grows only as bytes arrive (doubling), never to the size a mark
// announces, so a mark without the data behind it costs nothing, and
// Shrink() gives a large buffer back once its message is done.
// RFC 5531 section 11 lets a fragment have 0 bytes, and a record is one RPC
// message. So an empty record (a last fragment of 0 bytes with nothing
// before it, mark 0x80000000, or after empty fragments only) carries no
// message and is refused as a broken stream; an empty fragment inside a
// record is accepted, and a record may have at most kMaxFragments fragments
// (so a stream of empty non-last fragments ends too). After an error the
// stream is unusable (the caller closes the connection).
// Thread safety: one thread at a time per reader.
#ifndef SECMODE_RPC_RECORD_H_
#define SECMODE_RPC_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/bytes.h"
#include "common/status.h"

namespace secmode::rpc {

inline constexpr uint32_t kLastFragment = 0x80000000u;
inline constexpr size_t kDefaultMaxRecord = (1u << 20) + (64u << 10);  // 1 MiB I/O + headers
// What secmode's client and server ask one recv() for: the records of one
// read are one batch (handled, then their replies or next calls written).
inline constexpr size_t kReadChunk = 64u << 10;

// The most fragments one record may have. Senders cut records into
// fragments of their buffer's size: MIT gssrpc's xdrrec uses 4000 bytes,
// so 263 fragments for a 1 MiB write; this allows fragments of 256 bytes
// at kDefaultMaxRecord, and 16 KiB ones for a record of 1 GiB.
inline constexpr size_t kMaxFragments = 65536;

// Appends the mark for a last fragment of `length` bytes.
void AppendRecordMark(uint32_t length, common::Bytes* out);
// Replaces `*wire` by mark || record.
void FrameRecord(common::ByteView record, common::Bytes* wire);

class RecordReader {
 public:
  explicit RecordReader(size_t max_record = kDefaultMaxRecord) : max_record_(max_record) {}

  // Space to read at least `min` more stream bytes into; then Commit(n).
  common::MutableByteView WriteSpace(size_t min);
  void Commit(size_t n);
  // Copies stream bytes in (for callers that do not read sockets).
  void Feed(common::ByteView data);

  // Sets `*record` to the next complete record and returns true, or returns
  // false when more bytes are needed. The view is valid until the next call
  // to Next, WriteSpace or Feed. Errors (kCorrupt): oversize record (mark or
  // sum of fragments beyond max_record), empty record, more than
  // kMaxFragments fragments.
  common::Result<bool> Next(common::ByteView* record);

  // Bytes received but not yet returned as part of a record (a record
  // being reassembled counts).
  size_t buffered() const { return end_ - start_ + assembled_.size(); }
  size_t max_record() const { return max_record_; }
  // Whether a record has begun and not yet ended.
  bool in_record() const { return end_ > start_ || in_multi_; }
  // Bytes of memory the reader holds (its buffers' capacities).
  size_t capacity() const {
    return buf_.capacity() + assembled_.capacity() + assembled_out_.capacity();
  }
  // Gives back buffer memory beyond `keep` bytes (what is buffered stays).
  // Invalidates a record view handed out before, like Next.
  void Shrink(size_t keep = kReadChunk);

 private:
  void Compact();
  // Marks the stream failed with `why`.
  common::Status Fail(std::string why);
  size_t max_record_;
  common::Bytes buf_;
  size_t start_ = 0, end_ = 0;
  common::Bytes assembled_;      // fragments of a multi-fragment record so far
  common::Bytes assembled_out_;  // the last multi-fragment record handed out
  bool in_multi_ = false;
  size_t fragments_ = 0;  // fragments of the record being read so far
  bool failed_ = false;
  common::Status failure_;
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_RECORD_H_
