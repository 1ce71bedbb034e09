// Report part of section "e2e": end-to-end RPC runs on loopback TCP, with
// every row's ops/s as a ratio to sys for the same op and size.
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/format.h"
#include "render/markdown.h"
#include "render/report_sections.h"

namespace secmode::render {

using common::CsvField;
using common::Fmt;
using common::SizeLabel;
using common::SkewLabel;

// "4 x 64": the row's connections and calls outstanding.
std::string Shape(const nlohmann::json& row) {
  return std::to_string(row.value("connections", 0)) + " x " +
         std::to_string(row.value("slots", 0));
}

namespace {

// Runs of several hosts joined (suite/merge.h): each host's machine; empty
// for a run of one machine.
std::string HostsText(const nlohmann::json& section) {
  if (!section.contains("hosts") || !section["hosts"].is_array()) return "";
  std::ostringstream md;
  md << "Joined by `secmode merge` from one run per host: each row was measured on its host "
        "(client and server both there, on loopback), and its ratio to sys is that host's.\n\n"
        "| host | CPU | logical CPUs | kernel | OpenSSL | secmode | started | rows |\n"
        "|---|---|---:|---|---|---|---|---:|\n";
  for (const auto& h : section["hosts"]) {
    md << "| " << MdText(h.value("host", "")) << " | " << MdText(h.value("cpu_model", "")) << " | "
       << h.value("logical_cpus", 0) << " | " << MdText(h.value("kernel", "")) << " | "
       << MdText(h.value("openssl", "")) << " | "
       << MdText(h.value("secmode_commit", "").substr(0, 12)) << " | "
       << MdText(h.value("started_at", "")) << " | " << h.value("rows", 0) << " |\n";
  }
  md << "\n";
  return md.str();
}

// " [lowest, highest]" of the runs (count in `runs_key`, range in
// `range_key`) a figure is the median of, when there were several, times
// `scale` (by default ns shown in us).
std::string RunsRange(const nlohmann::json& row, const char* runs_key, const char* range_key,
                      double scale = 1e-3) {
  const nlohmann::json range = row.value(range_key, nlohmann::json::array());
  if (row.value(runs_key, 0) < 2 || range.size() != 2) return "";
  return " [" + Fmt("%.2f", range[0].get<double>() * scale) + ", " +
         Fmt("%.2f", range[1].get<double>() * scale) + "]";
}

// " [lowest, highest]" of a row's measured/predicted over its pairs (each
// run against the sys run just before it), when there were several.
std::string RatioRange(const nlohmann::json& row) {
  return RunsRange(row, "pairs", "measured_over_predicted_range", 1.0);
}

// Which runs the figures of "Predicted from the legs" are, as the section
// recorded it: rounds (each row its median run), or in older runs sys rows
// run again midway and after the modes (`sys_repeats`), or one run each.
std::string RunsText(const nlohmann::json& section) {
  const int rounds = section.value("rounds", 1);
  bool paired = false;  // a row predicted from the sys runs just before its runs
  if (section.contains("from_legs") && section["from_legs"].is_object()) {
    for (const auto& row : section["from_legs"].value("rows", nlohmann::json::array())) {
      paired = paired || (row.is_object() && row.contains("pairs"));
    }
  }
  if (rounds > 1 && paired) {
    return "Each run of a mode's row (and of its controls) ran in one of " +
           std::to_string(rounds) +
           " rounds, just after a sys run of the same load: the CPU a loopback call costs can "
           "change for stretches of seconds, for every process on the machine alike, so each run "
           "is predicted from the sys run of its round. A row's figures are its median pair's "
           "by measured/predicted, with the lowest and highest in brackets where there were "
           "several (and of the CPU per call over its runs and their sys runs); a row none of "
           "whose sys runs was made is predicted from the sys row's median run. ";
  }
  if (rounds > 1) {
    return "Every figure here is a row's median run by busy CPU per call, of the " +
           std::to_string(rounds) +
           " rounds it ran in (in each round every mode of the run once, for that op and size, in "
           "the "
           "order of the table); "
           "CPU per call of the lowest and highest run in brackets where there were several. ";
  }
  if (section.contains("sys_repeats")) {
    return "The sys figure is the median of the sys runs of that load (one before the modes, "
           "one midway and one after them; the lowest and highest in brackets); the modes' rows "
           "are one run each. ";
  }
  return "Every row is one run. ";
}

// What the legs predict beside what each row measured (suite/e2e_from_legs.h).
std::string FromLegsText(const nlohmann::json& section) {
  if (!section.contains("from_legs")) return "";
  const nlohmann::json& f = section["from_legs"];
  const nlohmann::json rows = f.value("rows", nlohmann::json::array());
  if (rows.empty() && f.value("skipped", nlohmann::json::array()).empty()) return "";
  const double tol = f.value("tolerance", 0.0);
  std::ostringstream md;
  md << "\n### Predicted from the legs\n\n"
     << "A call of a mode costs what a sys run of the same op, size and load cost end to end "
        "(the machine's busy CPU time over its calls: client, server, kernel), plus each of the "
        "four legs' cost in that mode minus its cost in sys (the micro rows, one thread), at the "
        "payload the leg protects (call legs: a WRITE's data, else none; reply legs: a READ's "
        "data, else none; linear between measured sizes, the smallest size's cost below it). "
        "Predicted ops/s: the row's busy CPU time over that cost. "
     << RunsText(section) << "The prediction holds when measured/predicted is within "
     << Fmt("%.0f", tol * 100)
     << "%; where it does not, the call path costs more (or less) than its crypto. Where the "
        "server's sequence window could drop a row's calls, the row also ran against a server "
        "whose window nothing falls out of (the wide window; in every round where it ran in "
        "rounds): that run is the call path's own rate, checked against the prediction, and the "
        "gap to the row is what the drops cost (a dropped call is resent after the client's "
        "timeout, its slot idle meanwhile, so fewer calls are in flight).";
  bool serialised = false;
  for (const auto& row : rows) {
    serialised = serialised || row.value("crypto_threads", "") == "serialised";
  }
  if (serialised) {
    md << " The legs are one thread's: where the engine serialises the calls of one context "
          "(MIT's), the connections' threads also wait for each other's crypto and switch "
          "more, a cost the legs do not hold, so its rows with one context for all connections "
          "can fall short of the prediction; where such a row also ran with a context per "
          "connection (against the wide window), that run is the call path without the "
          "serialisation.";
  }
  md << "\n";
  if (!rows.empty()) {
    md << "\n| mode | op | size | call / reply payload | sys CPU us/call | legs add us "
          "| predicted us/call | measured us/call | predicted ops/s | measured ops/s "
          "| measured / predicted | window drops, timeouts | wide window: measured ops/s "
          "| wide window: measured / predicted | context per connection: measured ops/s "
          "| context per connection: measured / predicted |\n"
       << "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  }
  for (const auto& row : rows) {
    const std::string enctype = row.value("enctype", "");
    const uint32_t size = row.value("size", 0u);
    const double ratio = row.value("measured_over_predicted", 0.0);
    const bool holds = row.value("call_path_within", row.value("within", false));
    md << "| " << MdText(row.value("mode", "")) << ":" << MdText(enctype) << ":"
       << MdText(row.value("engine", "")) << " | " << MdText(row.value("op", "")) << " | "
       << (size == 0 ? "-" : SizeLabel(size)) << " | " << SizeLabel(row.value("call_payload", 0u))
       << " / " << SizeLabel(row.value("reply_payload", 0u)) << " | "
       << Fmt("%.2f", row.value("sys_cpu_ns_per_call", 0.0) / 1e3)
       << RunsRange(row, "sys_runs", "sys_cpu_ns_per_call_range") << " | "
       << Fmt("%.2f", row.value("legs_extra_ns", 0.0) / 1e3) << " | "
       << Fmt("%.2f", row.value("predicted_cpu_ns_per_call", 0.0) / 1e3) << " | "
       << Fmt("%.2f", row.value("measured_cpu_ns_per_call", 0.0) / 1e3)
       << RunsRange(row, "runs", "measured_cpu_ns_per_call_range") << " | "
       << Fmt("%.0f", row.value("predicted_ops_per_second", 0.0)) << " | "
       << Fmt("%.0f", row.value("measured_ops_per_second", 0.0)) << " | " << Fmt("%.2f", ratio)
       << RatioRange(row) << " | " << row.value("server_window_drops", 0u) << ", "
       << row.value("timeouts", 0u) << " | ";
    if (row.contains("wide_window")) {
      const nlohmann::json& w = row["wide_window"];
      md << Fmt("%.0f", w.value("measured_ops_per_second", 0.0)) << " (window "
         << w.value("window", 0u) << ", " << w.value("server_window_drops", 0u) << " drops) | "
         << Fmt("%.2f", w.value("measured_over_predicted", 0.0)) << RatioRange(w);
    } else {
      md << "- | -";
    }
    md << (holds ? "" : " (outside)") << " | ";
    if (row.contains("context_per_connection")) {
      const nlohmann::json& w = row["context_per_connection"];
      md << Fmt("%.0f", w.value("measured_ops_per_second", 0.0)) << " ("
         << w.value("server_window_drops", 0u) << " drops) | "
         << Fmt("%.2f", w.value("measured_over_predicted", 0.0)) << RatioRange(w)
         << (w.value("within", false) ? "" : " (outside)");
    } else {
      md << "- | -";
    }
    md << " |\n";
  }
  for (const auto& s : f.value("skipped", nlohmann::json::array())) {
    md << "\nNot predicted: " << MdText(s.value("mode", "")) << ":" << MdText(s.value("engine", ""))
       << " " << MdText(s.value("op", "")) << " " << s.value("size", 0u) << " B ("
       << MdText(s.value("reason", "")) << ").";
  }
  md << "\n";
  return md.str();
}

}  // namespace

void RenderE2eSection(const harness::RunResults& r, const nlohmann::json& section, Rendered& out) {
  const int connections = section.value("connections", 0);
  const uint32_t window = section.value("window", 0u);
  std::ostringstream md;
  md << "## End to end: NFSv4.1-shaped calls over ONC RPC on loopback TCP\n\n"
     << "In-process server, " << connections
     << " connections sharing one RPCSEC_GSS context (one sequence counter), "
     << section.value("slots", 0) << " outstanding calls (" << section.value("slots_large_io", 0)
     << " for 1 MiB), " << section.value("seconds", 0.0) << " s per run (longer, up to "
     << section.value("max_seconds", 0.0) << " s, until " << section.value("min_ops", 0)
     << " calls completed) after " << section.value("warmup_seconds", 0.0) << " s warm-up"
     << (section.value("rounds", 1) > 1
             ? "; each row under load against secmode's server ran in " +
                   std::to_string(section.value("rounds", 1)) +
                   " rounds (each round every mode of its op and size once, one after the "
                   "other) and shows its median run by busy CPU per call"
             : std::string())
     << "; client re-encodes calls that fell out of the window before sending (as Linux "
        "does); the mode column names enctype and engine (both ends use it). Client and server "
        "share the machine's cores, so each row is the cost of both ends. Crypto: how the one "
        "shared context's messages are protected on the connections' threads at both ends: "
        "parallel (each thread its own instance of the context, as the Linux kernel does; the "
        "native engine) or serialised (MIT's GSS-API, whose contexts are not safe for concurrent "
        "use).\n\n"
     << "Servers: secmode's own (in-process) and, as a real NFSv4.1 peer, nfs-ganesha ("
     << MdText(section.value("ganesha", std::string("not run")))
     << ") over a session of its own, its files on its VFS export, MIT's engine only, "
     << section.value("ganesha_seconds", 0.0)
     << " s per row; ratios are to sys on the same server. Ganesha's window drops are not "
        "counted (-).\n\n"
     << HostsText(section);
  // Rows joined from one run per host (suite/merge.h) carry their host: a
  // column then, and each ratio is to sys on the same host.
  const bool host_column = section.contains("hosts");
  md << (host_column ? "| host " : "")
     << "| server | mode | op | size | connections x outstanding | crypto | ops/s | MB/s | p50 us "
        "| "
        "p99 us | p99.9 us | ops/s vs sys | window drops | retransmits | errors |\n"
     << (host_column ? "|---" : "")
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::map<std::string, double> sys_ops;  // "host/server/op/size/shape" -> ops/s of sys
  for (const auto& row : r.e2e) {
    const std::string mode = row.value("mode", ""), op = row.value("op", "");
    const uint32_t size = row.value("size", 0u);
    const std::string server = row.value("server", std::string("secmode"));
    const std::string host = row.value("host", std::string());
    const std::string key =
        host + "/" + server + "/" + op + "/" + std::to_string(size) + "/" + Shape(row);
    const double ops = row.value("ops_per_second", 0.0);
    if (mode == "sys") sys_ops[key] = ops;
    const double ratio = sys_ops.count(key) && sys_ops[key] > 0 ? ops / sys_ops[key] : 0;
    const std::string enctype = row.value("enctype", "");
    const std::string name =
        enctype.empty() ? mode : mode + ":" + enctype + ":" + row.value("engine", "");
    if (host_column) md << "| " << (host.empty() ? "-" : MdText(host)) << " ";
    md << "| " << MdText(server) << " | " << MdText(name) << " | " << MdText(op) << " | "
       << (size == 0 ? "-" : SizeLabel(size)) << " | " << Shape(row) << " | "
       << MdText(row.value("crypto_threads", "-")) << " | " << Fmt("%.0f", ops) << " | "
       << Fmt("%.1f", row.value("mb_per_second", 0.0)) << " | "
       << Fmt("%.0f", row.value("p50_us", 0.0)) << " | " << Fmt("%.0f", row.value("p99_us", 0.0))
       << " | " << Fmt("%.0f", row.value("p999_us", 0.0)) << " | "
       << (ratio > 0 ? Fmt("%.2f", ratio) : "-") << " | "
       << (row.contains("server_window_drops")
               ? std::to_string(row.value("server_window_drops", uint64_t{0}))
               : std::string("-"))
       << " | " << row.value("retransmits", uint64_t{0}) << " | "
       << row.value("errors", uint64_t{0}) << " |\n";
  }
  md << "\nWindow drops: calls the server discarded as below its " << window
     << "-call window or duplicate (RFC 2203 5.3.3.1, counted by the server over the whole run, "
        "warm-up included). With one context shared by "
     << connections << " connections, a call queued on one connection is overtaken by " << window
     << " newer calls on the others whenever that connection's client or server thread is "
        "descheduled: the nconnect effect the sim section models. Re-encoding before sending "
        "cannot help when the delay is after sending. The client resends a dropped call after its "
     << section.value("timeout_ms", 0)
     << " ms timeout; in a short run some are still waiting for it when the run ends.\n";
  const nlohmann::json servers = section.value("servers", nlohmann::json::object());
  md << "\nServers: " << servers.value("calls", uint64_t{0}) << " calls, "
     << servers.value("contexts_created", uint64_t{0}) << " contexts created, "
     << servers.value("window_drops", uint64_t{0}) << " window drops.\n";
  // Beside the published figures: each krb5 family's change versus sys on
  // each server, from this run's first row of that family: ops/s of the
  // 4 KiB READ and GETATTR rows under load, p50 latency of the 4 KiB READ
  // one call at a time; and the published Azure NetApp Files NFSv4.1 changes
  // (AES-256; ../DESIGN.md "Published numbers"), which give IOPS and
  // latency only, for an unnamed workload.
  struct Published {
    const char* family;
    int iops_pct;
    double ms;
  };
  static constexpr Published kAnf[] = {
      {"krb5", -53, 0.2}, {"krb5i", -55, 0.6}, {"krb5p", -77, 1.6}};
  std::map<std::string, const nlohmann::json*> first;  // server/op/size/shape/family -> row
  std::vector<std::string> peers;
  for (const auto& row : r.e2e) {
    const std::string server = row.value("server", std::string("secmode"));
    if (std::find(peers.begin(), peers.end(), server) == peers.end()) peers.push_back(server);
    first.emplace(server + "/" + row.value("op", "") + "/" + std::to_string(row.value("size", 0u)) +
                      "/" + Shape(row) + "/" + row.value("mode", ""),
                  &row);
  }
  // The change of `field` from sys to `family` for one server and load.
  auto change = [&](const std::string& at, const char* family, const char* field, bool pct,
                    std::string* out) {
    auto sys = first.find(at + "/sys"), mode = first.find(at + "/" + family);
    if (sys == first.end() || mode == first.end()) return false;
    const double base = sys->second->value(field, 0.0), v = mode->second->value(field, 0.0);
    if (pct) {
      if (base <= 0) return false;
      *out = Fmt("%+.0f", 100.0 * (v / base - 1.0)) + "%";
    } else {
      *out = Fmt("%+.2f", (v - base) / 1e3);
    }
    return true;
  };
  std::ostringstream cmp;
  for (const Published& p : kAnf) {
    for (const std::string& server : peers) {
      std::string getattr = "-", read = "-", latency = "-";
      bool any = change(server + "/getattr/0/" + std::to_string(connections) + " x " +
                            std::to_string(section.value("slots", 0)),
                        p.family, "ops_per_second", true, &getattr);
      any |= change(server + "/read/4096/" + std::to_string(connections) + " x " +
                        std::to_string(section.value("slots", 0)),
                    p.family, "ops_per_second", true, &read);
      any |= change(server + "/read/4096/1 x 1", p.family, "p50_us", false, &latency);
      if (!any) continue;
      cmp << "| " << p.family << " | " << MdText(server) << " | " << getattr << " | " << read
          << " | " << latency << " | " << p.iops_pct << "% | +" << Fmt("%.1f", p.ms) << " |\n";
    }
  }
  if (!cmp.str().empty()) {
    md << "\n### Beside the published Azure NetApp Files figures\n\n"
       << "Change versus sys on the same server in this run: ops/s of GETATTR and of 4 KiB READ "
          "under load ("
       << connections << " connections, " << section.value("slots", 0)
       << " outstanding), and the p50 latency of a 4 KiB READ one call at a time; beside Azure "
          "NetApp Files' published NFSv4.1 changes (AES-256, IOPS and latency; the workload is not "
          "stated). Here client and server share two cores over loopback, so a mode's crypto at "
          "both ends competes with the server's own work; ANF's server is not on the client's "
          "cores.\n\n"
       << "| mode | server | GETATTR ops/s | READ 4 KiB ops/s | READ 4 KiB p50 ms, one at a time | "
          "ANF IOPS | ANF latency ms |\n|---|---|---|---|---|---|---|\n"
       << cmp.str();
  }
  md << FromLegsText(section);
  out.report_md.append("\n").append(md.str());
}

}  // namespace secmode::render
