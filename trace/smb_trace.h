// What a capture's SMB2/3 traffic did (`secmode trace`, TCP port 445 unless
// TraceOptions::smb_ports says otherwise): per session, over every connection
// that carries it (SMB3 multichannel: a connection bound to the session by a
// SESSION_SETUP with the binding flag, MS-SMB2 3.2.5.3.1), its messages in
// clear, signed and encrypted, the credits its requests asked for and were
// granted and held at once, each channel's highest MessageId, and a
// TRANSFORM_HEADER nonce its sender used twice; per command and protection
// the requests, final responses and their response times at the capture
// point.
//
// What each message is comes from its first bytes: an SMB2 header
// (smb::ParseHeader) and those compounded after it (NextCommand, as far as
// the first RecordWalker::kRecordHead bytes of the message reach), a
// TRANSFORM_HEADER (smb::ParseTransformHeaderPrefix) or a
// COMPRESSION_TRANSFORM_HEADER (counted). An encrypted message hides its
// header: it counts for the session its TRANSFORM_HEADER names, with its
// nonce, and for no command. Requests and final responses are matched by
// MessageId on their connection (an interim STATUS_PENDING response is
// counted apart; a CANCEL waits for nothing). The messages are framed by
// Direct TCP (a zero byte and a 24-bit length) and read by a RecordWalker
// (kSmbFraming), which counts what the capture lost and finds its place
// again after it.
//
// A nonce is judged per session and sender (the client's and the server's
// keys differ, MS-SMB2 3.2.5.3.1): seen before there, it is reused, an error
// of that sender (a nonce must never repeat under one key).
//
// Memory is held by caps, not by the file's length: kMaxConnections
// connections (the segments of later ones counted), kMaxOutstanding
// requests waiting per connection and kMaxWaiting over all of them (beyond
// either, the connection adding one gives up its oldest, counted),
// kPendingBudget bytes behind holes over all of them, kMaxSessions sessions,
// kMaxMemberships channels and MessageIds of sessions, kMaxNonces nonces
// remembered (beyond, counted as not checked), and the commands of MS-SMB2
// by name and all others as one. Thread safety: none.
#ifndef SECMODE_TRACE_SMB_TRACE_H_
#define SECMODE_TRACE_SMB_TRACE_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/latency.h"
#include "smb/client.h"
#include "smb/message.h"
#include "trace/capture.h"
#include "trace/rpc_records.h"
#include "trace/tcp_connection.h"
#include "trace/tcp_stream.h"

