#include "rpc/call_trace.h"

#include <algorithm>

namespace secmode::rpc {

uint64_t TraceContextId(common::ByteView handle) {
  if (handle.empty()) return 0;
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : handle) {
    h ^= b;
    h *= 1099511628211ull;
  }
  return h;
}

const char* TraceThreadName(TraceThread t) {
  switch (t) {
    case TraceThread::kStart: return "start";
    case TraceThread::kReceiver: return "client receiver";
    case TraceThread::kSender: return "client sender";
    case TraceThread::kMonitor: return "client retransmit timer";
    case TraceThread::kServerConn: return "server connection thread";
    case TraceThread::kServerWorker: return "server worker";
  }
  return "?";
}

CallTrace::CallTrace(size_t capacity) : client_(capacity), server_(capacity), setup_(capacity) {}

template <typename Event>
void CallTrace::Put(Log<Event>& log, const Event& e) {
  const size_t i = log.n.fetch_add(1, std::memory_order_relaxed);
  if (i < log.events.size()) {
    log.events[i] = e;
  } else {
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

template <typename Event>
std::vector<Event> CallTrace::Kept(const Log<Event>& log) {
  const size_t n = std::min(log.n.load(), log.events.size());
  return {log.events.begin(), log.events.begin() + static_cast<std::ptrdiff_t>(n)};
}

void CallTrace::Record(const ClientCallEvent& e) { Put(client_, e); }
void CallTrace::Record(const ServerCallEvent& e) { Put(server_, e); }
void CallTrace::Record(const SetupEvent& e) { Put(setup_, e); }

std::vector<ClientCallEvent> CallTrace::client_events() const { return Kept(client_); }
std::vector<ServerCallEvent> CallTrace::server_events() const { return Kept(server_); }
std::vector<SetupEvent> CallTrace::setup_events() const { return Kept(setup_); }

}  // namespace secmode::rpc
