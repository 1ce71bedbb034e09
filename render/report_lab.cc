#include "render/report_lab.h"

#include <algorithm>
#include <sstream>

#include "common/format.h"
#include "render/markdown.h"
#include "render/report_sections.h"

namespace secmode::render {

using common::Fmt;

namespace {

std::string Point(const nlohmann::json& r, bool smb) {
  const std::string head = MdText(r.value("mode", "")) + " " + MdText(r.value("op", "")) + " " +
                           common::SizeLabel(r.value("size", uint64_t{0}));
  if (smb) {
    const int channels = std::max(1, r.value("connections", 1));
    return head + " " + std::to_string(channels) + " channel" + (channels == 1 ? "" : "s") + " x " +
           std::to_string(r.value("iodepth", 0) / channels) + " in flight";
  }
  return head + " iodepth " + std::to_string(r.value("iodepth", 0)) + " numjobs " +
         std::to_string(r.value("numjobs", 0));
}

}  // namespace

std::string LabMarkdown(const nlohmann::json& lab) {
  std::ostringstream md;
  if (lab.contains("not_run")) {
    md << "Not run: " << MdText(lab.value("not_run", "")) << ".\n";
    return md.str();
  }
  const nlohmann::json in = lab.value("model_inputs", nlohmann::json::object());
  const bool smb = lab.value("protocol", "nfs") == "smb";
  if (smb) {
    md << "The workload model (`secmode predict`, sim/workload_model.h) against secmode's SMB "
          "load (smb/load.h) and "
       << MdText(lab.value("server", "Samba"))
       << " in two network namespaces joined by a veth pair (lab/): bandwidth shaped by the "
          "kernel (tc tbf), the whole round trip added by the client, which holds each request "
          "before it sends it (`smb-load --round-trip-ms`; this kernel has no netem, Samba cannot "
          "hold its responses; TCP does not see the delay), one session over each point's "
          "channels. Grid: "
       << MdText(lab.value("grid", ""));
  } else {
    md << "The workload model (`secmode predict`, sim/workload_model.h) against `secmode load` "
          "between two hosts in network namespaces joined by a veth pair (lab/): bandwidth "
          "shaped by the kernel (tc tbf), the round trip added by `serve --delay-ms` and `load "
          "--delay-ms` (this kernel has no netem; TCP does not see the delay), nconnect "
       << in.value("connections", 0) << ", the server's window " << in.value("server_window", 0)
       << " (no drops), native engine. Grid: " << MdText(lab.value("grid", ""));
  }
  md << ". The model's inputs, measured, none fitted: legs from " << MdText(in.value("legs", ""))
     << "; protocol CPU from " << MdText(in.value("protocol_cpu", "")) << "; round trip "
     << MdText(in.value("round_trip", "")) << "; link rate " << MdText(in.value("link_rate", ""))
     << "; cores " << MdText(in.value("cores", "")) << "; TCP window "
     << MdText(in.value("tcp_window", "")) << ".\n\n"
     << "Rule: " << MdText(lab.value("rule", "")) << "\n\n";
  const nlohmann::json s = lab.value("summary", nlohmann::json::object());
  md << "**" << s.value("within_tolerance_where_they_hold", 0) << " of "
     << s.value("assumptions_hold", 0) << "** points where the model's assumptions hold are "
     << "within the tolerance (" << s.value("points", 0) << " points measured); the modes' "
     << "order agrees in " << s.value("order_groups_agree", 0) << " of "
     << s.value("order_groups", 0) << " groups ("
     << s.value("order_groups_agree_where_they_hold", 0) << " of "
     << s.value("order_groups_assumptions_hold", 0)
     << " where the model's assumptions hold at every point); " << s.value("pruned", 0)
     << " points pruned."
     << (lab.value("interrupted", false) ? " Interrupted: the grid is not "
                                           "complete."
                                         : "")
     << "\n\n";
  md << "| link | measured round trip ms | one " << (smb ? "QUERY_INFO" : "GETATTR")
     << " at a time, p50 us |\n|---|---:|---:|\n";
  for (const auto& l : lab.value("links", nlohmann::json::array())) {
    md << "| " << MdText(l.value("link", "")) << " | "
       << Fmt("%.3f", l.value("measured_rtt_ms", 0.0)) << " | "
       << Fmt("%.0f", l.value("ping_p50_us", 0.0)) << " |\n";
  }
  md << "\n| link | point | measured ops/s | MB/s | p50 ms | predicted ops/s | bottleneck | "
        "measured / predicted | verdict |\n|---|---|---:|---:|---:|---:|---|---:|---|\n";
  for (const auto& r : lab.value("rows", nlohmann::json::array())) {
    const nlohmann::json m = r.value("measured", nlohmann::json::object());
    const nlohmann::json p = r.value("predicted", nlohmann::json::object());
    std::string verdict;
    if (r.contains("error")) {
      verdict = "failed";
    } else if (!r.value("assumptions_hold", true)) {
      verdict = "CPU-bound (not asserted)";
    } else {
      verdict = r.value("within_tolerance", false) ? "agrees" : "**outside**";
    }
    md << "| " << MdText(r.value("link", "")) << " | " << Point(r, smb) << " | "
       << Fmt("%.1f", m.value("iops", 0.0)) << " | " << Fmt("%.2f", m.value("mb_per_s", 0.0))
       << " | " << Fmt("%.2f", m.value("p50_ms", 0.0)) << " | " << Fmt("%.1f", p.value("iops", 0.0))
       << " | " << MdText(p.value("bottleneck", "")) << " | " << Fmt("%.2f", r.value("ratio", 0.0))
       << " | " << verdict << " |\n";
  }
  bool any = false;
  for (const auto& r : lab.value("rows", nlohmann::json::array())) {
    if (r.value("within_tolerance", true) && !r.contains("error")) continue;
    if (!any)
      md << "\nPoints outside "
         << "the tolerance, and why:\n\n";
    any = true;
    md << "- " << MdText(r.value("link", "")) << ", " << Point(r, smb) << ": ";
    if (r.contains("error")) {
      md << "failed: " << MdText(r.value("error", "")) << "\n";
    } else {
      md << "measured/predicted " << Fmt("%.2f", r.value("ratio", 0.0)) << "; "
         << (r.value("assumptions_hold", true) ? "the model's assumptions hold here: a "
                                                 "disagreement of the model"
                                               : MdText(r.value("why_not", "")));
      // Each end's CPU per operation, the model's beside the measured.
      const nlohmann::json m = r.value("measured", nlohmann::json::object());
      const nlohmann::json p = r.value("predicted", nlohmann::json::object());
      if (m.contains("client_cpu_us_per_op") || m.contains("server_thread_us_per_op")) {
        md << " (CPU per operation, model / measured: client "
           << Fmt("%.0f", p.value("client_cpu_us_per_op", 0.0)) << " / "
           << (m.contains("client_cpu_us_per_op")
                   ? Fmt("%.0f", m.value("client_cpu_us_per_op", 0.0))
                   : std::string("not measured"))
           << " us, server " << Fmt("%.0f", p.value("server_cpu_us_per_op", 0.0)) << " / "
           << (m.contains("server_thread_us_per_op")
                   ? Fmt("%.0f", m.value("server_thread_us_per_op", 0.0)) +
                         " us (its session thread)"
                   : std::string("not measured"))
           << ")";
      }
      md << "\n";
    }
  }
  const nlohmann::json pruned = lab.value("pruned", nlohmann::json::array());
  if (!pruned.empty()) {
    md << "\nPruned:\n\n";
    for (const auto& r : pruned) {
      md << "- " << MdText(r.value("link", "")) << ", " << Point(r, smb) << ": "
         << MdText(r.value("why", "")) << "\n";
    }
  }
  md << "\nThe modes' order (pairs the model separates by the margin; others are ties):\n\n"
     << "| link | group | pairs | agrees |\n|---|---|---|---|\n";
  for (const auto& g : lab.value("order", nlohmann::json::array())) {
    std::string pairs;
    for (const auto& p : g.value("pairs", nlohmann::json::array())) {
      if (!pairs.empty()) pairs += "; ";
      pairs += MdText(p.value("faster", "")) + " > " + MdText(p.value("slower", "")) +
               common::Sprintf(" (predicted x%.2f, measured x%.2f)",
                               p.value("predicted_ratio", 0.0), p.value("measured_ratio", 0.0));
    }
    md << "| " << MdText(g.value("link", "")) << " | " << MdText(g.value("group", "")) << " | "
       << (pairs.empty() ? "all ties" : pairs) << " | "
       << (g.value("agrees", false) ? "yes" : "**no**")
       << (g.value("assumptions_hold", true) ? "" : " (CPU-bound points)") << " |\n";
  }
  return md.str();
}

void RenderLabSection(const harness::RunResults&, const nlohmann::json& section, Rendered& out) {
  out.report_md.append("\n## The workload model on a two-host lab\n\n");
  out.report_md.append(LabMarkdown(section));
}

void RenderSmbLabSection(const harness::RunResults&, const nlohmann::json& section, Rendered& out) {
  out.report_md.append("\n## The SMB workload model on a two-host lab\n\n");
  out.report_md.append(LabMarkdown(section));
}

}  // namespace secmode::render
