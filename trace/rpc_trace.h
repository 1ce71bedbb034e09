// What a capture's ONC RPC traffic did (`secmode trace`): calls matched to
// their replies by XID on each connection, and for every RPCSEC_GSS context
// (RFC 2203), over every connection that carries it, the sequence numbers of
// its DATA calls in the order the capture has them.
//
// A call's lag is the highest sequence number of its context seen before it
// minus its own (0 when it is the highest so far). A server with a window of
// W (RFC 2203 5.3.3.1) would have dropped the calls whose number is W or
// more below the highest before them: each window is a rpc::SequenceWindow
// fed the calls in capture order, the same check the RPC server and the
// simulator make; a number at or above MAXSEQ, which the server answers
// with CTXPROBLEM before its window (rpc/server_core.h), is counted apart
// and never reaches the windows. A number seen before and still inside a
// window is a duplicate there, which a server drops too. Where the capture
// was taken changes what that order is (a client's order of sending, a
// server's of arrival); a server that reorders calls on its threads after
// they arrive drops more than the capture's order shows. A call is judged
// where its record ends in its connection's stream: one that waited behind
// a hole in the capture (TcpDirection) is judged when the hole is given up.
//
// Connections are told apart by their two endpoints; a client's SYN starts
// a new one unless it repeats the SYN the connection began with. A
// connection is RPC when one of its ports is a server port given (2049 by
// default) or when the first bytes one side sends are a record mark and a
// call header (TraceCapture hands the connections on an SMB port to
// trace/smb_trace.h instead); a direction whose start the capture missed (no SYN) is
// searched for its first record (RecordWalker::Seek). Memory is held by
// caps, not by the file's length: at most kMaxConnections connections are
// read (the segments of later ones are counted), each with at most
// kMaxOutstanding calls waiting for a reply, and kMaxWaiting over all of
// them (beyond either, the connection adding a call gives up its oldest,
// counted); kPendingBudget bytes waiting behind holes over all of them;
// kMaxContexts contexts with windows of at most kMaxWindow; kMaxOperations
// operations (by name and mode); kMaxSessions NFSv4.1 sessions; the
// connections each context and session was seen on and each session's
// slots, kMaxMemberships entries over all of them (beyond it, counted); the
// clients whose INITs are followed, kMaxConnections. The lags, calls in
// flight and response times are counts of distinct values (TraceValue:
// exact below 1000, three significant digits above, so at most about 9,000
// values each; the largest lag exactly). A call whose reply the capture
// does not hold (a filter on one direction) stays in flight until its
// connection gives it up (kMaxOutstanding) or ends.
//
// Thread safety: none.
#ifndef SECMODE_TRACE_RPC_TRACE_H_
#define SECMODE_TRACE_RPC_TRACE_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/latency.h"
#include "common/status.h"
#include "rpc/nfs4_ops.h"
#include "rpc/rpc_msg.h"
#include "rpc/sequence_window.h"
#include "trace/capture.h"
#include "trace/most_over_time.h"
#include "trace/rpc_records.h"
#include "trace/smb_trace.h"

