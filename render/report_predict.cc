#include "render/report_predict.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "common/format.h"
#include "render/markdown.h"
#include "render/report_sections.h"

namespace secmode::render {

using common::Fmt;

namespace {

using common::TerminalText;

// Columns padded to their widest cell; the first left-aligned. Every cell
// through TerminalText (the documents' strings come from results.json and
// the job file).
void PrintTable(std::ostream& out, std::vector<std::vector<std::string>> table) {
  if (table.empty()) return;
  for (auto& r : table) {
    for (auto& cell : r) cell = TerminalText(cell);
  }
  std::vector<size_t> width(table[0].size(), 0);
  for (const auto& r : table) {
    for (size_t i = 0; i < r.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], r[i].size());
    }
  }
  for (const auto& r : table) {
    for (size_t i = 0; i < r.size() && i < width.size(); ++i) {
      const std::string pad(width[i] - r[i].size(), ' ');
      if (i == 0) {
        out << r[i] << pad;
      } else {
        out << "  " << pad << r[i];
      }
    }
    out << "\n";
  }
}

std::string Header(const nlohmann::json& doc) {
  std::ostringstream out;
  const nlohmann::json& src = doc.value("source", nlohmann::json::object());
  out << "Costs: " << TerminalText(src.value("results", "?")) << " ("
      << TerminalText(src.value("cpu_model", "?")) << ", "
      << TerminalText(src.value("started_at", "?")) << ")\n";
  const nlohmann::json& env = doc.value("environment", nlohmann::json::object());
  auto rate = [](double bytes_per_s) {
    return bytes_per_s > 0 ? Fmt("%.0f", bytes_per_s * 8 / 1e6) + " Mbit/s" : "unlimited";
  };
  out << "Environment: RTT " << Fmt("%g", env.value("rtt_ms", 0.0)) << " ms, link c->s "
      << rate(env.value("c2s_bytes_per_s", 0.0)) << ", s->c "
      << rate(env.value("s2c_bytes_per_s", 0.0)) << ", " << env.value("connections", 0)
      << " connection(s), " << env.value("slots", 0) << " slots, client cores "
      << env.value("client_cores", 0) << ", server cores " << env.value("server_cores", 0)
      << (env.value("server_threads", 0) > 0
              ? " (the server works on " + std::to_string(env.value("server_threads", 0)) +
                    " thread(s))"
              : std::string())
      << ", storage " << Fmt("%g", env.value("storage_ms", 0.0)) << " ms, TCP window "
      << env.value("tcp_window_bytes", 0) << " B per connection\n"
      << "Protocol CPU without security: " << TerminalText(env.value("protocol_cost_source", "?"))
      << "\n";
  for (const auto& w : doc.value("warnings", nlohmann::json::array())) {
    out << "warning: " << TerminalText(w.get<std::string>()) << "\n";
  }
  return out.str();
}

std::string Pct(double share) { return Fmt("%.1f", share * 100) + "%"; }

std::string Signed(const char* format, double v) {
  std::string s = Fmt(format, v);
  if (v > 0) s.insert(s.begin(), '+');
  return s;
}

}  // namespace

