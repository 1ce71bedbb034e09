// Report part of section "windows": each real server's RPCSEC_GSS sequence
// window and reaction below it, as secmode probe measured them, with the
// nconnect model's flags for it; the peers that could not run and why.
#include <sstream>
#include <string>

#include "render/markdown.h"
#include "render/report_sections.h"

namespace secmode::render {

void RenderWindowsSection(const harness::RunResults& r, const nlohmann::json& section,
                          Rendered& out) {
  (void)r;
  std::ostringstream md;
  md << "## RPCSEC_GSS sequence windows of real servers (secmode probe)\n\n"
     << "Each test on a context of its own (" << MdText(section.value("mode", ""))
     << ", NULL calls): the window is the smallest lag below the highest number that the "
        "server refuses (bisection up to "
     << section.value("max_window", 0) << ", then W-1 and W tested again); a call with no reply "
     << "within " << section.value("silence_ms", 0)
     << " ms while the connection stays open is a silent drop. Reactions as `secmode nconnect "
        "--reaction` names them: drop (silent, connection and context kept), drop-disconnect "
        "(connection closed), discard-context (the context is gone afterwards); error-reply: an "
        "error answer, both kept (the model has no such reaction). Run `secmode probe --host H "
        "--port P` for your own server.\n\n"
     << "| server | version | advertised | measured window | below the window | what came back | "
        "duplicate | 0x7fffffff | 0x80000000 (MAXSEQ) | model |\n"
     << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& p : section.value("peers", nlohmann::json::array())) {
    const uint32_t window = p.value("window", 0u);
    const std::string measured =
        window > 0 ? std::to_string(window) +
                         (p.value("window_confirmed", false) ? " (confirmed)" : " (not confirmed)")
                   : "above " + std::to_string(p.value("window_above", 0u));
    std::string model = "-";
    if (p.contains("model") && p["model"].is_object()) {
      model = MdCodeCell("--window " + std::to_string(p["model"].value("window", 0u)) +
                         " --reaction " + p["model"].value("reaction", ""));
    }
    md << "| " << MdText(p.value("peer", "")) << " | " << MdText(p.value("peer_version", ""))
       << " | " << p.value("advertised_window", 0u) << " | " << measured << " | "
       << MdText(p.value("below_window", "")) << " | " << MdText(p.value("below_window_reply", ""))
       << " | " << MdText(p.value("duplicate", "")) << " | "
       << MdText(p.value("at_maxseq_minus_1", "")) << " | " << MdText(p.value("at_maxseq", ""))
       << " | " << model << " |\n";
  }
  for (const auto& s : section.value("skipped", nlohmann::json::array())) {
    md << "| " << MdText(s.value("peer", "")) << " | not run: " << MdText(s.value("why", ""))
       << " | | | | | | | | |\n";
  }
  md << "\n";
  out.report_md += md.str();
}

}  // namespace secmode::render
