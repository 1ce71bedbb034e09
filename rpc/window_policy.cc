#include "rpc/window_policy.h"

#include <utility>

namespace secmode::rpc {

namespace {

constexpr std::pair<const char*, WindowPolicy> kPolicies[] = {
    {"drop", WindowPolicy::kDrop},
    {"drop-disconnect", WindowPolicy::kDropDisconnect},
    {"discard-context", WindowPolicy::kDiscardContext}};

}  // namespace

const char* WindowPolicyName(WindowPolicy p) {
  for (const auto& [name, value] : kPolicies) {
    if (value == p) return name;
  }
  return "?";
}

common::Result<WindowPolicy> ParseWindowPolicy(const std::string& name) {
  std::string known;
  for (const auto& [text, value] : kPolicies) {
    if (name == text) return value;
    known += (known.empty() ? "" : ", ") + std::string(text);
  }
  return common::Status::InvalidArgument("reaction: unknown value '" + name + "' (known: " + known +
                                         ")");
}

}  // namespace secmode::rpc
