// Where the RPC server says what it did to a client beyond answering it (a
// connection refused at a cap or evicted for a newcomer, a deadline that
// closed a connection, one reset for memory, a context evicted from a full table), and how often.
//
// LogSink receives one line without a trailing newline; an empty sink means
// standard error. RateLimitedLog lets through at most one line per kind per
// interval and says, in the next line of that kind, how many it held back:
// a hostile client must not be able to turn the log into its amplifier.
//
// Thread safety: RateLimitedLog::Say may be called from any thread.
#ifndef SECMODE_RPC_SERVER_LOG_H_
#define SECMODE_RPC_SERVER_LOG_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace secmode::rpc {

using LogSink = std::function<void(const std::string& line)>;

// Kinds of server log line, each limited on its own.
enum class LogKind {
  kConnectionCap,   // a connection refused at --max-connections
  kHostCap,         // a connection refused at --max-connections-per-host
  kEviction,        // an idle connection closed to admit a new one at --max-connections
  kMemory,          // a connection reset to bring the server back under --max-memory
  kAcceptError,     // accept() failed (EMFILE, ENOBUFS ...) or no thread could start
  kIdleDeadline,    // a connection closed by the idle deadline
  kRecordDeadline,  // a connection closed by the partial-record deadline
  kSendDeadline,    // a connection reset by the send deadline
  kContextTable,    // the context table was full: contexts evicted
  kCount,
};

class RateLimitedLog {
 public:
  explicit RateLimitedLog(LogSink sink = nullptr, uint64_t interval_ns = 1000000000ull)
      : sink_(std::move(sink)), interval_ns_(interval_ns) {}
  // Writes "prefix: line" (plus "(N similar lines held back)") unless a
  // line of this kind went out less than the interval ago. `line` is built
  // only when it will be written.
  void Say(LogKind kind, const std::function<std::string()>& line);
  // Writes one line now, outside any limit (start-up notes).
  void Note(const std::string& line);
  // Lines of `kind` asked for so far (written or held back).
  uint64_t count(LogKind kind) const { return asked_[static_cast<int>(kind)].load(); }

 private:
  LogSink sink_;
  uint64_t interval_ns_;
  std::mutex mu_;
  uint64_t last_ns_[static_cast<int>(LogKind::kCount)] = {};
  uint64_t held_[static_cast<int>(LogKind::kCount)] = {};
  std::atomic<uint64_t> asked_[static_cast<int>(LogKind::kCount)] = {};
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_SERVER_LOG_H_
