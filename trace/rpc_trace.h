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
// call header; a direction whose start the capture missed (no SYN) is
// searched for its first record (RecordWalker::Seek). Memory is held by
// caps, not by the file's length: at most kMaxConnections connections are
// read (the segments of later ones are counted), each with at most
// kMaxOutstanding calls waiting for a reply, and kMaxWaiting over all of
// them (beyond either, the connection adding a call gives up its oldest,
// counted); kPendingBudget bytes waiting behind holes over all of them;
// kMaxContexts contexts with windows of at most kMaxWindow; kMaxOperations
// operations. The lags and response times are counts of distinct values
// (TraceValue: exact below 1000, three significant digits above, so at most
// about 9,000 values each; the largest lag exactly).
//
// Thread safety: none.
#ifndef SECMODE_TRACE_RPC_TRACE_H_
#define SECMODE_TRACE_RPC_TRACE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/latency.h"
#include "common/status.h"
#include "rpc/sequence_window.h"
#include "trace/capture.h"
#include "trace/rpc_records.h"

namespace secmode::trace {

inline constexpr uint32_t kMaxWindow = 4096;

struct TraceOptions {
  std::set<uint16_t> rpc_ports = {2049};
  // The windows whose would-be drops are counted, ascending, each 1 to
  // kMaxWindow.
  std::vector<uint32_t> windows = {16, 32, 64, 128};
};

// One RPCSEC_GSS context.
struct ContextTrace {
  std::string handle;            // hex
  std::string service;           // of its last DATA call: none, integrity, privacy
  uint64_t calls = 0;            // DATA calls
  std::set<size_t> connections;  // indexes into RpcTrace::connections
  common::LatencySamples lag;    // one per DATA call (TraceValue)
  uint32_t max_lag = 0;
  uint64_t lagging = 0;                       // calls below the highest number before them
  uint64_t at_maxseq = 0;                     // numbers at or above MAXSEQ (not in the windows)
  std::map<uint32_t, uint64_t> below_window;  // window -> calls it would have dropped
  std::map<uint32_t, uint64_t> duplicates;    // window -> numbers seen again inside it
  uint64_t retransmissions = 0;               // calls sent again with their XID
  uint64_t context_problems = 0;              // replies denied CREDPROBLEM or CTXPROBLEM
  uint64_t destroys = 0;
};

struct ConnectionTrace {
  Endpoint client, server;
  int64_t first_ts_ns = 0, last_ts_ns = 0;
  uint64_t calls = 0, replies = 0, retransmissions = 0, unmatched_replies = 0;
  uint64_t unreadable_calls = 0, unreadable_replies = 0;  // header not captured
  size_t most_outstanding = 0;                            // calls waiting for a reply at once
  size_t outstanding_at_end = 0;
  uint64_t outstanding_given_up = 0;  // beyond kMaxOutstanding
  bool closed = false, reset = false;
  DirectionCounts from_client, from_server;
  RecordCounts client_records, server_records;
};

// Calls of one program, version and procedure.
struct OperationTrace {
  uint64_t calls = 0, replies = 0, call_bytes = 0, reply_bytes = 0;
  std::map<std::string, uint64_t> by_flavor;  // sys, none, krb5 (none/integrity/privacy) ...
  common::LatencySamples response_ns;  // the call's last byte to the reply's last byte (TraceValue)
};

struct RpcTrace {
  CaptureCounts capture;
  std::vector<ConnectionTrace> connections;
  std::vector<ContextTrace> contexts;
  std::map<std::string, OperationTrace> operations;  // "100003/4 COMPOUND(1)", ...
  uint64_t gss_init_calls = 0;                       // INIT and CONTINUE_INIT
  uint64_t connections_not_rpc = 0, contexts_over_limit = 0;
  uint64_t segments_over_limit = 0;  // of connections beyond kMaxConnections, not read
  int64_t first_ts_ns = 0, last_ts_ns = 0;
};

class RpcTraceBuilder {
 public:
  static constexpr size_t kMaxConnections = 16384;
  static constexpr size_t kMaxOutstanding = 65536;
  static constexpr size_t kMaxWaiting = 1u << 20;
  static constexpr size_t kPendingBudget = 64u << 20;
  static constexpr size_t kMaxContexts = 16384;
  static constexpr size_t kMaxOperations = 1024;
  static constexpr size_t kMaxConnectionsPerContext = 4096;  // counted up to

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
  Conn* Find(const TcpSegment& s, bool* from_client);
  Conn* Start(const TcpSegment& s, bool* from_client);
  void Call(Conn& c, const RecordSeen& r);
  void Reply(Conn& c, const RecordSeen& r);
  void DataCall(Conn& c, size_t context, uint32_t seq);
  void Wait(Conn& c, uint32_t xid, int64_t sent_ns, OperationTrace* op, size_t context);
  size_t ContextOf(const std::string& handle);
  OperationTrace& OperationOf(uint32_t prog, uint32_t vers, uint32_t proc);
  void Close(Conn& c);

  TraceOptions options_;
  // Before live_: the connections' directions hold parts of it until they go.
  PendingBudget pending_{0, kPendingBudget};
  std::map<std::pair<Endpoint, Endpoint>, std::unique_ptr<Conn>> live_;  // (client, server)
  std::map<std::string, size_t> context_index_;
  // Per context, one window per TraceOptions::windows (the same order).
  std::vector<std::vector<rpc::SequenceWindow>> windows_;
  std::set<std::pair<Endpoint, Endpoint>> not_rpc_;  // flows seen that carry no RPC
  size_t waiting_ = 0;                               // calls waiting for replies on all connections
  uint64_t next_serial_ = 0;
  RpcTrace trace_;
};

// A window out of range or out of order is an error (kInvalidArgument).
common::Status CheckTraceOptions(const TraceOptions& options);
// What the lag and response-time distributions keep of a value: itself
// below 1000, else its three leading digits (so that distinct values, and
// the memory they take, stay few).
uint64_t TraceValue(uint64_t v);

// Reads a whole capture; errors name the file (and the offset when it is
// damaged: the trace of what came before is then lost, the error says so).
common::Result<RpcTrace> TraceCapture(const std::string& path, const TraceOptions& options);

// The trace as JSON (`secmode trace --json`), and that JSON as a table for
// the terminal.
nlohmann::json TraceJson(RpcTrace& t, const TraceOptions& options);
std::string TraceText(const nlohmann::json& trace);

}  // namespace secmode::trace

#endif  // SECMODE_TRACE_RPC_TRACE_H_
