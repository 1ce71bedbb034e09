// Report part of section "smb": each SMB operation against the raw OpenSSL
// primitive over the same bytes (rates from `bounds`), the target stated as
// met or not, and multichannel scaling.
#include <sstream>
#include <string>

#include "common/format.h"
#include "render/markdown.h"
#include "render/report_sections.h"

namespace secmode::render {

using common::CsvField;
using common::Fmt;
using common::SizeLabel;
using common::SkewLabel;

namespace {

// The bounds row of `primitive` at `size`; 0 when absent.
double BoundRate(const harness::RunResults& r, const std::string& primitive, uint64_t size) {
  for (const auto& b : r.bounds) {
    if (b.primitive == primitive && b.size == size) return b.bytes_per_second;
  }
  return 0;
}

std::string Mbs(double bps) { return Fmt("%.0f", bps / 1e6); }

}  // namespace

void RenderSmbSection(const harness::RunResults& r, const nlohmann::json& section, Rendered& out) {
  const uint64_t size = section.value("size", uint64_t{0});
  const double target = section.value("target", 0.0);
  std::ostringstream md;
  md << "## SMB3 bounds (" << SizeLabel(size) << " WRITE, same bytes, same run)\n\n"
     << "Each SMB operation is run against the raw OpenSSL primitive over the same message "
        "(112-byte SMB2 header + WRITE body + "
     << SizeLabel(size) << " data), in " << section.value("rounds", 0) << " alternating rounds of "
     << section.value("seconds_per_round", 0.0)
     << " s of thread CPU time; each side's best round counts (rates are bytes per CPU-second). "
        "Target: SMB >= "
     << target << " x raw.\n\n"
     << "| operation | SMB MB/s | raw primitive | raw MB/s | ratio | target met |\n"
     << "|---|---:|---|---:|---:|---|\n";
  for (const auto& p : section.value("pairs", nlohmann::json::array())) {
    const std::string smb = p.value("smb", ""), raw = p.value("raw", "");
    const double a = BoundRate(r, smb, size), b = BoundRate(r, raw, size);
    const double ratio = b > 0 ? a / b : 0;
    md << "| " << MdText(smb) << " | " << Mbs(a) << " | " << MdText(raw) << " | " << Mbs(b) << " | "
       << Fmt("%.3f", ratio) << " | "
       << (p.value("targeted", false) ? (ratio >= target ? "met" : "NOT met") : "(no target)")
       << " |\n";
  }
  const int cores = section.value("cores", 0);
  md << "\n## SMB3 multichannel (AES-128-GCM, client-seal of " << SizeLabel(size) << " WRITEs)\n\n"
     << "Channels are threads sharing one session key, nonce = 64-bit counter || channel id. "
     << "Machine: " << cores << " logical CPUs (counts above that oversubscribe).\n\n"
     << "Efficiency, as in the core scaling: the aggregate over the channel count times the "
        "one-channel figure of this run (1.00: perfect scaling; * oversubscribed).\n\n"
     << "| channels | messages | aggregate MB/s | per channel MB/s | efficiency |\n"
        "|---:|---:|---:|---:|---:|\n";
  double one = 0;
  for (const auto& m : section.value("multichannel", nlohmann::json::array())) {
    if (m.value("channels", 0) == 1) one = BoundRate(r, m.value("primitive", ""), size);
  }
  for (const auto& m : section.value("multichannel", nlohmann::json::array())) {
    const int n = m.value("channels", 1);
    const double rate = BoundRate(r, m.value("primitive", ""), size);
    md << "| " << n << (cores > 0 && n > cores ? "*" : "") << " | "
       << m.value("messages", uint64_t{0}) << " | " << Mbs(rate) << " | " << Mbs(rate / n) << " | "
       << (one > 0 ? Fmt("%.2f", rate / (n * one)) : "-") << " |\n";
  }
  out.report_md.append("\n").append(md.str());
}

}  // namespace secmode::render
