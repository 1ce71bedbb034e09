#include "trace/smb_trace.h"

#include <algorithm>
#include <cstring>

#include "smb/client_messages.h"
#include "smb/message.h"
#include "smb/transform.h"
#include "trace/rpc_trace.h"

namespace secmode::trace {

using common::ByteView;

struct SmbTraceBuilder::Conn {
  struct Sink : RecordSink {
    Sink(SmbTraceBuilder* b, Conn* c, bool client) : builder(b), conn(c), from_client(client) {}
    void Record(const RecordSeen& r) override { builder->Message(*conn, r, from_client); }
    SmbTraceBuilder* builder;
    Conn* conn;
    bool from_client;
  };
  Conn(SmbTraceBuilder* b, size_t i)
      : index(i),
        request_sink(b, this, true),
        response_sink(b, this, false),
        tcp(request_sink, response_sink, &b->pending_, kMaxMessage, &kSmbFraming) {}
  size_t index;  // into the trace's connections
  Sink request_sink, response_sink;
  TcpConnection tcp;                    // requests from the client, responses from the server
  std::map<uint64_t, Waiting> waiting;  // by MessageId
};

SmbTraceBuilder::SmbTraceBuilder(std::set<uint16_t> ports) : ports_(std::move(ports)) {}
SmbTraceBuilder::~SmbTraceBuilder() = default;

bool SmbTraceBuilder::Wants(const TcpSegment& s) const {
  return ports_.count(s.dst.port) > 0 || ports_.count(s.src.port) > 0;
}

SmbTraceBuilder::Conn* SmbTraceBuilder::Start(const TcpSegment& s, bool* from_client) {
  if (trace_.connections.size() >= kMaxConnections) {
    ++trace_.segments_over_limit;
    return nullptr;
  }
  // The server is the side on a port of ours (the destination when both are).
  const bool to_server = ports_.count(s.dst.port) > 0;
  SmbConnectionTrace& ct = trace_.connections.emplace_back();
  ct.client = to_server ? s.src : s.dst;
  ct.server = to_server ? s.dst : s.src;
  ct.first_ts_ns = s.ts_ns;
  auto conn = std::make_unique<Conn>(this, trace_.connections.size() - 1);
  Conn* c = conn.get();
  live_.emplace(std::make_pair(ct.client, ct.server), std::move(conn));
  *from_client = to_server;
  return c;
}

void SmbTraceBuilder::Add(const TcpSegment& s) {
  bool from_client = false;
  Conn* c = FindConnection(live_, s, &from_client);
  if (c && from_client && c->tcp.IsNewSyn(s)) {
    Close(*c);
    c = nullptr;
  }
  if (!c) c = Start(s, &from_client);
  if (!c) return;
  SmbConnectionTrace& ct = trace_.connections[c->index];
  ct.last_ts_ns = std::max(ct.last_ts_ns, s.ts_ns);
  c->tcp.Add(s, from_client);
  ct.reset = c->tcp.reset();
  ct.closed = c->tcp.closed();
}

size_t SmbTraceBuilder::SessionOf(uint64_t id, const Conn& c) {
  if (id == 0) return SIZE_MAX;
  size_t index = SIZE_MAX;
  if (auto it = session_index_.find(id); it != session_index_.end()) {
    index = it->second;
  } else if (trace_.sessions.size() >= kMaxSessions) {
    ++trace_.sessions_over_limit;
    return SIZE_MAX;
  } else {
    index = trace_.sessions.size();
    trace_.sessions.emplace_back().id = id;
    credits_in_use_.push_back(0);
    session_index_.emplace(id, index);
  }
  SmbSessionTrace& x = trace_.sessions[index];
  if (!x.connections.count(c.index)) {
    if (memberships_ < kMaxMemberships) {
      ++memberships_;
      x.connections.insert(c.index);
    } else {
      ++trace_.memberships_over_limit;
    }
  }
  return index;
}

void SmbTraceBuilder::Message(Conn& c, const RecordSeen& r, bool from_client) {
  SmbConnectionTrace& ct = trace_.connections[c.index];
  const ByteView head = r.head;
  if (head.size() < 4) {
    ++ct.unreadable;
    return;
  }
  if (head[1] != 'S' || head[2] != 'M' || head[3] != 'B') {
    ++ct.not_smb2;
    return;
  }
  switch (head[0]) {
    case 0xFD: Transform(c, head, from_client); return;
    case 0xFC: ++ct.compressed; return;
    case 0xFE: break;
    default: ++ct.not_smb2; return;
  }
  // The header and those compounded after it (MS-SMB2 3.2.4.1.4): each
  // NextCommand bytes after the one before, 8-byte aligned, inside the
  // message; as far as its first bytes were captured.
  uint64_t previous_session = 0;
  for (size_t offset = 0, n = 0;; ++n) {
    if (head.size() < offset + smb::kHeaderSize) {
      ++ct.unreadable;
      return;
    }
    const ByteView at = head.subspan(offset);
    auto h = smb::ParseHeader(at);
    if (!h.ok()) {
      ++ct.not_smb2;
      return;
    }
    if (n > 0) ++ct.compounded;
    // A related operation is of the session of the one before it, whatever
    // its own SessionId says (MS-SMB2 3.3.5.2.7.2; a client may send all
    // ones, 3.2.4.1.4).
    if (n > 0 && (h->flags & smb::kFlagRelated)) h->session_id = previous_session;
    previous_session = h->session_id;
    Header(c, r, at, *h);
    if (h->next_command == 0) return;
    if (h->next_command < smb::kHeaderSize || h->next_command % 8 != 0 ||
        offset + h->next_command >= r.length) {
      ++ct.not_smb2;
      return;
    }
    offset += h->next_command;
  }
}

void SmbTraceBuilder::Header(Conn& c, const RecordSeen& r, ByteView at,
                             const smb::HeaderFields& h) {
  SmbConnectionTrace& ct = trace_.connections[c.index];
  const bool response = (h.flags & smb::kFlagServerToRedir) != 0;
  const size_t session = SessionOf(h.session_id, c);
  SmbSessionTrace* s = session == SIZE_MAX ? nullptr : &trace_.sessions[session];
  const bool is_signed = (h.flags & smb::kFlagSigned) != 0;
  if (s) ++(is_signed ? s->signed_messages : s->plain);
  if (response) {
    ++ct.responses;
    if (s) s->credits_granted += h.credits;
    // The server's own notification (an oplock or lease break, MessageId
    // all ones, 2.2.23) answers no request.
    if (h.message_id == UINT64_MAX) {
      ++ct.notifications;
      return;
    }
    auto it = c.waiting.find(h.message_id);
    if (it == c.waiting.end()) {
      ++ct.unmatched_responses;
      return;
    }
    Waiting& w = it->second;
    // An interim response: the final one follows (MS-SMB2 3.3.4.2).
    if ((h.flags & smb::kFlagAsync) && h.status == smb::kStatusPending) {
      ++w.command->interim;
      return;
    }
    ++w.command->responses;
    w.command->response_ns.Add(
        TraceValue(static_cast<uint64_t>(std::max<int64_t>(0, r.last_ts_ns - w.sent_ns))));
    if (w.command->responses % 4096 == 0) w.command->response_ns.Compact();
    Forget(c, it);
    return;
  }
  ++ct.requests;
  if (s) {
    s->credits_requested += h.credits;
    auto highest = s->highest_message_id.find(c.index);
    if (highest != s->highest_message_id.end()) {
      highest->second = std::max(highest->second, h.message_id);
    } else if (memberships_ < kMaxMemberships) {
      ++memberships_;
      s->highest_message_id.emplace(c.index, h.message_id);
    } else {
      ++trace_.memberships_over_limit;
    }
    // A SESSION_SETUP that binds this connection to the session (2.2.5:
    // StructureSize, then Flags).
    if (h.command == smb::Command::kSessionSetup && at.size() > smb::kHeaderSize + 2 &&
        (at[smb::kHeaderSize + 2] & smb::kSessionSetupBinding)) {
      ++s->bindings;
    }
  }
  const uint16_t number = static_cast<uint16_t>(h.command);
  const char* name = smb::CommandName(number);
  SmbCommandTrace& command =
      trace_.commands[{name ? name : "unknown command", is_signed ? "signed" : "plain"}];
  ++command.requests;
  // A CANCEL names the request it cancels and gets no response of its own.
  if (h.command == smb::Command::kCancel) return;
  const uint64_t charge = std::max<uint64_t>(1, h.credit_charge);
  if (auto old = c.waiting.find(h.message_id); old != c.waiting.end()) {
    Forget(c, old);  // the same MessageId again: the newer one waits
  } else if (!c.waiting.empty() &&
             (c.waiting.size() >= kMaxOutstanding || waiting_ >= kMaxWaiting)) {
    Forget(c, c.waiting.begin());  // the lowest MessageId is given up
    ++ct.outstanding_given_up;
  }
  c.waiting.emplace(h.message_id, Waiting{r.last_ts_ns, &command, session, charge});
  ++waiting_;
  ct.most_outstanding = std::max(ct.most_outstanding, c.waiting.size());
  if (s) {
    credits_in_use_[session] += charge;
    s->most_credits_in_use = std::max(s->most_credits_in_use, credits_in_use_[session]);
  }
}

void SmbTraceBuilder::Forget(Conn& c, std::map<uint64_t, Waiting>::iterator it) {
  if (it->second.session != SIZE_MAX) credits_in_use_[it->second.session] -= it->second.charge;
  c.waiting.erase(it);
  --waiting_;
}

void SmbTraceBuilder::Transform(Conn& c, ByteView head, bool from_client) {
  SmbConnectionTrace& ct = trace_.connections[c.index];
  auto h = smb::ParseTransformHeaderPrefix(head);
  if (!h.ok()) {
    ++(head.size() < smb::kTransformHeaderSize ? ct.unreadable : ct.not_smb2);
    return;
  }
  ++ct.encrypted;
  const size_t session = SessionOf(h->session_id, c);
  if (session == SIZE_MAX) return;
  SmbSessionTrace& s = trace_.sessions[session];
  ++s.encrypted;
  if (nonces_.size() >= kMaxNonces) {
    ++s.nonces_not_checked;
    return;
  }
  std::array<uint8_t, 16> nonce;
  memcpy(nonce.data(), h->nonce, nonce.size());
  if (!nonces_.insert({{session, from_client}, nonce}).second) ++s.nonces_reused;
}

void SmbTraceBuilder::Close(Conn& c) {
  c.tcp.Finish();
  SmbConnectionTrace& ct = trace_.connections[c.index];
  ct.outstanding_at_end = c.waiting.size();
  while (!c.waiting.empty()) Forget(c, c.waiting.begin());
  ct.from_client = c.tcp.from_client();
  ct.from_server = c.tcp.from_server();
  ct.client_records = c.tcp.client_records();
  ct.server_records = c.tcp.server_records();
  live_.erase({ct.client, ct.server});  // destroys c
}

SmbTrace SmbTraceBuilder::Finish() {
  while (!live_.empty()) Close(*live_.begin()->second);
  for (auto& [key, command] : trace_.commands) command.response_ns.Compact();
  return std::move(trace_);
}

}  // namespace secmode::trace