namespace secmode::trace {

inline constexpr uint32_t kMaxWindow = 4096;

// Where the capture was taken: the client's order of sending or the server's
// order of arrival, which is what a lag there means.
enum class CaptureSide { kUnknown, kClient, kServer };
const char* CaptureSideName(CaptureSide side);  // "client", "server", "unknown"

struct TraceOptions {
  std::set<uint16_t> rpc_ports = {2049};
  // Server ports whose connections carry SMB2/3 (trace/smb_trace.h); none
  // of them an RPC port.
  std::set<uint16_t> smb_ports = {445};
  CaptureSide side = CaptureSide::kUnknown;  // kUnknown: guessed (GuessSide)
  // The windows whose would-be drops are counted, ascending, each 1 to
  // kMaxWindow.
  std::vector<uint32_t> windows = {16, 32, 64, 128};
};

// A lag's bin in ContextTrace::lag_histogram: 0, 1, 2-3, 4-7, ... (bin b
// from 2^(b-1) to 2^b - 1), the last from kMaxWindow on, so a window of 2^k
// drops the calls of the bins from k + 1 on.
inline constexpr size_t kLagBins = 14;
static_assert(std::bit_width(kMaxWindow) == kLagBins - 1);
inline size_t LagBin(uint32_t lag) {
  return std::min<size_t>(static_cast<size_t>(std::bit_width(lag)), kLagBins - 1);
}

// One RPCSEC_GSS context.
struct ContextTrace {
  std::string handle;            // hex
  std::string service;           // of its last DATA call: none, integrity, privacy
  uint64_t calls = 0;            // DATA calls
  std::set<size_t> connections;  // indexes into RpcTrace::connections
  common::LatencySamples lag;    // one per DATA call (TraceValue)
  uint32_t max_lag = 0;
  std::array<uint64_t, kLagBins> lag_histogram{};  // calls per LagBin
  uint64_t lagging = 0;                            // calls below the highest number before them
  uint64_t at_maxseq = 0;                     // numbers at or above MAXSEQ (not in the windows)
  std::map<uint32_t, uint64_t> below_window;  // window -> calls it would have dropped
  std::map<uint32_t, uint64_t> duplicates;    // window -> numbers seen again inside it
  uint64_t retransmissions = 0;               // calls sent again with their XID
  // Calls of the context waiting for a reply, over all its connections, as
  // each of its DATA calls was sent (itself included): the slots it really
  // used (TraceValue).
  common::LatencySamples in_flight;
  size_t most_in_flight = 0;
  MostOverTime in_flight_over_time;  // the same, the most in each stretch of time
  uint64_t context_problems = 0;     // replies denied CREDPROBLEM or CTXPROBLEM
  // Made in the capture: its INIT's reply (RFC 2203 5.2.3.1) was seen, with
  // the window the server announced, and what came before that INIT since
  // the one before it: "a context problem reply", "a disconnect", "nothing".
  bool created = false;
  uint32_t announced_window = 0;
  std::string created_after;
  uint64_t destroys = 0;
};

struct ConnectionTrace {
  Endpoint client, server;
  int64_t first_ts_ns = 0, last_ts_ns = 0;
  uint64_t calls = 0, replies = 0, retransmissions = 0, unmatched_replies = 0;
  uint64_t unreadable_calls = 0, unreadable_replies = 0;  // header not captured
  size_t most_outstanding = 0;                            // calls waiting for a reply at once
  // Its RPCSEC_GSS DATA calls (numbers below MAXSEQ) and the sum of their
  // lags: how far this connection's calls fell behind the others' of their
  // contexts.
  uint64_t data_calls = 0, data_lag_total = 0;
  size_t outstanding_at_end = 0;
  // Of the calls never answered (given up or left at the end), those sent
  // before more than twice its most calls outstanding (plus
  // kPassedOverSlack) were answered: not slow but dropped, where a server
  // drops calls below its window without a word.
  uint64_t passed_over = 0;
  uint64_t outstanding_given_up = 0;  // beyond kMaxOutstanding
  bool closed = false, reset = false;
  bool ended_by_server = false;  // the first FIN or RST seen was the server's
  // The handshake's two gaps where all of it was captured (else -1): SYN to
  // SYN-ACK and SYN-ACK to the client's ACK.
  int64_t syn_to_synack_ns = -1, synack_to_ack_ns = -1;
  DirectionCounts from_client, from_server;
  RecordCounts client_records, server_records;
};

// One NFSv4.1 session, from the SEQUENCE that begins its COMPOUNDs where
// their arguments are in clear (RFC 8881 18.46): which slots the client used
// and how often it sent a slot's sequence id again (a retry of that slot's
// last request, which the server answers from its reply cache).
struct SessionTrace {
  std::string id;  // hex
  uint64_t calls = 0;
  std::set<size_t> connections;  // indexes into RpcTrace::connections
  size_t slots_used = 0;         // distinct slot ids (followed up to kMaxMemberships)
  uint32_t highest_slot = 0;     // the highest slot id used
  uint32_t highest_stated = 0;   // the highest sa_highest_slotid the client stated
  uint64_t repeats = 0;          // a slot's last sequence id sent again
};

// Calls of one program, version and procedure (for an NFSv4 COMPOUND whose
// arguments are in clear, of one minor version and list of operations) in
// one mode (its credential: sys, rpcsec_gss integrity, ...).
struct OperationTrace {
  uint64_t calls = 0, replies = 0, call_bytes = 0, reply_bytes = 0;
  common::LatencySamples response_ns;  // the call's last byte to the reply's last byte (TraceValue)
};

struct RpcTrace {
  CaptureCounts capture;
  std::vector<ConnectionTrace> connections;
  std::vector<ContextTrace> contexts;
  // (operation, mode): ("NFSv4.1 SEQUENCE PUTFH READ", "rpcsec_gss integrity"),
  // ("NFSv4 COMPOUND (sealed)", "rpcsec_gss privacy"), ("NFSv3 READ", "sys") ...
  std::map<std::pair<std::string, std::string>, OperationTrace> operations;
  std::vector<SessionTrace> sessions;
  uint64_t gss_init_calls = 0;  // INIT and CONTINUE_INIT
  // Contexts made in the capture, by what came before their INIT.
  std::map<std::string, uint64_t> contexts_created_after;
  uint64_t connections_not_rpc = 0, contexts_over_limit = 0, sessions_over_limit = 0;
  uint64_t memberships_over_limit = 0;  // connections and slots not followed (kMaxMemberships)
  uint64_t segments_over_limit = 0;     // of connections beyond kMaxConnections, not read
  int64_t first_ts_ns = 0, last_ts_ns = 0;
  SmbTrace smb;  // the connections on TraceOptions::smb_ports
};

class RpcTraceBuilder {
 public:
  static constexpr size_t kMaxConnections = 16384;
  static constexpr size_t kMaxOutstanding = 65536;
  static constexpr size_t kMaxWaiting = 1u << 20;
  static constexpr size_t kPendingBudget = 64u << 20;
  static constexpr size_t kMaxContexts = 16384;
  static constexpr size_t kMaxOperations = 1024;
  static constexpr size_t kMaxSessions = 16384;
  // Connections of contexts and sessions, and sessions' slots, over all.
  static constexpr size_t kMaxMemberships = size_t{1} << 21;
  static constexpr uint64_t kPassedOverSlack = 16;

