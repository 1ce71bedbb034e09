#include "trace/rpc_trace.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <iterator>
#include <sstream>
#include <utility>

#include "common/format.h"
#include "common/hex.h"
#include "rpc/nfs.h"
#include "rpc/rpc_msg.h"
#include "rpc/xdr.h"

namespace secmode::trace {

using common::Result;
using common::Status;
using nlohmann::json;

namespace {

// How much of a call's COMPOUND could be read.
enum class CompoundView : uint32_t { kNone, kNamed, kSealed, kNotCaptured, kNotRead };

const char* CompoundViewName(CompoundView v) {
  switch (v) {
    case CompoundView::kSealed: return "sealed";
    case CompoundView::kNotCaptured: return "arguments not captured";
    case CompoundView::kNotRead: return "arguments not read";
    case CompoundView::kNone:
    case CompoundView::kNamed: break;
  }
  return "";
}

// NFSv3's procedures (RFC 1813 section 3); NFSv4 has NULL and COMPOUND.
const char* const kNfs3Procedures[] = {
    "NULL",    "GETATTR",     "SETATTR", "LOOKUP", "ACCESS",   "READLINK", "READ",   "WRITE",
    "CREATE",  "MKDIR",       "SYMLINK", "MKNOD",  "REMOVE",   "RMDIR",    "RENAME", "LINK",
    "READDIR", "READDIRPLUS", "FSSTAT",  "FSINFO", "PATHCONF", "COMMIT"};

// The name of a call that is not an NFSv4 COMPOUND read further.
void ProcedureName(uint32_t prog, uint32_t vers, uint32_t proc, std::string* name) {
  if (prog == rpc::kNfsProgram && vers == 3 && proc < std::size(kNfs3Procedures)) {
    *name = std::string("NFSv3 ") + kNfs3Procedures[proc];
  } else if (prog == rpc::kNfsProgram && vers == rpc::kNfsVersion && proc <= 1) {
    *name = proc == 0 ? "NFSv4 NULL" : "NFSv4 COMPOUND";
  } else {
    *name = "program " + std::to_string(prog) + " v" + std::to_string(vers) + " procedure " +
            std::to_string(proc);
  }
}

// A COMPOUND's arguments in a call's captured bytes: the body after the
// verifier (`h` decoded through it when `whole_header`), in clear for
// AUTH_SYS / AUTH_NONE and RPCSEC_GSS service none, after databody_integ's
// length and seq_num for integrity (RFC 2203 5.3.2.2). Otherwise why they
// cannot be seen: privacy, or not captured.
CompoundView CompoundArgs(common::ByteView head, uint64_t length, const rpc::CallHeader& h,
                          bool whole_header, const rpc::GssCred* gss, common::ByteView* args) {
  // Bytes the capture did not keep, or a call that is not what it says.
  const CompoundView missing =
      head.size() < length ? CompoundView::kNotCaptured : CompoundView::kNotRead;
  if (gss && gss->service == rpc::kGssSvcPrivacy) return CompoundView::kSealed;
  if (!whole_header) return missing;
  common::ByteView body = head.subspan(h.body_offset);
  if (gss && gss->service == rpc::kGssSvcIntegrity) {
    rpc::XdrDecoder d(body);
    uint32_t integ = 0, seq = 0;
    if (!d.GetU32(&integ, "databody_integ length").ok() || !d.GetU32(&seq, "seq_num").ok()) {
      return missing;
    }
    body = d.Rest().first(std::min<size_t>(d.remaining(), integ < 4 ? 0 : integ - 4));
  }
  *args = body;
  return CompoundView::kNamed;
}

std::string FlavorName(const rpc::CallHeader& h, const rpc::GssCred* gss) {
  switch (h.cred.flavor) {
    case rpc::kAuthNone: return "none";
    case rpc::kAuthSys: return "sys";
    case rpc::kRpcsecGss:
      if (!gss) return "rpcsec_gss (unreadable credential)";
      if (gss->proc != rpc::kGssData)
        return std::string("rpcsec_gss ") + rpc::GssProcName(gss->proc);
      return std::string("rpcsec_gss ") + rpc::GssServiceName(gss->service);
    default: return "flavor " + std::to_string(h.cred.flavor);
  }
}

}  // namespace

// A call waiting for its reply.
struct RpcTraceBuilder::Waiting {
  int64_t sent_ns = 0;                  // its last byte
  OperationTrace* operation = nullptr;  // a node of RpcTrace::operations
  size_t context = SIZE_MAX;
  uint64_t serial = 0;
  // An INIT or CONTINUE_INIT: what came before the context's INIT.
  const char* init_after = nullptr;
  uint64_t answered_before = 0;  // its connection's replies when it was sent
};

// A connection being read: the two directions of its stream, their record
// walkers, and the calls waiting for replies.
struct RpcTraceBuilder::Conn {
  struct Sink : RecordSink {
    Sink(RpcTraceBuilder* b, Conn* c, bool of_calls) : builder(b), conn(c), calls(of_calls) {}
    void Record(const RecordSeen& r) override {
      calls ? builder->Call(*conn, r) : builder->Reply(*conn, r);
    }
    RpcTraceBuilder* builder;
    Conn* conn;
    bool calls;  // the client's direction
  };
  Conn(RpcTraceBuilder* b, size_t i)
      : index(i),
        call_sink(b, this, true),
        reply_sink(b, this, false),
        tcp(call_sink, reply_sink, &b->pending_, RecordWalker::kDefaultMaxRecord, &kRpcFraming) {}
  size_t index;  // into the trace's connections
  Sink call_sink, reply_sink;
  TcpConnection tcp;                    // calls from the client, replies from the server
  std::map<uint32_t, Waiting> waiting;  // by XID
  std::deque<std::pair<uint64_t, uint32_t>> order;  // (serial, XID), oldest first
  // The handshake's segments as captured (-1: not seen).
  int64_t syn_ns = -1, synack_ns = -1;
  bool carried_data = false;  // it carried an RPCSEC_GSS DATA call
  uint64_t answered = 0;      // its calls answered so far
  bool ending_seen = false;   // a FIN or RST of it was seen
};

RpcTraceBuilder::RpcTraceBuilder(TraceOptions options) : options_(std::move(options)) {}
RpcTraceBuilder::~RpcTraceBuilder() = default;

RpcTraceBuilder::Conn* RpcTraceBuilder::Start(const TcpSegment& s, bool* from_client) {
  std::pair<Endpoint, Endpoint> key;
  if (not_rpc_.count({s.src, s.dst}) || not_rpc_.count({s.dst, s.src})) return nullptr;
  if (options_.rpc_ports.count(s.dst.port)) {
    key = {s.src, s.dst};
  } else if (options_.rpc_ports.count(s.src.port)) {
    key = {s.dst, s.src};
  } else if (!s.payload.empty() && StartsWithRpcCall(s.payload)) {
    key = {s.src, s.dst};
  } else {
    // A flow on other ports says what it is with its first bytes; until
    // then (its handshake) it is passed over.
    if (!s.payload.empty() && not_rpc_.size() < kMaxConnections) {
      not_rpc_.insert({s.src, s.dst});
      ++trace_.connections_not_rpc;
    }
    return nullptr;
  }
  if (trace_.connections.size() >= kMaxConnections) {
    ++trace_.segments_over_limit;
    return nullptr;
  }
  ConnectionTrace& ct = trace_.connections.emplace_back();
  ct.client = key.first;
  ct.server = key.second;
  ct.first_ts_ns = s.ts_ns;
  auto conn = std::make_unique<Conn>(this, trace_.connections.size() - 1);
  Conn* c = conn.get();
  live_.emplace(key, std::move(conn));
  *from_client = key.first == s.src;
  return c;
}

void RpcTraceBuilder::Add(const TcpSegment& s) {
  if (trace_.first_ts_ns == 0) trace_.first_ts_ns = s.ts_ns;
  trace_.last_ts_ns = std::max(trace_.last_ts_ns, s.ts_ns);
  bool from_client = false;
  Conn* c = FindConnection(live_, s, &from_client);
  if (c && from_client && c->tcp.IsNewSyn(s)) {
    Close(*c);
    c = nullptr;
  }
  if (!c) c = Start(s, &from_client);
  if (!c) return;
  ConnectionTrace& ct = trace_.connections[c->index];
  ct.last_ts_ns = std::max(ct.last_ts_ns, s.ts_ns);
  c->tcp.Add(s, from_client);
  Handshake(*c, s, from_client);
  if ((s.flags & (kTcpRst | kTcpFin)) && c->carried_data) {
    if (ClientEvents* e = EventsOf(ct.client)) e->disconnect = true;
  }
  // Which side ended it first (a server that closes connections with calls
  // outstanding: its reaction to a call below the window).
  if ((s.flags & (kTcpRst | kTcpFin)) && !ct.closed && !ct.reset && !c->ending_seen) {
    c->ending_seen = true;
    ct.ended_by_server = !from_client;
  }
  ct.reset = c->tcp.reset();
  ct.closed = c->tcp.closed();
}

void RpcTraceBuilder::Handshake(Conn& c, const TcpSegment& s, bool from_client) {
  ConnectionTrace& ct = trace_.connections[c.index];
  const bool syn = s.flags & kTcpSyn, ack = s.flags & kTcpAck;
  if (from_client && syn && !ack && c.syn_ns < 0) {
    c.syn_ns = s.ts_ns;
  } else if (!from_client && syn && ack && c.syn_ns >= 0 && c.synack_ns < 0) {
    c.synack_ns = s.ts_ns;
  } else if (from_client && ack && !syn && c.synack_ns >= 0 && ct.synack_to_ack_ns < 0) {
    ct.syn_to_synack_ns = std::max<int64_t>(0, c.synack_ns - c.syn_ns);
    ct.synack_to_ack_ns = std::max<int64_t>(0, s.ts_ns - c.synack_ns);
  }
}

size_t RpcTraceBuilder::ContextOf(common::ByteView handle) {
  scratch_handle_.assign(reinterpret_cast<const char*>(handle.data()), handle.size());
  if (auto it = context_index_.find(scratch_handle_); it != context_index_.end()) return it->second;
  if (trace_.contexts.size() >= kMaxContexts) {
    ++trace_.contexts_over_limit;
    return SIZE_MAX;
  }
  const size_t i = trace_.contexts.size();
  trace_.contexts.emplace_back().handle = common::ToHex(handle);
  std::vector<rpc::SequenceWindow>& w = windows_.emplace_back();
  for (uint32_t size : options_.windows) w.emplace_back(size);
  context_waiting_.push_back(0);
  context_index_.emplace(scratch_handle_, i);
  return i;
}

void RpcTraceBuilder::ShapeCall(const rpc::CallHeader& h, bool whole_header,
                                const rpc::GssCred* gss, common::ByteView head, uint64_t length) {
  const bool compound = h.prog == rpc::kNfsProgram && h.vers == rpc::kNfsVersion &&
                        h.proc == rpc::kNfsProcCompound &&
                        (h.cred.flavor != rpc::kRpcsecGss || (gss && gss->proc == rpc::kGssData));
  compound_.opcodes.clear();
  compound_.stated = 0;
  compound_.minor_version = 0;
  compound_.has_sequence = false;
  CompoundView view = CompoundView::kNone;
  if (compound) {
    common::ByteView args;
    view = CompoundArgs(head, length, h, whole_header, gss, &args);
    if (view == CompoundView::kNamed && !rpc::ReadCompoundOps(args, &compound_).ok()) {
      // Cut, or not COMPOUND4args.
      compound_.opcodes.clear();
      compound_.stated = 0;
      compound_.has_sequence = false;
      view = head.size() < length ? CompoundView::kNotCaptured : CompoundView::kNotRead;
    }
  }
  // The key: every field the names are made of, as bytes.
  std::string& k = scratch_op_;
  k.clear();
  auto put = [&k](uint32_t v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(h.prog);
  put(h.vers);
  put(h.proc);
  put(h.cred.flavor);
  put(gss ? 1 : 0);
  put(gss ? gss->proc : UINT32_MAX);
  put(gss ? gss->service : UINT32_MAX);
  put(static_cast<uint32_t>(view));
  if (view == CompoundView::kNamed) {
    put(compound_.minor_version);
    put(compound_.stated);
    for (uint32_t op : compound_.opcodes) put(op);
  }
  view_ = static_cast<uint32_t>(view);
}

OperationTrace& RpcTraceBuilder::OperationOfCall(const rpc::CallHeader& h,
                                                 const rpc::GssCred* gss) {
  if (auto it = op_index_.find(scratch_op_); it != op_index_.end()) return *it->second;
  std::pair<std::string, std::string> key;
  const auto view = static_cast<CompoundView>(view_);
  if (view == CompoundView::kNone) {
    ProcedureName(h.prog, h.vers, h.proc, &key.first);
  } else if (view == CompoundView::kNamed) {
    key.first =
        "NFSv4." + std::to_string(compound_.minor_version) + " " + rpc::CompoundOpNames(compound_);
  } else {
    key.first = std::string("NFSv4 COMPOUND (") + CompoundViewName(view) + ")";
  }
  key.second = FlavorName(h, gss);
  OperationTrace& op = OperationOf(key);
  if (op_index_.size() < kMaxOperationKeys) op_index_.emplace(scratch_op_, &op);
  return op;
}

OperationTrace& RpcTraceBuilder::OperationOf(const std::pair<std::string, std::string>& key) {
  if (auto it = trace_.operations.find(key); it != trace_.operations.end()) return it->second;
  if (trace_.operations.size() >= kMaxOperations) {
    return trace_.operations[{"other programs and procedures", "any"}];
  }
  return trace_.operations[key];
}

void RpcTraceBuilder::Sequence(Conn& c, const rpc::CompoundOps& ops) {
  std::array<uint8_t, rpc::kNfs4SessionIdSize> id;
  std::copy_n(ops.session_id.begin(), id.size(), id.begin());
  auto found = session_index_.find(id);
  if (found == session_index_.end()) {
    if (trace_.sessions.size() >= kMaxSessions) {
      ++trace_.sessions_over_limit;
      return;
    }
    found = session_index_.emplace(id, trace_.sessions.size()).first;
    trace_.sessions.emplace_back().id = common::ToHex(ops.session_id);
    slot_seq_.emplace_back();
  }
  SessionTrace& x = trace_.sessions[found->second];
  std::map<uint32_t, uint32_t>& slots = slot_seq_[found->second];
  ++x.calls;
  if (!x.connections.count(c.index) && TakeMembership()) x.connections.insert(c.index);
  x.highest_slot = std::max(x.highest_slot, ops.slot_id);
  x.highest_stated = std::max(x.highest_stated, ops.highest_slot_id);
  auto slot = slots.find(ops.slot_id);
  if (slot == slots.end()) {
    if (TakeMembership()) {
      slots.emplace(ops.slot_id, ops.sequence_id);
      ++x.slots_used;
    }
    return;
  }
  if (slot->second == ops.sequence_id) ++x.repeats;
  slot->second = ops.sequence_id;
}

RpcTraceBuilder::ClientEvents* RpcTraceBuilder::EventsOf(const Endpoint& client) {
  const std::pair<std::array<uint8_t, 16>, bool> key{client.addr, client.v6};
  if (auto it = client_events_.find(key); it != client_events_.end()) return &it->second;
  if (client_events_.size() >= kMaxConnections) return nullptr;
  return &client_events_[key];
}

bool RpcTraceBuilder::TakeMembership() {
  if (memberships_ >= kMaxMemberships) {
    ++trace_.memberships_over_limit;
    return false;
  }
  ++memberships_;
  return true;
}

void RpcTraceBuilder::DataCall(Conn& c, size_t context, uint32_t seq) {
  c.carried_data = true;
  ContextTrace& x = trace_.contexts[context];
  std::vector<rpc::SequenceWindow>& windows = windows_[context];
  ++x.calls;
  if (!x.connections.count(c.index) && TakeMembership()) x.connections.insert(c.index);
  // Every window has seen the same numbers: the same highest.
  const uint32_t lag = windows.front().Lag(seq);
  if (lag > 0) ++x.lagging;
  ConnectionTrace& ct = trace_.connections[c.index];
  ++ct.data_calls;
  ct.data_lag_total += lag;
  x.max_lag = std::max(x.max_lag, lag);
  x.lag.Add(TraceValue(lag));
  ++x.lag_histogram[LagBin(lag)];
  if (x.calls % 4096 == 0) x.lag.Compact();
  for (size_t i = 0; i < windows.size(); ++i) {
    const rpc::SeqVerdict v = windows[i].Check(seq);
    if (v == rpc::SeqVerdict::kBelowWindow) ++x.below_window[options_.windows[i]];
    if (v == rpc::SeqVerdict::kDuplicate) ++x.duplicates[options_.windows[i]];
  }
}

void RpcTraceBuilder::Call(Conn& c, const RecordSeen& r) {
  ConnectionTrace& ct = trace_.connections[c.index];
  rpc::CallHeader h;
  // The whole header, or the credential alone where a snap length cut the
  // verifier.
  const bool whole_header = rpc::DecodeCallHeader(r.head, &h).ok();
  if (!whole_header && !rpc::DecodeCallCredential(r.head, &h).ok()) {
    ++ct.unreadable_calls;
    return;
  }
  ++ct.calls;
  rpc::GssCred gss;
  bool have_gss = false;
  size_t context = SIZE_MAX;
  const char* init_after = nullptr;
  if (h.cred.flavor == rpc::kRpcsecGss) {
    have_gss = rpc::DecodeGssCred(h.cred.body, &gss).ok() && gss.version == rpc::kRpcsecGssVers1;
    if (have_gss && (gss.proc == rpc::kGssData || gss.proc == rpc::kGssDestroy)) {
      context = ContextOf(gss.handle);
    }
    if (have_gss && (gss.proc == rpc::kGssInit || gss.proc == rpc::kGssContinueInit)) {
      ++trace_.gss_init_calls;
      if (ClientEvents* e = EventsOf(ct.client)) {
        if (gss.proc == rpc::kGssInit) {
          e->init_after = e->problem      ? "a context problem reply"
                          : e->disconnect ? "a disconnect"
                                          : "nothing";
          e->problem = e->disconnect = false;
        }
        init_after = e->init_after;
      }
    }
  }
  ShapeCall(h, whole_header, have_gss ? &gss : nullptr, r.head, r.length);
  OperationTrace& op = OperationOfCall(h, have_gss ? &gss : nullptr);
  if (compound_.has_sequence && !compound_.opcodes.empty()) Sequence(c, compound_);
  ++op.calls;
  op.call_bytes += r.length;
  if (context != SIZE_MAX) {
    ContextTrace& x = trace_.contexts[context];
    if (gss.proc == rpc::kGssDestroy) {
      ++x.destroys;
    } else if (gss.seq >= rpc::kMaxGssSeq) {
      ++x.at_maxseq;  // CTXPROBLEM before any window (RFC 2203 5.3.3.1)
    } else {
      x.service = rpc::GssServiceName(gss.service);
      DataCall(c, context, gss.seq);
    }
  }
  if (auto it = c.waiting.find(h.xid); it != c.waiting.end()) {
    ++ct.retransmissions;
    if (it->second.context != SIZE_MAX) ++trace_.contexts[it->second.context].retransmissions;
    return;
  }
  Wait(c, h.xid, r.last_ts_ns, &op, context, init_after);
  if (context != SIZE_MAX && gss.proc == rpc::kGssData && gss.seq < rpc::kMaxGssSeq) {
    ContextTrace& x = trace_.contexts[context];
    const size_t waiting = context_waiting_[context];
    x.most_in_flight = std::max(x.most_in_flight, waiting);
    x.in_flight.Add(TraceValue(waiting));
    x.in_flight_over_time.Add(r.last_ts_ns,
                              static_cast<uint32_t>(std::min<size_t>(waiting, UINT32_MAX)));
    if (x.in_flight.count() % 4096 == 0) x.in_flight.Compact();
  }
}

void RpcTraceBuilder::Wait(Conn& c, uint32_t xid, int64_t sent_ns, OperationTrace* op,
                           size_t context, const char* init_after) {
  ConnectionTrace& ct = trace_.connections[c.index];
  const uint64_t serial = next_serial_++;
  c.waiting.emplace(xid, Waiting{sent_ns, op, context, serial, init_after, c.answered});
  c.order.emplace_back(serial, xid);
  ++waiting_;
  if (context != SIZE_MAX) ++context_waiting_[context];
  // Beyond the bounds the oldest call of this connection is given up.
  while (!c.order.empty() && (c.waiting.size() > kMaxOutstanding || waiting_ > kMaxWaiting)) {
    const auto [oldest, oldest_xid] = c.order.front();
    c.order.pop_front();
    auto it = c.waiting.find(oldest_xid);
    if (it != c.waiting.end() && it->second.serial == oldest) {
      PassedOver(c, it->second);
      Forget(it->second);
      c.waiting.erase(it);
      ++ct.outstanding_given_up;
    }
  }
  // Calls answered since are dropped from the front; when answered ones
  // behind an old unanswered call pile up, the line is made again.
  auto live = [&](const std::pair<uint64_t, uint32_t>& e) {
    auto it = c.waiting.find(e.second);
    return it != c.waiting.end() && it->second.serial == e.first;
  };
  while (!c.order.empty() && !live(c.order.front())) c.order.pop_front();
  if (c.order.size() > 2 * c.waiting.size() + 1024) {
    std::deque<std::pair<uint64_t, uint32_t>> kept;
    for (const auto& e : c.order) {
      if (live(e)) kept.push_back(e);
    }
    c.order.swap(kept);
  }
  ct.most_outstanding = std::max(ct.most_outstanding, c.waiting.size());
}

void RpcTraceBuilder::Reply(Conn& c, const RecordSeen& r) {
  ConnectionTrace& ct = trace_.connections[c.index];
  rpc::ReplyHeader h;
  if (!rpc::DecodeReplyHeader(r.head, &h).ok()) {
    ++ct.unreadable_replies;
    return;
  }
  auto it = c.waiting.find(h.xid);
  if (it == c.waiting.end()) {
    ++ct.unmatched_replies;
    return;
  }
  ++ct.replies;
  ++c.answered;
  OperationTrace& op = *it->second.operation;
  ++op.replies;
  op.reply_bytes += r.length;
  const int64_t took = std::max<int64_t>(0, r.last_ts_ns - it->second.sent_ns);
  op.response_ns.Add(TraceValue(static_cast<uint64_t>(took)));
  if (op.replies % 4096 == 0) op.response_ns.Compact();
  if (rpc::ContextGone(h)) {
    if (ClientEvents* e = EventsOf(ct.client)) e->problem = true;
    if (it->second.context != SIZE_MAX) ++trace_.contexts[it->second.context].context_problems;
  }
  if (it->second.init_after) Created(r, h, it->second.init_after);
  Forget(it->second);
  c.waiting.erase(it);
}

void RpcTraceBuilder::Created(const RecordSeen& r, const rpc::ReplyHeader& h, const char* after) {
  rpc::GssInitRes res;
  if (h.reply_stat != rpc::kMsgAccepted || h.accept_stat != rpc::kSuccess ||
      h.body_offset > r.head.size() ||
      !rpc::DecodeGssInitRes(r.head.subspan(h.body_offset), &res).ok() ||
      res.major != rpc::kGssComplete || res.handle.empty()) {
    return;  // refused, not complete yet (CONTINUE_NEEDED), or not captured
  }
  const size_t i = ContextOf(res.handle);
  if (i == SIZE_MAX) return;
  ContextTrace& x = trace_.contexts[i];
  if (x.created) return;
  x.created = true;
  x.announced_window = res.seq_window;
  x.created_after = after;
  ++trace_.contexts_created_after[after];
}

void RpcTraceBuilder::PassedOver(const Conn& c, const Waiting& w) {
  ConnectionTrace& ct = trace_.connections[c.index];
  if (c.answered - w.answered_before > 2 * ct.most_outstanding + kPassedOverSlack) {
    ++ct.passed_over;
  }
}

void RpcTraceBuilder::Forget(const Waiting& w) {
  --waiting_;
  if (w.context != SIZE_MAX) --context_waiting_[w.context];
}

void RpcTraceBuilder::Close(Conn& c) {
  c.tcp.Finish();
  ConnectionTrace& ct = trace_.connections[c.index];
  ct.outstanding_at_end = c.waiting.size();
  for (const auto& [xid, w] : c.waiting) {
    PassedOver(c, w);
    Forget(w);
  }
  ct.from_client = c.tcp.from_client();
  ct.from_server = c.tcp.from_server();
  ct.client_records = c.tcp.client_records();
  ct.server_records = c.tcp.server_records();
  live_.erase({ct.client, ct.server});  // destroys c
}

RpcTrace RpcTraceBuilder::Finish(const CaptureCounts& capture) {
  while (!live_.empty()) Close(*live_.begin()->second);
  trace_.capture = capture;
  for (auto& [key, op] : trace_.operations) op.response_ns.Compact();
  for (ContextTrace& x : trace_.contexts) {
    x.lag.Compact();
    x.in_flight.Compact();
  }
  return std::move(trace_);
}

Status CheckTraceOptions(const TraceOptions& options) {
  for (uint16_t port : options.smb_ports) {
    if (options.rpc_ports.count(port)) {
      return Status::InvalidArgument("trace: port " + std::to_string(port) +
                                     " is given both for RPC and for SMB");
    }
  }
  if (options.windows.empty())
    return Status::InvalidArgument("trace: no window to count drops for");
  for (size_t i = 0; i < options.windows.size(); ++i) {
    const uint32_t w = options.windows[i];
    if (w < 1 || w > kMaxWindow) {
      return Status::InvalidArgument("trace: a window of " + std::to_string(w) + " is outside 1.." +
                                     std::to_string(kMaxWindow));
    }
    if (i > 0 && w <= options.windows[i - 1]) {
      return Status::InvalidArgument("trace: the windows must ascend");
    }
  }
  return Status::Ok();
}

const char* CaptureSideName(CaptureSide side) {
  switch (side) {
    case CaptureSide::kClient: return "client";
    case CaptureSide::kServer: return "server";
    case CaptureSide::kUnknown: break;
  }
  return "unknown";
}

SideGuess GuessSide(const RpcTrace& t) {
  SideGuess g;
  std::vector<int64_t> to_synack, to_ack;
  for (const ConnectionTrace& c : t.connections) {
    if (c.synack_to_ack_ns < 0) continue;
    to_synack.push_back(c.syn_to_synack_ns);
    to_ack.push_back(c.synack_to_ack_ns);
  }
  g.handshakes = to_synack.size();
  if (g.handshakes == 0) {
    g.how = "no connection's handshake was captured";
    return g;
  }
  auto median = [](std::vector<int64_t>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  g.syn_to_synack_ns = median(to_synack);
  g.synack_to_ack_ns = median(to_ack);
  auto longer = [](int64_t a, int64_t b) {
    return static_cast<double>(a) >= SideGuess::kSideFactor * static_cast<double>(b) &&
           a - b >= SideGuess::kSideMinGapNs;
  };
  if (longer(g.syn_to_synack_ns, g.synack_to_ack_ns)) g.side = CaptureSide::kClient;
  if (longer(g.synack_to_ack_ns, g.syn_to_synack_ns)) g.side = CaptureSide::kServer;
  g.how = "guessed from " + std::to_string(g.handshakes) + " handshake(s): SYN to SYN-ACK " +
          common::Fmt("%.1f", static_cast<double>(g.syn_to_synack_ns) / 1e3) +
          " us, SYN-ACK to ACK " +
          common::Fmt("%.1f", static_cast<double>(g.synack_to_ack_ns) / 1e3) + " us (medians)";
  if (g.side == CaptureSide::kUnknown) {
    g.how += ": neither is " + common::Fmt("%g", SideGuess::kSideFactor) + " times the other and " +
             common::Fmt("%.0f", static_cast<double>(SideGuess::kSideMinGapNs) / 1e3) +
             " us longer";
  } else {
    g.how += ": the round trip lies between " +
             std::string(g.side == CaptureSide::kClient ? "SYN and SYN-ACK" : "SYN-ACK and ACK");
  }
  return g;
}

uint64_t TraceValue(uint64_t v) {
  uint64_t unit = 1;
  while (v / unit >= 1000) unit *= 10;
  return v / unit * unit;
}

void TraceBuilder::Add(const TcpSegment& s) {
  if (first_ts_ns_ < 0) first_ts_ns_ = s.ts_ns;
  last_ts_ns_ = std::max(last_ts_ns_, s.ts_ns);
  if (smb_.Wants(s)) {
    smb_.Add(s);
  } else {
    rpc_.Add(s);
  }
}

RpcTrace TraceBuilder::Finish(const CaptureCounts& counts) {
  RpcTrace t = rpc_.Finish(counts);
  t.smb = smb_.Finish();
  if (first_ts_ns_ >= 0) {
    t.first_ts_ns = first_ts_ns_;
    t.last_ts_ns = last_ts_ns_;
  }
  return t;
}

Result<RpcTrace> TraceCapture(const std::string& path, const TraceOptions& options,
                              const TraceProgress& progress) {
  SECMODE_RETURN_IF_ERROR(CheckTraceOptions(options));
  SECMODE_ASSIGN_OR_RETURN(std::unique_ptr<CaptureReader> reader, CaptureReader::Open(path));
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  const bool report = progress.report && !ec;  // no progress of a file of unknown size
  TraceBuilder builder(options);
  TcpSegment s;
  auto last = std::chrono::steady_clock::now();
  for (uint64_t n = 1;; ++n) {
    SECMODE_ASSIGN_OR_RETURN(const bool more, reader->Next(&s));
    if (!more) break;
    builder.Add(s);
    if (report && n % 1024 == 0) {
      const auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - last).count() >= progress.every_s) {
        progress.report(std::min(reader->offset(), size), size);
        last = now;
      }
    }
  }
  if (report) progress.report(size, size);
  return builder.Finish(reader->counts());
}

}  // namespace secmode::trace
