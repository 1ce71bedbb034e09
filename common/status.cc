#include "common/status.h"

namespace secmode::common {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid-argument";
    case Code::kCorrupt: return "corrupt";
    case Code::kAuthFailed: return "auth-failed";
    case Code::kReplay: return "replay";
    case Code::kExhausted: return "exhausted";
    case Code::kUnavailable: return "unavailable";
    case Code::kIoError: return "io-error";
    case Code::kInternal: return "internal";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::Annotate(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace secmode::common
