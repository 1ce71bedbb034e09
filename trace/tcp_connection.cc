#include "trace/tcp_connection.h"

namespace secmode::trace {

namespace {
constexpr size_t kMaxBuffered = 4u << 20;  // a direction's bytes behind holes
}  // namespace

TcpConnection::TcpConnection(RecordSink& client_sink, RecordSink& server_sink,
                             PendingBudget* pending, uint64_t max_record,
                             const RecordFraming* framing)
    : to_server_(kMaxBuffered, pending),
      to_client_(kMaxBuffered, pending),
      client_records_(client_sink, max_record, framing),
      server_records_(server_sink, max_record, framing) {}

bool TcpConnection::IsNewSyn(const TcpSegment& s) const {
  return (s.flags & kTcpSyn) && !(s.flags & kTcpAck) &&
         !(to_server_.counts().syn && to_server_.syn_seq() == s.seq);
}

void TcpConnection::Add(const TcpSegment& s, bool from_client) {
  TcpDirection& mine = from_client ? to_server_ : to_client_;
  TcpDirection& other = from_client ? to_client_ : to_server_;
  RecordWalker& mine_records = from_client ? client_records_ : server_records_;
  RecordWalker& other_records = from_client ? server_records_ : client_records_;
  // A direction whose start the capture missed: its first bytes may be the
  // middle of a record, so its first record is searched for.
  if (s.payload_len > 0 && !(s.flags & kTcpSyn) && !mine.started()) mine_records.Seek();
  mine.Add(s, mine_records);
  if (s.flags & kTcpAck) other.Acked(s.ack, s.ts_ns, other_records);
  if (s.flags & kTcpRst) reset_ = true;
}

void TcpConnection::Finish() {
  to_server_.Finish(client_records_);
  to_client_.Finish(server_records_);
  client_records_.Finish();
  server_records_.Finish();
}

}  // namespace secmode::trace