std::string PredictionsText(const nlohmann::json& doc) {
  std::ostringstream out;
  out << Header(doc);
  std::string job;
  std::vector<std::vector<std::string>> table;
  auto flush = [&] {
    PrintTable(out, table);
    table.clear();
  };
  const std::string baseline = doc.value("baseline", std::string("sys"));
  for (const auto& row : doc.value("predictions", nlohmann::json::array())) {
    const std::string this_job = row.value("job", "") + ": " + row.value("workload", "");
    if (this_job != job) {
      flush();
      job = this_job;
      out << "\n" << TerminalText(job) << "\n";
      table.push_back({"mode", "IOPS", "MB/s", "mean ms", "p99 ms (est.)", "bottleneck",
                       "IOPS vs " + baseline, "latency vs " + baseline});
    }
    const bool base = row.value("mode", "") == baseline;
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

std::string ExplanationText(const nlohmann::json& doc) {
  std::ostringstream out;
  out << Header(doc) << "Job: " << TerminalText(doc.value("workload", "")) << "\n";
  const double baseline = doc.value("baseline_iops", 0.0);
  out << "\nNFS: the published change against sys beside the crypto secmode measured for the "
         "same mode on one operation's path (the four legs' extra over sys at the job's "
         "payloads). The implied sys latency holds if both published runs kept the same I/Os in "
         "flight (Little's law); the demand factor is how much the bottleneck's time per "
         "operation grew; the model's change is secmode predict's for this job.\n\n";
  std::vector<std::vector<std::string>> t = {
      {"mode", "published IOPS", "published latency", "crypto on the path", "share of latency",
       "implied sys latency", "demand factor", "model's IOPS change"}};
  for (const auto& r : doc.value("nfs", nlohmann::json::array())) {
    const bool lat = r.contains("crypto_share_of_latency_change");
    t.push_back({r.value("mode", ""), Fmt("%+.0f", r.value("published_iops_change_pct", 0.0)) + "%",
                 Fmt("%+.1f", r.value("published_latency_change_ms", 0.0)) + " ms",
                 Fmt("%.2f", r.value("crypto_path_us", 0.0)) + " us",
                 lat ? Pct(r.value("crypto_share_of_latency_change", 0.0)) : "-",
                 lat ? Fmt("%.3f", r.value("implied_sys_latency_ms", 0.0)) + " ms" : "-",
                 Fmt("%.2f", r.value("bottleneck_demand_factor", 0.0)) + "x",
                 r.contains("model_iops_change_pct")
                     ? Signed("%.1f", r.value("model_iops_change_pct", 0.0)) + "%"
                     : "-"});
  }
  PrintTable(out, t);
  if (baseline > 0) {
    out << "\nWith sys at " << Fmt("%.0f", baseline)
        << " IOPS: the extra time per operation one stage handling one operation at a time would "
           "add to reach the published rate, the server crypto's share of it, and the rest (what "
           "a serialised stage of that length would fit).\n\n";
    std::vector<std::vector<std::string>> s = {
        {"mode", "published IOPS", "serial stage extra", "server crypto share", "rest"}};
    for (const auto& r : doc.value("nfs", nlohmann::json::array())) {
      s.push_back({r.value("mode", ""), Fmt("%.0f", r.value("published_iops", 0.0)),
                   Fmt("%.2f", r.value("serial_stage_extra_us", 0.0)) + " us",
                   Pct(r.value("crypto_share_of_serial_stage", 0.0)),
                   Fmt("%.2f", r.value("rest_of_serial_stage_us", 0.0)) + " us"});
    }
    PrintTable(out, s);
  }
  const nlohmann::json smb = doc.value("smb", nlohmann::json::array());
  if (!smb.empty()) {
    // The implied figure as the document states it (sim/explain.cc), not recomputed here.
    double implied = 0;
    std::string published;
    for (const auto& r : smb) {
      if (r.contains("implied_client_extra_ms_per_mib")) {
        implied = r.value("implied_client_extra_ms_per_mib", 0.0);
        published = r.value("published", "");
      }
    }
    out << "\nSMB signing (published: " << TerminalText(published) << ", i.e. "
        << Fmt("%.3f", implied)
        << " ms more client time per MiB): each algorithm's measured extra verify time per MiB "
           "and its share.\n\n";
    std::vector<std::vector<std::string>> s = {{"mode", "client extra per MiB", "share"}};
    for (const auto& r : smb) {
      if (!r.contains("crypto_share")) continue;
      s.push_back({r.value("mode", ""),
                   Fmt("%.3f", r.value("client_extra_ms_per_mib", 0.0)) + " ms",
                   Pct(r.value("crypto_share", 0.0))});
    }
    PrintTable(out, s);
    out << "\nSMB encryption (published: 10-15% of read/write throughput, 5% on metadata): the "
           "unencrypted rate at which each cipher's measured extra client time alone costs that "
           "much.\n\n";
    std::vector<std::vector<std::string>> e = {{"mode", "client extra per MiB", "MiB/s for 10%",
                                                "MiB/s for 15%", "metadata op extra",
                                                "ops/s for 5%"}};
    for (const auto& r : smb) {
      if (!r.contains("unencrypted_mib_per_s_for_10pct")) continue;
      e.push_back({r.value("mode", ""),
                   Fmt("%.3f", r.value("client_extra_ms_per_mib", 0.0)) + " ms",
                   Fmt("%.0f", r.value("unencrypted_mib_per_s_for_10pct", 0.0)),
                   Fmt("%.0f", r.value("unencrypted_mib_per_s_for_15pct", 0.0)),
                   r.contains("metadata_client_extra_us")
                       ? Fmt("%.2f", r.value("metadata_client_extra_us", 0.0)) + " us"
                       : "-",
                   r.contains("unencrypted_ops_per_s_for_5pct")
                       ? Fmt("%.0f", r.value("unencrypted_ops_per_s_for_5pct", 0.0))
                       : "-"});
    }
    PrintTable(out, e);
  }
  for (const auto& n : doc.value("notes", nlohmann::json::array())) {
    out << "\nnote: " << TerminalText(n.get<std::string>()) << "\n";
  }
  return out.str();
}

void RenderPredictionsSection(const harness::RunResults& r, const nlohmann::json& section,
                              Rendered& out) {
  std::ostringstream md;
  md << "\n## Predicted workloads (secmode predict)\n\n";
  // One paragraph per protocol: what it assumed, or why it was not predicted.
  auto intro = [&](const char* protocol, const char* env_key, const char* not_run_key,
                   const std::string& baseline, const std::string& extra) {
    if (section.contains(not_run_key)) {
      md << protocol << " not predicted: " << MdText(section.value(not_run_key, "")) << ".\n\n";
      return;
    }
    if (!section.contains(env_key)) return;
    const nlohmann::json env = section.value(env_key, nlohmann::json::object());
    md << protocol << ": what a few fio-like jobs would get on " << MdText(env.value("hosts", ""))
       << ", with " << env.value("connections", 0) << " connections, " << env.value("slots", 0)
       << " slots and a TCP window of " << env.value("tcp_window_bytes", 0)
       << " B per connection: a closed queueing model (sim/workload_model.h) fed with this "
          "run's legs (each mode's extra over "
       << baseline
       << " at the payload each message carries) and the protocol's own CPU per operation ("
       << MdText(env.value("protocol_cost_source", "")) << ")" << extra << ".";
    for (const auto& j : env.value("skipped_jobs", nlohmann::json::array())) {
      md << " Not predicted: " << MdText(j.value("job", "")) << " (" << MdText(j.value("why", ""))
         << ").";
    }
    md << "\n\n";
  };
  intro("NFS", "environment", "not_run", "sys", "");
  intro("SMB", "smb_environment", "smb_not_run", "smb-plain",
        "; the connections are the channels of one session, which the server works on one "
        "thread (as Samba's smbd does), the server's protocol cost all on that thread (what "
        "that cost is: the source above)");
  if (!r.predictions.empty()) {
    md << "p99 is an estimate (queueing as if exponential). `secmode predict --results DIR` "
          "answers for any job and network.\n";
  }
  std::string group;
  for (const auto& row : r.predictions) {
    const std::string baseline = row.value("baseline", std::string("sys"));
    const std::string this_group = baseline + "\n" + row.value("job", "");
    if (this_group != group) {
      group = this_group;
      md << "\n### " << (baseline == "sys" ? "NFS" : "SMB") << ", " << MdText(row.value("job", ""))
         << ": " << MdText(row.value("workload", "")) << "\n\n"
         << "| mode | IOPS | MB/s | mean ms | p99 ms (estimate) | bottleneck | IOPS vs "
         << MdText(baseline) << " | latency vs " << MdText(baseline) << " |\n"
         << "|---|---:|---:|---:|---:|---|---:|---:|\n";
    }
    const bool base = row.value("mode", "") == baseline;
    md << "| " << MdText(row.value("mode", "")) << " | " << Fmt("%.0f", row.value("iops", 0.0))
       << " | " << Fmt("%.1f", row.value("mb_per_s", 0.0)) << " | "
       << Fmt("%.3f", row.value("mean_latency_ms", 0.0)) << " | "
       << Fmt("%.3f", row.value("p99_latency_ms_estimate", 0.0)) << " | "
       << MdText(row.value("bottleneck", "")) << " | "
       << (base ? "-" : Signed("%.1f", row.value("iops_change_pct", 0.0)) + "%") << " | "
       << (base ? "-" : Signed("%.3f", row.value("latency_change_ms", 0.0)) + " ms") << " |\n";
  }
  out.report_md.append(md.str());
}

}  // namespace secmode::render
