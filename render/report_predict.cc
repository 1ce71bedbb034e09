#include "render/report_predict.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "common/format.h"

namespace secmode::render {

using common::Fmt;

namespace {

std::string Signed(const char* format, double v) {
  std::string s = Fmt(format, v);
  if (v > 0) s.insert(s.begin(), '+');
  return s;
}

}  // namespace

std::string PredictionsText(const nlohmann::json& doc) {
  std::ostringstream out;
  const nlohmann::json& src = doc.value("source", nlohmann::json::object());
  out << "Costs: " << src.value("results", "?") << " (" << src.value("cpu_model", "?") << ", "
      << src.value("started_at", "?") << ")\n";
  const nlohmann::json& env = doc.value("environment", nlohmann::json::object());
  auto rate = [](double bytes_per_s) {
    return bytes_per_s > 0 ? Fmt("%.0f", bytes_per_s * 8 / 1e6) + " Mbit/s" : "unlimited";
  };
  out << "Environment: RTT " << Fmt("%g", env.value("rtt_ms", 0.0)) << " ms, link c->s "
      << rate(env.value("c2s_bytes_per_s", 0.0)) << ", s->c "
      << rate(env.value("s2c_bytes_per_s", 0.0)) << ", " << env.value("connections", 0)
      << " connection(s), " << env.value("slots", 0) << " slots, client cores "
      << env.value("client_cores", 0) << ", server cores " << env.value("server_cores", 0)
      << ", storage " << Fmt("%g", env.value("storage_ms", 0.0)) << " ms, TCP window "
      << env.value("tcp_window_bytes", 0) << " B per connection\n"
      << "Protocol CPU without security: " << env.value("protocol_cost_source", "?") << "\n";
  for (const auto& w : doc.value("warnings", nlohmann::json::array())) {
    out << "warning: " << w.get<std::string>() << "\n";
  }
  std::string job;
  std::vector<std::vector<std::string>> table;
  auto flush = [&] {
    if (table.empty()) return;
    std::vector<size_t> width(table[0].size(), 0);
    for (const auto& r : table) {
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    }
    for (const auto& r : table) {
      for (size_t i = 0; i < r.size(); ++i) {
        const std::string pad(width[i] - r[i].size(), ' ');
        if (i == 0) {
          out << r[i] << pad;
        } else {
          out << "  " << pad << r[i];
        }
      }
      out << "\n";
    }
    table.clear();
  };
  for (const auto& row : doc.value("predictions", nlohmann::json::array())) {
    const std::string this_job = row.value("job", "") + ": " + row.value("workload", "");
    if (this_job != job) {
      flush();
      job = this_job;
      out << "\n" << job << "\n";
      table.push_back({"mode", "IOPS", "MB/s", "mean ms", "p99 ms (est.)", "bottleneck",
                       "IOPS vs sys", "latency vs sys"});
    }
    const bool base = row.value("mode", "") == "sys";
    table.push_back(
        {row.value("mode", ""), Fmt("%.0f", row.value("iops", 0.0)),
         Fmt("%.1f", row.value("mb_per_s", 0.0)), Fmt("%.3f", row.value("mean_latency_ms", 0.0)),
         Fmt("%.3f", row.value("p99_latency_ms_estimate", 0.0)), row.value("bottleneck", ""),
         base ? "-" : Signed("%.1f", row.value("iops_change_pct", 0.0)) + "%",
         base ? "-" : Signed("%.3f", row.value("latency_change_ms", 0.0)) + " ms"});
  }
  flush();
  return out.str();
}

}  // namespace secmode::render
