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

CallTrace::CallTrace(size_t capacity) : client_(capacity), server_(capacity), conn_(capacity) {}

void CallTrace::Record(const ClientCallEvent& e) {
  const size_t i = client_n_.fetch_add(1, std::memory_order_relaxed);
  if (i < client_.size()) {
    client_[i] = e;
  } else {
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

void CallTrace::Record(const ServerCallEvent& e) {
  const size_t i = server_n_.fetch_add(1, std::memory_order_relaxed);
  if (i < server_.size()) {
    server_[i] = e;
  } else {
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

void CallTrace::Record(const ConnEvent& e) {
  const size_t i = conn_n_.fetch_add(1, std::memory_order_relaxed);
  if (i < conn_.size()) {
    conn_[i] = e;
  } else {
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

std::vector<ClientCallEvent> CallTrace::client_events() const {
  const size_t n = std::min(client_n_.load(), client_.size());
  return {client_.begin(), client_.begin() + static_cast<std::ptrdiff_t>(n)};
}

std::vector<ServerCallEvent> CallTrace::server_events() const {
  const size_t n = std::min(server_n_.load(), server_.size());
  return {server_.begin(), server_.begin() + static_cast<std::ptrdiff_t>(n)};
}

std::vector<ConnEvent> CallTrace::conn_events() const {
  const size_t n = std::min(conn_n_.load(), conn_.size());
  return {conn_.begin(), conn_.begin() + static_cast<std::ptrdiff_t>(n)};
}

}  // namespace secmode::rpc
