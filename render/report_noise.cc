#include "render/report_noise.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "common/format.h"
#include "render/markdown.h"
#include "render/report_sections.h"

namespace secmode::render {

using common::Fmt;
using common::TerminalText;
using harness::AaResult;
using harness::RowNoise;

namespace {

std::string PercentAboveOne(double ratio) { return Fmt("%.1f%%", 100 * (ratio - 1)); }

// Per table: its rows' median spread and median single-run change, and the
// largest of each.
std::string Tables(const AaResult& r) {
  std::ostringstream out;
  out << common::Sprintf("%-8s %5s %14s %14s %18s %18s\n", "table", "rows", "median sd", "max sd",
                         "median 1-run", "max 1-run");
  for (const harness::TableNoise& t : harness::NoiseByTable(r.rows)) {
    out << common::Sprintf("%-8s %5zu %14s %14s %18s %18s\n", TerminalText(t.table).c_str(), t.rows,
                           Fmt("%.1f%%", 100 * t.median_log_sd).c_str(),
                           Fmt("%.1f%%", 100 * t.max_log_sd).c_str(),
                           PercentAboveOne(t.median_single_run_ratio).c_str(),
                           PercentAboveOne(t.max_single_run_ratio).c_str());
  }
  return out.str();
}

// How far the validation's verdicts repeated: the points with one verdict
// in every run, each back-to-back pair's count and contradictions, and the
// points that changed, with their verdict in each run.
std::string Verdicts(const harness::VerdictRepeats& v) {
  if (v.points.empty()) return "";
  std::ostringstream out;
  out << "\nValidation verdicts: " << v.same << " of " << v.points.size()
      << " points had one verdict in every run; back-to-back runs kept the verdict of";
  for (size_t k = 0; k < v.pair_points.size(); ++k) {
    out << (k ? ", " : " ") << v.pair_same[k] << " of " << v.pair_points[k];
  }
  out << " points and turned it over (agrees to disagrees or back) on";
  for (size_t k = 0; k < v.pair_contradicted.size(); ++k) {
    out << (k ? ", " : " ") << v.pair_contradicted[k];
  }
  out << "; every other change was to or from undecided (a point on the rule's edge, or whose runs shared the machine).\n";
  for (const harness::VerdictRepeat& p : v.points) {
    if (p.same) continue;
    out << "  " << TerminalText(p.name) << ":";
    for (size_t k = 0; k < p.verdicts.size(); ++k) {
      out << (k ? ", " : " ") << (p.verdicts[k].empty() ? "-" : TerminalText(p.verdicts[k]));
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace

std::string NoiseText(const AaResult& r, size_t rows) {
  std::ostringstream out;
  for (size_t i = 0; i < r.comparison.a_labels.size(); ++i) {
    out << "A" << i + 1 << ": " << TerminalText(r.comparison.a_labels[i]) << "\n";
  }
  for (size_t i = 0; i < r.comparison.b_labels.size(); ++i) {
    out << "B" << i + 1 << ": " << TerminalText(r.comparison.b_labels[i]) << "\n";
  }
  out << "\nA/A test: " << r.false_positives << " of " << r.tested
      << " rows tested were called faster or slower at alpha " << Fmt("%g", r.comparison.alpha)
      << " (false-positive rate " << Fmt("%.1f%%", 100 * r.false_positive_rate)
      << "; a test that means what it says flags about " << Fmt("%g%%", 100 * r.comparison.alpha)
      << ").\n\n"
      << "Run-to-run spread (sd of the runs' log figures, about their CV) and the change two "
         "single runs must show to stand out of it:\n"
      << Tables(r);
  std::vector<const RowNoise*> noisiest;
  for (const RowNoise& n : r.rows) noisiest.push_back(&n);
  std::stable_sort(noisiest.begin(), noisiest.end(),
                   [](const RowNoise* x, const RowNoise* y) { return x->log_sd > y->log_sd; });
  noisiest.resize(std::min(rows, noisiest.size()));
  if (!noisiest.empty()) out << "\nThe noisiest rows:\n";
  for (const RowNoise* n : noisiest) {
    out << "  " << TerminalText(n->table + " " + n->key) << ": sd "
        << Fmt("%.1f%%", 100 * n->log_sd) << " over " << n->runs << " runs, single runs need "
        << PercentAboveOne(n->single_run_ratio) << "\n";
  }
  out << Verdicts(r.validation);
  return out.str();
}

// sections["noise-floor"] (harness::NoiseFloorJson), read as untrusted: a
// value of the wrong type throws, which RenderRun reports; strings are
// escaped.
void RenderNoiseFloorSection(const harness::RunResults&, const nlohmann::json& s, Rendered& out) {
  std::string args = "secmode run";
  for (const auto& a : s.value("run_args", nlohmann::json::array())) {
    args += ' ';
    args += a.get<std::string>();
  }
  const double alpha = s.value("alpha", 0.0);
  std::ostringstream md;
  md << "\n## Noise floor on this machine\n\n"
     << "This run is published with the A/A test made on this machine with this build ("
     << MdCode(s.value("file", "")) << "): " << s.value("runs_per_side", 0) << " + "
     << s.value("runs_per_side", 0) << " runs of " << MdCode(args)
     << ", made alternately into two sides with nothing changed between them. "
     << MdCode("secmode compare") << " called " << s.value("false_positives", 0) << " of "
     << s.value("tested", 0) << " rows faster or slower at alpha " << Fmt("%g", alpha) << " ("
     << Fmt("%.1f%%", 100 * s.value("false_positive_rate", 0.0))
     << "; a test that means what it says flags about " << Fmt("%g%%", 100 * alpha)
     << "). The run-to-run spread is the standard deviation of the runs' log figures (about "
        "their CV); two single runs must differ by the last column before the difference stands "
        "out of it.\n\n"
     << "| table | rows | median spread | largest spread (row) | single runs must differ by "
        "(median) |\n|---|---:|---:|---|---:|\n";
  for (const auto& t : s.value("tables", nlohmann::json::array())) {
    md << "| " << MdText(t.value("table", "")) << " | " << t.value("rows", 0) << " | "
       << Fmt("%.1f%%", 100 * t.value("median_log_sd", 0.0)) << " | "
       << Fmt("%.1f%%", 100 * t.value("max_log_sd", 0.0)) << " (" << MdText(t.value("noisiest", ""))
       << ") | " << PercentAboveOne(t.value("median_single_run_ratio", 1.0)) << " |\n";
  }
  const nlohmann::json v = s.value("validation", nlohmann::json::object());
  if (v.value("points", 0) > 0) {
    md << "\nValidation verdicts: " << v.value("same", 0) << " of " << v.value("points", 0)
       << " points had one verdict in every run; back-to-back runs kept the verdict of";
    std::ostringstream kept, over;
    const char* sep = " ";
    for (const auto& p : v.value("pairs", nlohmann::json::array())) {
      kept << sep << p.value("same", 0) << " of " << p.value("points", 0);
      over << sep << p.value("contradicted", 0);
      sep = ", ";
    }
    md << kept.str() << " points and turned it over (agrees to disagrees or back) on" << over.str()
       << "; every other change was to or from undecided (a point on the rule's edge, or whose runs shared the machine).\n";
  }
  out.report_md += md.str();
}

}  // namespace secmode::render