namespace secmode::trace {

// One SMB2 command in one protection ("plain" or "signed", of its request).
struct SmbCommandTrace {
  uint64_t requests = 0, responses = 0;
  uint64_t interim = 0;                // STATUS_PENDING responses before the final one
  common::LatencySamples response_ns;  // request's last byte to its final response's (TraceValue)
};

struct SmbSessionTrace {
  uint64_t id = 0;               // SessionId
  std::set<size_t> connections;  // its channels: indexes into SmbTrace::connections
  uint64_t plain = 0, signed_messages = 0, encrypted = 0;  // messages, compounded ones each
  uint64_t bindings = 0;  // SESSION_SETUP requests binding a connection to it
  uint64_t credits_requested = 0, credits_granted = 0;
  uint64_t most_credits_in_use = 0;  // the charges of its requests waiting for a response, at once
  // Per channel (connection index), the highest MessageId of its requests
  // in clear.
  std::map<size_t, uint64_t> highest_message_id;
  uint64_t nonces_reused = 0;       // TRANSFORM_HEADER nonces its sender had used before
  uint64_t nonces_not_checked = 0;  // beyond kMaxNonces
};

struct SmbConnectionTrace {
  Endpoint client, server;
  int64_t first_ts_ns = 0, last_ts_ns = 0;
  uint64_t requests = 0, responses = 0;  // SMB2 headers in clear, compounded ones each
  uint64_t encrypted = 0, compressed = 0;
  uint64_t compounded = 0;  // headers after the first of their message
  // Messages or compounded parts whose header was not captured (or lay
  // beyond the first RecordWalker::kRecordHead bytes of their message).
  uint64_t unreadable = 0;
  uint64_t not_smb2 = 0;             // messages that are no SMB2 header, transform or compression
  uint64_t unmatched_responses = 0;  // final responses to no request waiting
  uint64_t notifications = 0;        // the server's oplock and lease breaks (MessageId all ones)
  uint64_t outstanding_given_up = 0;
  size_t most_outstanding = 0, outstanding_at_end = 0;
  bool closed = false, reset = false;
  DirectionCounts from_client, from_server;
  RecordCounts client_records, server_records;
};

struct SmbTrace {
  std::vector<SmbConnectionTrace> connections;
  std::vector<SmbSessionTrace> sessions;
  // (command, protection): ("READ", "signed"), ("NEGOTIATE", "plain") ...
  std::map<std::pair<std::string, std::string>, SmbCommandTrace> commands;
  // Segments of connections beyond kMaxConnections; headers and transforms
  // of sessions beyond kMaxSessions; channels and MessageIds not followed
  // beyond kMaxMemberships.
  uint64_t segments_over_limit = 0, sessions_over_limit = 0, memberships_over_limit = 0;
};

class SmbTraceBuilder {
 public:
  static constexpr size_t kMaxConnections = 16384;
  static constexpr size_t kMaxOutstanding = 65536;
  static constexpr size_t kPendingBudget = 64u << 20;
  static constexpr size_t kMaxSessions = 16384;
  static constexpr size_t kMaxNonces = size_t{1} << 19;
  // Requests waiting over all connections (beyond, the connection adding
  // one gives up its oldest, counted).
  static constexpr size_t kMaxWaiting = size_t{1} << 20;
  // The sessions' channels and their highest MessageIds, entries over all
  // sessions (beyond, not followed, counted).
  static constexpr size_t kMaxMemberships = size_t{1} << 21;
  // The largest message: what Direct TCP's 24-bit length can say.
  static constexpr uint64_t kMaxMessage = smb::kMaxFrame;

  explicit SmbTraceBuilder(std::set<uint16_t> ports);
  ~SmbTraceBuilder();
  SmbTraceBuilder(const SmbTraceBuilder&) = delete;
  SmbTraceBuilder& operator=(const SmbTraceBuilder&) = delete;

  // Whether the segment is of a connection to one of its ports.
  bool Wants(const TcpSegment& s) const;
  void Add(const TcpSegment& s);
  // The capture ended: what waits behind holes is handed on; the trace.
  SmbTrace Finish();

 private:
  struct Conn;
  struct Waiting {
    int64_t sent_ns = 0;
    SmbCommandTrace* command = nullptr;
    size_t session = SIZE_MAX;  // SIZE_MAX: none
    uint64_t charge = 1;
  };
  Conn* Start(const TcpSegment& s, bool* from_client);
  void Message(Conn& c, const RecordSeen& r, bool from_client);
  // One SMB2 header in clear (`at`: its first bytes, the body's after them
  // as captured) of the message `r`.
  void Header(Conn& c, const RecordSeen& r, common::ByteView at, const smb::HeaderFields& h);
  void Transform(Conn& c, common::ByteView head, bool from_client);
  // A request no longer waits (answered, sent again, given up, its
  // connection gone): its credits are back.
  void Forget(Conn& c, std::map<uint64_t, Waiting>::iterator it);
  // The session of `id` (SIZE_MAX for id 0 or beyond kMaxSessions), with
  // the connection as one of its channels.
  size_t SessionOf(uint64_t id, const Conn& c);
  void Close(Conn& c);

  std::set<uint16_t> ports_;
  PendingBudget pending_{0, kPendingBudget};
  std::map<std::pair<Endpoint, Endpoint>, std::unique_ptr<Conn>> live_;  // (client, server)
  std::unordered_map<uint64_t, size_t> session_index_;
  std::vector<uint64_t> credits_in_use_;  // per session
  size_t waiting_ = 0;                    // requests waiting on all connections
  size_t memberships_ = 0;
  // Nonces seen, by session and sender (true: the client).
  std::set<std::pair<std::pair<size_t, bool>, std::array<uint8_t, 16>>> nonces_;
  SmbTrace trace_;
};

}  // namespace secmode::trace

#endif  // SECMODE_TRACE_SMB_TRACE_H_
