#include "render/report_compare.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "common/format.h"
#include "render/markdown.h"

namespace secmode::render {

using common::Fmt;
using harness::RowComparison;
using harness::RunComparison;
using harness::Verdict;

namespace {

std::string Figure(double v) { return v >= 100 ? Fmt("%.0f", v) : Fmt("%.3g", v); }

std::string PValue(const RowComparison& r) {
  return r.test.applicable ? Fmt("%.4f", r.test.p) : "-";
}

std::string Ratio(const RowComparison& r) { return r.a != 0 ? Fmt("%.3f", r.ratio) : "-"; }

// The ratio's confidence interval, "0.981-1.032"; "-" when not tested.
std::string Interval(const RowComparison& r) {
  if (!r.test.applicable) return "-";
  return Fmt("%.3f", r.ratio_low) + "-" + Fmt("%.3f", r.ratio_high);
}

std::string Runs(const RowComparison& r) {
  return std::to_string(r.a_runs) + "+" + std::to_string(r.b_runs);
}

// Each run's name ("A", or "A1", "A2", ... for a side of several) and label.
std::vector<std::pair<std::string, std::string>> RunLabels(const RunComparison& c) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [side, labels] : {std::pair{"A", &c.a_labels}, std::pair{"B", &c.b_labels}}) {
    for (size_t i = 0; i < labels->size(); ++i) {
      out.emplace_back(side + (labels->size() > 1 ? std::to_string(i + 1) : ""), (*labels)[i]);
    }
  }
  return out;
}

std::string Counts(const RunComparison& c) {
  std::map<Verdict, size_t> n;
  for (const auto& r : c.rows) ++n[r.verdict];
  std::string out;
  for (Verdict v : {Verdict::kFaster, Verdict::kSlower, Verdict::kSame, Verdict::kTooFewRuns,
                    Verdict::kNoSpread}) {
    if (!n[v]) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(n[v]) + " " + harness::VerdictName(v);
  }
  return std::to_string(c.rows.size()) + " rows on both sides" + (out.empty() ? "" : ": " + out);
}

// The verdict, and for a row with too few runs where a noise.json gave its
// A/A noise, whether B/A lies beyond it: "too few runs; beyond the A/A noise
// 0.925-1.081 (row)".
std::string VerdictText(const RowComparison& r, const RunComparison& c) {
  std::string v = harness::VerdictName(r.verdict);
  if (r.verdict != Verdict::kTooFewRuns || c.noise.path.empty()) return v;
  if (r.noise_ratio <= 0) return v + "; no A/A figure of its table";
  return v + "; " + (r.BeyondNoise() ? "beyond" : "within") + " the A/A noise " +
         Fmt("%.3f", 1 / r.noise_ratio) + "-" + Fmt("%.3f", r.noise_ratio) + " (" +
         (r.noise_from == "row" ? "row" : "table's noisiest") + ")";
}

// What a row with too few runs can be told: with a noise.json, how its B/A
// stands against the A/A noise measured there (no test of these runs);
// without, where to get one. "" when every row has a verdict.
std::string NoiseNote(const RunComparison& c) {
  size_t few = 0, beyond = 0, unknown = 0;
  for (const auto& r : c.rows) {
    if (r.verdict != Verdict::kTooFewRuns) continue;
    ++few;
    beyond += r.BeyondNoise();
    unknown += r.noise_ratio <= 0;
  }
  if (few == 0) return "";
  if (c.noise.path.empty()) {
    return std::to_string(few) +
           " rows have a side of one run and no verdict. To see how large a change must be to "
           "stand out of this machine's run-to-run noise, run `secmode noise` (an A/A test; it "
           "writes noise.json) and compare again with `secmode compare --noise NOISE_JSON A B`.";
  }
  return "Of the " + std::to_string(few) + " rows with a side of one run (no verdict), " +
         std::to_string(beyond) + " lie beyond the A/A noise, " +
         std::to_string(few - beyond - unknown) + " within it" +
         (unknown ? ", " + std::to_string(unknown) + " have no A/A figure" : std::string()) +
         ". The A/A noise is the range of B/A that sides of as many runs of one build stay in "
         "at alpha " +
         Fmt("%g", c.alpha) + ", from the run-to-run spread in the A/A test of " + c.noise.path +
         " (" + std::to_string(c.noise.runs_per_side) + " + " +
         std::to_string(c.noise.runs_per_side) +
         " runs): the row's own, or its table's noisiest row's where the row is not there. "
         "Beyond it is a hint where to look, not a test of these runs: for a verdict, repeat "
         "them with 3 or more runs a side.";
}

