#include "render/report_compare.h"

#include <algorithm>
#include <map>
#include <sstream>
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

std::string PValueCell(const RowComparison& r) {
  if (r.table != "micro") return "-";
  if (!r.test.applicable) {
    return std::to_string(r.a_repetitions) + " vs " + std::to_string(r.b_repetitions) + " reps";
  }
  return Fmt("%.4f", r.test.p);
}

std::string Counts(const RunComparison& c) {
  std::map<Verdict, size_t> n;
  for (const auto& r : c.rows) ++n[r.verdict];
  std::string out;
  for (Verdict v : {Verdict::kFaster, Verdict::kSlower, Verdict::kSame, Verdict::kTooFewRepetitions,
                    Verdict::kMeasuredOnce}) {
    if (!n[v]) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(n[v]) + " " + harness::VerdictName(v);
  }
  return std::to_string(c.rows.size()) + " rows in both runs" + (out.empty() ? "" : ": " + out);
}

std::string Method(const RunComparison& c) {
  return "B/A is B's figure over A's. micro figures are medians of their repetitions (ns/op: "
         "below 1 is faster); the verdict is the two-sided Mann-Whitney U test over the two "
         "runs' repetitions at alpha " +
         Fmt("%g", c.alpha) + " (a side with fewer than " +
         std::to_string(common::kMinUTestSamples) +
         " repetitions cannot be tested). e2e (ops/s) figures are a row's median run; where "
         "both runs ran the row in rounds, the same test is over each run's ops/s (above 1 is "
         "faster). bounds (MB/s), and e2e rows run once, are measured once per run: their ratio "
         "has no verdict.";
}

}  // namespace

std::string CompareText(const RunComparison& c) {
  using common::TerminalText;
  std::ostringstream out;
  out << "A: " << TerminalText(c.a_label) << "\nB: " << TerminalText(c.b_label) << "\n\n";
  std::vector<std::string> names;
  size_t width = 3;
  for (const auto& r : c.rows) {
    names.push_back(TerminalText(r.table + " " + r.key));
    width = std::max(width, names.back().size());
  }
  width = std::min<size_t>(width, 100);
  const char* format = "%-*s %6s %12s %12s %7s %14s  %s\n";
  out << common::Sprintf(format, static_cast<int>(width), "row", "unit", "A", "B", "B/A", "p",
                         "verdict");
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const RowComparison& r = c.rows[i];
    out << common::Sprintf(format, static_cast<int>(width), names[i].c_str(),
                           TerminalText(r.unit).c_str(), Figure(r.a).c_str(), Figure(r.b).c_str(),
                           r.a != 0 ? Fmt("%.3f", r.ratio).c_str() : "-", PValueCell(r).c_str(),
                           harness::VerdictName(r.verdict));
  }
  out << "\n" << Counts(c) << ".\n";
  for (const auto& k : c.only_a) out << "only in A: " << TerminalText(k) << "\n";
  for (const auto& k : c.only_b) out << "only in B: " << TerminalText(k) << "\n";
  out << Method(c) << "\n";
  return out.str();
}

std::string CompareMarkdown(const RunComparison& c) {
  std::ostringstream out;
  out << "# secmode compare\n\n| run | |\n|---|---|\n| A | " << MdText(c.a_label) << " |\n| B | "
      << MdText(c.b_label) << " |\n\n"
      << Method(c) << "\n\n"
      << Counts(c) << ".\n";
  std::string table;
  for (const auto& r : c.rows) {
    if (r.table != table) {
      table = r.table;
      out << "\n## " << MdText(table) << "\n\n| row | unit | A | B | B/A | p | verdict |\n"
          << "|---|---|---:|---:|---:|---:|---|\n";
    }
    out << "| " << MdText(r.key) << " | " << MdText(r.unit) << " | " << Figure(r.a) << " | "
        << Figure(r.b) << " | " << (r.a != 0 ? Fmt("%.3f", r.ratio) : "-") << " | " << PValueCell(r)
        << " | " << harness::VerdictName(r.verdict) << " |\n";
  }
  if (!c.only_a.empty() || !c.only_b.empty()) {
    out << "\n## Rows in one run only\n\n";
    for (const auto& k : c.only_a) out << "- only in A: " << MdText(k) << "\n";
    for (const auto& k : c.only_b) out << "- only in B: " << MdText(k) << "\n";
  }
  return out.str();
}

}  // namespace secmode::render
