// Status and Result<T>: how every module reports failure without exceptions.
//
// A Status is either OK or carries a Code and a message that names the cause
// ("truncated token: 12 bytes, need at least 16"). Result<T> holds a T or a
// non-OK Status. Both are plain values: copyable, movable, not thread-shared.
#ifndef SECMODE_COMMON_STATUS_H_
#define SECMODE_COMMON_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace secmode::common {

enum class Code {
  kOk,
  kInvalidArgument,  // the caller passed something malformed or out of range
  kCorrupt,          // input bytes are not what the protocol allows
  kAuthFailed,       // a checksum, MIC or AEAD tag did not verify
  kReplay,           // a sequence number was seen before or is below the window
  kExhausted,        // a nonce or sequence space is used up
  kUnavailable,      // a needed program, peer or resource is not there
  kIoError,          // a system call failed
  kInternal,         // a library returned something it promised not to
};

const char* CodeName(Code code);

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return Status(Code::kInvalidArgument, std::move(m));
  }
  static Status Corrupt(std::string m) { return Status(Code::kCorrupt, std::move(m)); }
  static Status AuthFailed(std::string m) { return Status(Code::kAuthFailed, std::move(m)); }
  static Status Replay(std::string m) { return Status(Code::kReplay, std::move(m)); }
  static Status Exhausted(std::string m) { return Status(Code::kExhausted, std::move(m)); }
  static Status Unavailable(std::string m) { return Status(Code::kUnavailable, std::move(m)); }
  static Status IoError(std::string m) { return Status(Code::kIoError, std::move(m)); }
  static Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "auth-failed: bad checksum" or "ok".
  std::string ToString() const;

  // Returns a copy whose message is "context: message".
  Status Annotate(const std::string& context) const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "Result built from an OK status has no value");
    if (status_.ok()) status_ = Status::Internal("Result from OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace secmode::common

#define SECMODE_CONCAT_INNER_(a, b) a##b
#define SECMODE_CONCAT_(a, b) SECMODE_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define SECMODE_RETURN_IF_ERROR(expr)                   \
  do {                                                  \
    ::secmode::common::Status secmode_status_ = (expr); \
    if (!secmode_status_.ok()) return secmode_status_;  \
  } while (0)

// `SECMODE_ASSIGN_OR_RETURN(auto x, F())` declares x from a Result or returns
// its Status.
#define SECMODE_ASSIGN_OR_RETURN(lhs, expr) \
  SECMODE_ASSIGN_OR_RETURN_IMPL_(SECMODE_CONCAT_(secmode_result_, __LINE__), lhs, expr)
#define SECMODE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#endif  // SECMODE_COMMON_STATUS_H_