std::string Method(const RunComparison& c) {
  const std::string level = Fmt("%g", 100 * (1 - c.alpha));
  return "B/A is B's figure over A's (ns/op: below 1 is faster; MB/s and ops/s: above 1 is "
         "faster); a side's figure is the median over its runs, a run's figure the one it "
         "reports (micro: the fastest of its repetitions, or the median in runs whose results.json "
         "method does not name micro_estimator). The verdict is Welch's t test on the "
         "logarithms of the runs' figures at alpha " +
         Fmt("%g", c.alpha) + ", the interval its " + level +
         "% confidence interval of B/A. It needs at least 2 runs a side (3 or more to find "
         "changes of a few percent): repetitions inside one run share that minute's machine "
         "state and vary less than separate runs, so a side of one run gets no verdict, "
         "however many repetitions it made.";
}

}  // namespace

std::string CompareText(const RunComparison& c) {
  using common::TerminalText;
  std::ostringstream out;
  for (const auto& [name, label] : RunLabels(c)) out << name << ": " << TerminalText(label) << "\n";
  out << "\n";
  std::vector<std::string> names;
  size_t width = 3;
  for (const auto& r : c.rows) {
    names.push_back(TerminalText(r.table + " " + r.key));
    width = std::max(width, names.back().size());
  }
  width = std::min<size_t>(width, 100);
  const char* format = "%-*s %6s %12s %12s %7s %13s %7s %5s  %s\n";
  out << common::Sprintf(format, static_cast<int>(width), "row", "unit", "A", "B", "B/A",
                         "interval", "p", "runs", "verdict");
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const RowComparison& r = c.rows[i];
    out << common::Sprintf(format, static_cast<int>(width), names[i].c_str(),
                           TerminalText(r.unit).c_str(), Figure(r.a).c_str(), Figure(r.b).c_str(),
                           Ratio(r).c_str(), Interval(r).c_str(), PValue(r).c_str(),
                           Runs(r).c_str(), TerminalText(VerdictText(r, c)).c_str());
  }
  out << "\n" << Counts(c) << ".\n";
  for (const auto& k : c.only_a) out << "only in A: " << TerminalText(k) << "\n";
  for (const auto& k : c.only_b) out << "only in B: " << TerminalText(k) << "\n";
  out << Method(c) << "\n";
  if (const std::string note = NoiseNote(c); !note.empty()) out << TerminalText(note) << "\n";
  for (const auto& w : c.noise.warnings) out << "warning: " << TerminalText(w) << "\n";
  for (const auto& w : c.warnings) out << "warning: " << TerminalText(w) << "\n";
  return out.str();
}

std::string CompareMarkdown(const RunComparison& c) {
  std::ostringstream out;
  out << "# secmode compare\n\n| run | |\n|---|---|\n";
  for (const auto& [name, label] : RunLabels(c))
    out << "| " << name << " | " << MdText(label) << " |\n";
  out << "\n" << Method(c) << "\n\n" << Counts(c) << ".\n";
  if (const std::string note = NoiseNote(c); !note.empty()) out << "\n" << MdText(note) << "\n";
  if (!c.noise.warnings.empty() || !c.warnings.empty()) out << "\n";
  for (const auto& w : c.noise.warnings) out << "- warning: " << MdText(w) << "\n";
  for (const auto& w : c.warnings) out << "- warning: " << MdText(w) << "\n";
  std::string table;
  for (const auto& r : c.rows) {
    if (r.table != table) {
      table = r.table;
      out << "\n## " << MdText(table)
          << "\n\n| row | unit | A | B | B/A | interval | p | runs | verdict |\n"
          << "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
    }
    out << "| " << MdText(r.key) << " | " << MdText(r.unit) << " | " << Figure(r.a) << " | "
        << Figure(r.b) << " | " << Ratio(r) << " | " << Interval(r) << " | " << PValue(r) << " | "
        << Runs(r) << " | " << MdText(VerdictText(r, c)) << " |\n";
  }
  if (!c.only_a.empty() || !c.only_b.empty()) {
    out << "\n## Rows on one side only\n\n";
    for (const auto& k : c.only_a) out << "- only in A: " << MdText(k) << "\n";
    for (const auto& k : c.only_b) out << "- only in B: " << MdText(k) << "\n";
  }
  return out.str();
}

}  // namespace secmode::render
