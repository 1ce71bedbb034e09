// TcpConnection: one TCP connection of a capture as the trace's builders
// read it (RpcTraceBuilder, SmbTraceBuilder): its two directions put back in
// order (TcpDirection) and each direction's record walker, fed segment by
// segment; a direction whose start the capture missed is searched for its
// first record. FindConnection finds a segment's connection among the live
// ones.
//
// Memory: the two directions' bytes held behind holes (TcpDirection's
// bounds) and the walkers'. Thread safety: none; owned by its builder's
// connection, whose sinks must outlive it.
#ifndef SECMODE_TRACE_TCP_CONNECTION_H_
#define SECMODE_TRACE_TCP_CONNECTION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "trace/capture.h"
#include "trace/rpc_records.h"
#include "trace/tcp_stream.h"

namespace secmode::trace {

class TcpConnection {
 public:
  TcpConnection(RecordSink& client_sink, RecordSink& server_sink, PendingBudget* pending,
                uint64_t max_record, const RecordFraming* framing);

  // Whether the client's segment `s` begins a new connection on these
  // ports: a SYN but the one this connection began with sent again (the
  // Linux client reconnects from its port; a capture may have begun after
  // the first SYN).
  bool IsNewSyn(const TcpSegment& s) const;
  // `s` to its direction, its acknowledgement to the other.
  void Add(const TcpSegment& s, bool from_client);
  // The capture ended or the connection was replaced: what waits behind
  // holes is handed on and a record begun is cut.
  void Finish();

  bool reset() const { return reset_; }  // an RST was seen
  bool closed() const { return to_server_.counts().fin && to_client_.counts().fin; }
  const DirectionCounts& from_client() const { return to_server_.counts(); }
  const DirectionCounts& from_server() const { return to_client_.counts(); }
  const RecordCounts& client_records() const { return client_records_.counts(); }
  const RecordCounts& server_records() const { return server_records_.counts(); }

 private:
  TcpDirection to_server_, to_client_;
  RecordWalker client_records_, server_records_;
  bool reset_ = false;
};

// The live connection `s` belongs to in `live` (keyed by (client, server))
// and whether it came from the client; nullptr when none.
template <class Conn>
Conn* FindConnection(const std::map<std::pair<Endpoint, Endpoint>, std::unique_ptr<Conn>>& live,
                     const TcpSegment& s, bool* from_client) {
  if (auto it = live.find({s.src, s.dst}); it != live.end()) {
    *from_client = true;
    return it->second.get();
  }
  if (auto it = live.find({s.dst, s.src}); it != live.end()) {
    *from_client = false;
    return it->second.get();
  }
  return nullptr;
}

}  // namespace secmode::trace

#endif  // SECMODE_TRACE_TCP_CONNECTION_H_
