// CallTrace: per-call timestamps along the real RPC path, so that every
// sequence-window violation can be attributed to the delay that caused it
// (which thread held the call, where, for how long).
//
// Off by default: the load generator (LoadOptions::trace) and the TCP server
// (TcpServerOptions::trace) record only when given a trace; otherwise the
// cost is one branch per call. Recording is one atomic increment and a copy
// into preallocated storage; events beyond the capacity are counted, not
// stored.
//
// Client events, one per transmission of a call: its context and sequence
// number, its connection, the thread that numbered it (the receiver thread
// that got the previous reply of the slot, the monitor's retransmit, the
// start) and the one that wrote it, and when it was numbered (just before
// encoding), queued (encoded, handed to the connection: the receiver's batch
// or the skew queue) and written (the send returned).
// Server events, one per call whose sequence number was checked: the
// connection and its thread, when the bytes of the call were read (the recv
// that completed the record returned) and its place in that recv's batch of
// records, when its number was checked, the verdict and the highest number
// seen before, and when the reply was written (0: none).
//
// Set-up events: one per step of replacing a connection (the server shut
// it down, a drop-disconnect; the client's receiver read the end of the
// stream, its new connection's connect returned, it had numbered and
// written the lost calls again; the server's accept returned the new
// connection, and that connection's thread began to run) and of re-creating
// a context (a receiver began the GSS exchange holding the context's lock,
// and finished it). Joined with the call events (the first call written on
// the new connection and the same call at the server), they say how long a
// reconnect or a re-creation took under load and where the time went.
//
// Thread safety: any number of threads record at once; read the events
// after the traced run has stopped.
#ifndef SECMODE_RPC_CALL_TRACE_H_
#define SECMODE_RPC_CALL_TRACE_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "common/bytes.h"
#include "rpc/sequence_window.h"

namespace secmode::rpc {

// A stable id of an RPCSEC_GSS context handle (both ends see the same
// bytes): FNV-1a over the handle; 0 for none.
uint64_t TraceContextId(common::ByteView handle);

// Which thread did something.
enum class TraceThread : uint8_t {
  kStart,         // the load generator's first call of each slot
  kReceiver,      // a client connection's receiver (handles replies, issues next calls)
  kSender,        // a client connection's delay line (LoadOptions::delay_us or the skew)
  kMonitor,       // the client's retransmit timer
  kServerConn,    // a server connection thread (reads, checks, answers)
  kServerWorker,  // a server worker thread
};
const char* TraceThreadName(TraceThread t);

struct ClientCallEvent {
  uint64_t context = 0;
  uint32_t seq = 0;
  uint32_t conn = 0;
  TraceThread numbered_by = TraceThread::kStart;
  uint32_t numbered_by_index = 0;  // connection index of that thread
  TraceThread written_by = TraceThread::kStart;
  uint32_t written_by_index = 0;
  uint64_t numbered_ns = 0, queued_ns = 0, written_ns = 0;
  bool retransmission = false;  // not the first transmission of the operation
  bool reencoded = false;       // re-numbered at transmit
};

struct ServerCallEvent {
  uint64_t context = 0;
  uint32_t seq = 0;
  uint32_t conn = 0;  // the server's connection index (order of accept)
  TraceThread thread = TraceThread::kServerConn;
  uint32_t batch_position = 0;  // records before this one in the same recv
  uint64_t read_ns = 0, checked_ns = 0, replied_ns = 0;
  SeqVerdict verdict = SeqVerdict::kAccept;
  uint32_t highest = 0;  // highest number seen before this check
};

enum class SetupEventKind : uint8_t {
  kServerClosed,         // the server shut the connection down (conn: server index)
  kServerAccepted,       // accept returned it (conn: server index)
  kServerStarted,        // its server thread began to run (conn: server index)
  kClientEof,            // the client's receiver read the end of its stream (conn: client index)
  kClientConnected,      // the connect of its new connection returned (conn: client index)
  kClientResent,         // the lost calls were numbered and written again (conn: client index)
  kClientRecreateBegan,  // a receiver began re-creating its context (conn: client index)
  kClientRecreateDone,   // it had the new context (conn: client index)
};

struct SetupEvent {
  SetupEventKind kind = SetupEventKind::kServerClosed;
  uint32_t conn = 0;
  uint64_t ns = 0;
};

class CallTrace {
 public:
  // Room for `capacity` events of each kind.
  explicit CallTrace(size_t capacity = 1u << 17);
  CallTrace(const CallTrace&) = delete;
  CallTrace& operator=(const CallTrace&) = delete;

  void Record(const ClientCallEvent& e);
  void Record(const ServerCallEvent& e);
  void Record(const SetupEvent& e);

  // The recorded events, in no particular order (after the run).
  std::vector<ClientCallEvent> client_events() const;
  std::vector<ServerCallEvent> server_events() const;
  std::vector<SetupEvent> setup_events() const;
  uint64_t dropped() const { return dropped_.load(); }

 private:
  // Preallocated room for one kind of event; a record beyond it is counted
  // in dropped_.
  template <typename Event>
  struct Log {
    explicit Log(size_t capacity) : events(capacity) {}
    std::vector<Event> events;
    std::atomic<size_t> n{0};
  };
  template <typename Event>
  void Put(Log<Event>& log, const Event& e);
  template <typename Event>
  static std::vector<Event> Kept(const Log<Event>& log);

  Log<ClientCallEvent> client_;
  Log<ServerCallEvent> server_;
  Log<SetupEvent> setup_;
  std::atomic<uint64_t> dropped_{0};
};

// What the server's call path saw of one call (RpcServerCore::HandleCall):
// filled when an RPCSEC_GSS DATA call's number was checked.
struct CallCheck {
  bool checked = false;
  uint64_t context = 0;
  uint32_t seq = 0;
  SeqVerdict verdict = SeqVerdict::kAccept;
  uint32_t highest = 0;  // before the check
  uint64_t checked_ns = 0;
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_CALL_TRACE_H_
