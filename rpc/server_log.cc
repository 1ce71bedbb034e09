#include "rpc/server_log.h"

#include <iostream>

#include "common/clock.h"

namespace secmode::rpc {

void RateLimitedLog::Note(const std::string& line) {
  const std::string text = "rpc server: " + line;
  if (sink_) {
    sink_(text);
  } else {
    std::cerr << text << std::endl;
  }
}

void RateLimitedLog::Say(LogKind kind, const std::function<std::string()>& line) {
  const int k = static_cast<int>(kind);
  asked_[k]++;
  uint64_t held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t now = common::NowNs();
    if (last_ns_[k] != 0 && now - last_ns_[k] < interval_ns_) {
      held_[k]++;
      return;
    }
    last_ns_[k] = now;
    held = held_[k];
    held_[k] = 0;
  }
  std::string text = line();
  if (held > 0) text += " (" + std::to_string(held) + " similar lines held back)";
  Note(text);
}

}  // namespace secmode::rpc
