#include "suite/shard.h"

#include <stdexcept>

namespace secmode::suite {

using common::Status;

nlohmann::json Shard::ToJson(size_t grid_points) const {
  return {{"index", index}, {"count", count}, {"grid_points", grid_points}};
}

common::Result<Shard> ParseShard(const std::string& text) {
  Shard s;
  const size_t slash = text.find('/');
  size_t used_i = 0, used_n = 0;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    s.index = std::stoi(text.substr(0, slash), &used_i);
    s.count = std::stoi(text.substr(slash + 1), &used_n);
  } catch (const std::exception&) {
    return Status::InvalidArgument("--shard " + text + ": expected I/N, e.g. 0/4");
  }
  if (used_i != slash || used_n != text.size() - slash - 1) {
    return Status::InvalidArgument("--shard " + text + ": expected I/N, e.g. 0/4");
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) {
    return Status::InvalidArgument("--shard " + text + ": needs 0 <= I < N");
  }
  return s;
}

}  // namespace secmode::suite
