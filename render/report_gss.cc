// Report part of section "gss": krb5p mit / mit-iov / native seal+open
// against the OpenSSL bound per enctype and size, and the engine targets
// stated as met or not met (reported, never asserted).
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

void RenderGssSection(const harness::RunResults& r, const nlohmann::json& section, Rendered& out) {
  std::ostringstream md;
  md << "## krb5p engines vs the OpenSSL bound\n\n"
     << "Token level, initiator seals (wrap conf=1), acceptor opens; ns of thread CPU time for "
        "seal + open of one message, the fastest of several interleaved batches (each iteration "
        "times the bound and every engine back to back; CPU time and the minimum keep other "
        "processes on a shared machine out of the figures; the micro table above has wall-clock "
        "means and percentiles). Bound = OpenSSL AES-CBC encrypt + HMAC over the payload bytes "
        "(seal) plus AES-CBC decrypt + HMAC (open). native/bound = bound time / native time (1.0 "
        "= as fast as the primitives); mit/native = how many times faster native is.\n\n";
  struct Target {
    std::string text;
    bool met;
  };
  std::vector<Target> targets;
  std::string enctype;
  for (const auto& row : section.value("comparison", nlohmann::json::array())) {
    const std::string en = row.value("enctype", "");
    if (en != enctype) {
      if (!enctype.empty()) md << "\n";
      enctype = en;
      md << "### " << MdText(en) << "\n\n"
         << "| size | mit ns | mit-iov ns | native ns | bound ns | native/bound | mit/native | "
            "mit-iov/native |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    }
    const uint64_t size = row.value("size", uint64_t{0});
    const nlohmann::json engines = row.value("engines_ns", nlohmann::json::object());
    const double mit = engines.value("mit", 0.0), iov = engines.value("mit-iov", 0.0),
                 nat = engines.value("native", 0.0), bound = row.value("bound_ns", 0.0);
    md << "| " << SizeLabel(size) << " | " << Fmt("%.0f", mit) << " | " << Fmt("%.0f", iov) << " | "
       << Fmt("%.0f", nat) << " | " << Fmt("%.0f", bound) << " | " << Fmt("%.2f", bound / nat)
       << " | " << Fmt("%.2f", mit / nat) << " | " << Fmt("%.2f", iov / nat) << " |\n";
    if (size == (1u << 20) && en == "aes256-cts-hmac-sha1-96") {
      targets.push_back({"native 1 MiB " + MdText(en) + " krb5p seal+open >= 0.85 x bound: " +
                             Fmt("%.2f", bound / nat) + " x (bound " + Fmt("%.0f", bound) +
                             " ns, native " + Fmt("%.0f", nat) + " ns)",
                         bound / nat >= 0.85});
      targets.push_back({"native 1 MiB " + MdText(en) +
                             " krb5p seal+open >= 4 x faster than mit: " + Fmt("%.2f", mit / nat) +
                             " x (mit " + Fmt("%.0f", mit) + " ns)",
                         mit / nat >= 4.0});
    }
    if (size == 128) {
      targets.push_back({"native 128 B " + MdText(en) +
                             " seal+open <= 0.5 x mit: " + Fmt("%.2f", nat / mit) + " x (" +
                             Fmt("%.0f", nat) + " vs " + Fmt("%.0f", mit) + " ns)",
                         nat / mit <= 0.5});
    }
  }
  if (!enctype.empty()) md << "\n";
  if (!targets.empty()) {
    md << "### Targets (reported, not asserted)\n\n";
    for (const auto& t : targets) {
      md << "- " << (t.met ? "met" : "NOT met") << ": " << t.text << "\n";
    }
    md << "\n";
  }
  if (!section.value("restricted", false) &&
      !section.value("every_enctype_rows", !section.value("quick", false))) {
    md << "krb5p micro rows for the non-default enctypes were not measured (`secmode run --full` "
          "measures them); the tables above cover every enctype.\n\n";
  }
  md << "Cycles in micro rows are TSC ticks at " << Fmt("%.3f", r.machine.tsc_ghz) << " GHz ("
     << MdText(r.method.value("cycle_source", "unknown"))
     << "); the same primitives per op are in `bounds`.\n";
  out.report_md.append("\n").append(md.str());
}

}  // namespace secmode::render