  // `options` must be valid (CheckTraceOptions).
  explicit RpcTraceBuilder(TraceOptions options);
  ~RpcTraceBuilder();
  RpcTraceBuilder(const RpcTraceBuilder&) = delete;
  RpcTraceBuilder& operator=(const RpcTraceBuilder&) = delete;

  void Add(const TcpSegment& s);
  // The capture ended: what waits behind holes is handed on; the trace.
  RpcTrace Finish(const CaptureCounts& capture);

 private:
  struct Conn;
  struct Waiting;
  Conn* Start(const TcpSegment& s, bool* from_client);
  void Handshake(Conn& c, const TcpSegment& s, bool from_client);
  void Call(Conn& c, const RecordSeen& r);
  void Reply(Conn& c, const RecordSeen& r);
  void DataCall(Conn& c, size_t context, uint32_t seq);
  void Wait(Conn& c, uint32_t xid, int64_t sent_ns, OperationTrace* op, size_t context,
            const char* init_after);
  void Created(const RecordSeen& r, const rpc::ReplyHeader& h, const char* after);
  // A call no longer waits (answered, given up, its connection gone).
  void Forget(const Waiting& w);
  // Counts `w`, never answered, in ConnectionTrace::passed_over if it was.
  void PassedOver(const Conn& c, const Waiting& w);
  size_t ContextOf(common::ByteView handle);
  // What names the call's operation and mode, as bytes, into scratch_op_
  // (its COMPOUND's operations into compound_ where it names one); `h`
  // decoded through the verifier when `whole_header`.
  void ShapeCall(const rpc::CallHeader& h, bool whole_header, const rpc::GssCred* gss,
                 common::ByteView head, uint64_t length);
  // The operation of that shape: its names are made once per shape.
  OperationTrace& OperationOfCall(const rpc::CallHeader& h, const rpc::GssCred* gss);
  OperationTrace& OperationOf(const std::pair<std::string, std::string>& key);
  void Sequence(Conn& c, const rpc::CompoundOps& ops);
  void Close(Conn& c);

