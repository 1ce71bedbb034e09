// ONC RPC records (RFC 5531 section 11) in one direction of a captured TCP
// stream, read as far as the capture shows them.
//
// RecordWalker takes the stream from TcpDirection (trace/tcp_stream.h) and
// hands its sink one RecordSeen per record: the record's length from its
// marks (so a record whose body was not captured is still skipped exactly),
// its first bytes as captured (at most kRecordHead: the call or reply header
// and credential, which is what the analysis reads) and the times of the
// segments that completed its first mark and carried its last byte.
//
// When bytes that held a record mark were not captured, the walker has lost
// its place: it then looks at every captured byte for a mark followed by a
// header the protocol's decoders accept (RecordFraming::starts_at: for RPC a
// call header up to its credential, rpc::DecodeCallCredential, or a reply
// header, rpc::DecodeReplyHeader), counts the bytes it passed over, and
// goes on from there (the record found first is marked `resynced`). A mark
// that is none, announces more than `max_record` bytes or more fragments
// than the framing allows (rpc::kMaxFragments), or an empty record, loses
// the place the same way.
//
// Memory: kRecordHead bytes of the record being read and at most
// kSearchCarry bytes while searching. Thread safety: none.
#ifndef SECMODE_TRACE_RPC_RECORDS_H_
#define SECMODE_TRACE_RPC_RECORDS_H_

#include <cstddef>
#include <cstdint>

#include "common/bytes.h"
#include "trace/tcp_stream.h"

namespace secmode::trace {

// Whether a record starts at a place of a stream: kCannotTell when the bytes
// there end before that can be told.
enum class RecordStart { kNo, kYes, kCannotTell };

// How a stream marks its records. ONC RPC (RFC 5531 section 11): a 4-byte
// mark, a fragment's length and a last-fragment bit, a record of one or
// more fragments. SMB2 over Direct TCP (MS-SMB2 2.1): a zero byte and a
// 24-bit length before each message, one fragment a record.
enum class MarkKind {
  kNone,       // the 4 bytes are no mark: the walker has lost its place
  kFragment,   // a fragment of *length bytes follows (*last: it ends its record)
  kKeepAlive,  // a message between records that carries none (SMB's NetBIOS keep-alive)
};
struct RecordFraming {
  // What the 4 bytes of a mark announce.
  MarkKind (*mark)(const uint8_t* mark, uint64_t* length, bool* last);
  // Whether a record starts at `view[at]`: a mark, then a header the
  // protocol's decoders accept.
  RecordStart (*starts_at)(common::ByteView view, size_t at, uint64_t max_record);
  size_t max_fragments;
};
extern const RecordFraming kRpcFraming;
extern const RecordFraming kSmbFraming;

struct RecordSeen {
  // The segments that completed its first mark and brought its last byte.
  int64_t first_ts_ns = 0, last_ts_ns = 0;
  uint64_t length = 0;    // the message's bytes, marks excluded
  common::ByteView head;  // its first min(length, kRecordHead) bytes, fewer where not captured
  bool resynced = false;  // the first record found after the walker lost its place
};

// Whether `bytes`, the first a connection's side sent, begin with a record
// mark and a call header up to its credential rpc::DecodeCallCredential
// accepts.
bool StartsWithRpcCall(common::ByteView bytes);

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // `r.head` is valid during the call only.
  virtual void Record(const RecordSeen& r) = 0;
};

struct RecordCounts {
  uint64_t records = 0;
  uint64_t lost_place = 0;   // times the walker lost its place
  uint64_t passed_over = 0;  // stream bytes passed over while searching
  uint64_t records_cut = 0;  // records begun and not finished where it lost its place
  uint64_t keepalives = 0;   // keep-alives between records (MarkKind::kKeepAlive)
};

class RecordWalker : public StreamSink {
 public:
  static constexpr size_t kRecordHead = 1024;
  // A place the search cannot tell yet has less than a mark and
  // kRecordHead bytes after it.
  static constexpr size_t kSearchCarry = kRecordHead + 4;
  static constexpr uint64_t kDefaultMaxRecord = 64u << 20;

  explicit RecordWalker(RecordSink& sink, uint64_t max_record = kDefaultMaxRecord,
                        const RecordFraming* framing = &kRpcFraming)
      : sink_(sink), max_record_(max_record), framing_(framing) {}

  void Bytes(int64_t ts_ns, common::ByteView data, uint64_t len) override;
  // The stream ended: bytes still held while searching are passed over, a
  // record begun and not finished is cut.
  void Finish();
  // The stream's start was not captured: its first bytes may be the middle
  // of a record, so the first record is searched for (as after lost bytes,
  // but not counted as a lost place). Before the first Bytes only.
  void Seek() { state_ = State::kSearching; }
  const RecordCounts& counts() const { return counts_; }
  // Whether the walker is searching for its place (it lost it and found no
  // record since).
  bool searching() const { return state_ == State::kSearching; }

 private:
  enum class State { kMark, kFragment, kSearching };
  void LosePlace();
  void MarkDone(int64_t ts_ns);
  void FragmentDone(int64_t ts_ns);

  RecordSink& sink_;
  uint64_t max_record_;
  const RecordFraming* framing_;
  State state_ = State::kMark;
  uint8_t mark_[4] = {};
  size_t mark_have_ = 0;
  uint64_t left_ = 0;  // bytes left in the fragment being read
  bool last_ = false;  // it is the record's last fragment
  // The record being read.
  bool in_record_ = false;
  uint64_t length_ = 0;
  size_t fragments_ = 0;
  int64_t first_ts_ = 0, last_ts_ = 0;
  common::Bytes head_;
  bool head_open_ = true;  // every byte so far was captured
  bool resynced_ = false;
  common::Bytes carry_;  // searching: captured bytes not yet ruled out
  RecordCounts counts_;
};

}  // namespace secmode::trace

#endif  // SECMODE_TRACE_RPC_RECORDS_H_