  TraceOptions options_;
  // Before live_: the connections' directions hold parts of it until they go.
  PendingBudget pending_{0, kPendingBudget};
  std::map<std::pair<Endpoint, Endpoint>, std::unique_ptr<Conn>> live_;  // (client, server)
  std::map<std::string, size_t> context_index_;                          // by the handle's bytes
  // Per context, one window per TraceOptions::windows (the same order).
  std::vector<std::vector<rpc::SequenceWindow>> windows_;
  std::vector<size_t> context_waiting_;  // per context, its calls waiting for replies
  // Per client address (at most kMaxConnections), since its last INIT: a
  // reply said a context was gone, a connection that carried DATA calls
  // ended; and what came before that INIT, for its CONTINUE_INITs.
  struct ClientEvents {
    bool problem = false, disconnect = false;
    const char* init_after = "nothing";
  };
  ClientEvents* EventsOf(const Endpoint& client);
  // One more connection or slot followed, if kMaxMemberships allows it
  // (otherwise counted).
  bool TakeMembership();
  size_t memberships_ = 0;
  std::map<std::pair<std::array<uint8_t, 16>, bool>, ClientEvents> client_events_;
  std::set<std::pair<Endpoint, Endpoint>> not_rpc_;  // flows seen that carry no RPC
  std::map<std::array<uint8_t, rpc::kNfs4SessionIdSize>, size_t> session_index_;
  // Per session, each slot's last sequence id.
  std::vector<std::map<uint32_t, uint32_t>> slot_seq_;
  // Operations by the shape of their calls (ShapeCall), at most
  // kMaxOperationKeys shapes (beyond, the names are made for each call).
  static constexpr size_t kMaxOperationKeys = 4 * kMaxOperations;
  std::map<std::string, OperationTrace*> op_index_;
  std::string scratch_op_, scratch_handle_;  // the call's shape and context handle
  uint32_t view_ = 0;                        // how much of its COMPOUND was read
  rpc::CompoundOps compound_;                // its COMPOUND's operations
  size_t waiting_ = 0;                       // calls waiting for replies on all connections
  uint64_t next_serial_ = 0;
  RpcTrace trace_;
};

// The side a capture was taken on, from its handshakes: a client's capture
// has the round trip between its SYN and the SYN-ACK, a server's between its
// SYN-ACK and the client's ACK. The medians of the two gaps over the
// connections whose handshake was captured decide when one is at least
// kSideFactor times the other and longer by kSideMinGapNs (on loopback both
// are a few microseconds: unknown). `how` says what it rests on.
struct SideGuess {
  static constexpr double kSideFactor = 2;
  static constexpr int64_t kSideMinGapNs = 100000;
  CaptureSide side = CaptureSide::kUnknown;
  size_t handshakes = 0;
  int64_t syn_to_synack_ns = 0, synack_to_ack_ns = 0;  // medians
  std::string how;
};
SideGuess GuessSide(const RpcTrace& t);

// A window out of range or out of order is an error (kInvalidArgument).
common::Status CheckTraceOptions(const TraceOptions& options);
// What the lag and response-time distributions keep of a value: itself
// below 1000, else its three leading digits (so that distinct values, and
// the memory they take, stay few).
uint64_t TraceValue(uint64_t v);

// Both builders over one capture: a segment of a connection on one of the
// SMB ports goes to the SMB trace, every other to the RPC trace; the
// capture's first and last time stamps over both. What TraceCapture and the
// fuzz target feed. Thread safety: none.
class TraceBuilder {
 public:
  explicit TraceBuilder(const TraceOptions& options) : rpc_(options), smb_(options.smb_ports) {}
  void Add(const TcpSegment& s);
  RpcTrace Finish(const CaptureCounts& counts);

 private:
  RpcTraceBuilder rpc_;
  SmbTraceBuilder smb_;
  int64_t first_ts_ns_ = -1, last_ts_ns_ = 0;
};

// How far the reading of a capture is: `report` is called with the file's
// bytes read so far and its size about every `every_s` seconds (checked
// every 1024 segments) and once at the end (read == size).
struct TraceProgress {
  std::function<void(uint64_t read, uint64_t size)> report;
  double every_s = 1.0;
};

// Reads a whole capture; errors name the file (and the offset when it is
// damaged: the trace of what came before is then lost, the error says so).
common::Result<RpcTrace> TraceCapture(const std::string& path, const TraceOptions& options,
                                      const TraceProgress& progress = {});

// The trace as JSON (`secmode trace --json`), and that JSON as a table for
// the terminal.
nlohmann::json TraceJson(RpcTrace& t, const TraceOptions& options);
std::string TraceText(const nlohmann::json& trace);

}  // namespace secmode::trace

#endif  // SECMODE_TRACE_RPC_TRACE_H_
