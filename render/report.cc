#include "render/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "common/format.h"
#include "render/markdown.h"
#include "render/report_html.h"
#include "render/report_sections.h"

namespace secmode::render {

using common::CsvField;
using common::Fmt;
using common::SizeLabel;
using common::SkewLabel;

using harness::RunResults;

namespace {

// One association measured at one size: the four legs' ns/op.
struct Cell {
  double legs[4] = {0, 0, 0, 0};
  double cv[4] = {0, 0, 0, 0};  // of each leg's repetitions
  int repetitions = 0;          // the fewest of its legs'
  double MaxCv() const { return std::max(std::max(cv[0], cv[1]), std::max(cv[2], cv[3])); }
  double RoundTrip() const { return legs[0] + legs[1] + legs[2] + legs[3]; }
};
using Key = std::tuple<std::string, std::string, std::string>;  // mode, engine, enctype

// The baseline first, then modes by name.
struct KeyOrder {
  bool operator()(const Key& a, const Key& b) const {
    bool a_sys = std::get<0>(a) == "sys", b_sys = std::get<0>(b) == "sys";
    if (a_sys != b_sys) return a_sys;
    return a < b;
  }
};

int LegIndex(const std::string& leg) {
  if (leg == "client-seal") return 0;
  if (leg == "server-open") return 1;
  if (leg == "server-seal") return 2;
  return 3;
}

std::map<size_t, std::map<Key, Cell, KeyOrder>> Cells(const RunResults& r) {
  std::map<size_t, std::map<Key, Cell, KeyOrder>> out;
  for (const auto& row : r.micro) {
    if (row.threads != 1) continue;
    Cell& c = out[row.size][{row.mode, row.engine, row.enctype}];
    c.legs[LegIndex(row.leg)] = row.m.ns_per_op;
    c.cv[LegIndex(row.leg)] = row.m.cv;
    const int n = static_cast<int>(row.m.repetitions_ns.size());
    c.repetitions = c.repetitions == 0 ? n : std::min(c.repetitions, n);
  }
  return out;
}

const Cell* SysCell(const std::map<Key, Cell, KeyOrder>& cells) {
  for (const auto& [k, c] : cells) {
    if (std::get<0>(k) == "sys") return &c;
  }
  return nullptr;
}

}  // namespace

std::string MicroCsv(const RunResults& r) {
  std::ostringstream out;
  out << "mode,engine,enctype,leg,size,threads,ns_per_op,bytes_per_second,cycles_per_byte,"
         "p50_ns,p99_ns,p999_ns,samples,repetitions,cv,noisy\n";
  for (const auto& row : r.micro) {
    out << CsvField(row.mode) << ',' << CsvField(row.engine) << ',' << CsvField(row.enctype) << ','
        << CsvField(row.leg) << ',' << row.size << ',' << row.threads << ','
        << Fmt("%.1f", row.m.ns_per_op) << ',' << Fmt("%.0f", row.m.bytes_per_second) << ','
        << Fmt("%.3f", row.m.cycles_per_byte) << ',' << row.m.p50_ns << ',' << row.m.p99_ns << ','
        << row.m.p999_ns << ',' << row.m.samples << ',' << row.m.repetitions_ns.size() << ','
        << Fmt("%.4f", row.m.cv) << ',' << (row.m.noisy() ? "yes" : "no") << '\n';
  }
  return out.str();
}

namespace {

// The signal that interrupted the run ("SIGINT"), "" if it ran to its end.
std::string InterruptedBy(const RunResults& r) {
  for (const auto& e : r.errors) {
    if (e.is_object() && e.contains("interrupted") && e["interrupted"].is_string()) {
      return e["interrupted"].get<std::string>();
    }
  }
  return "";
}

// How busy the machine was over the run (results.json "noise").
std::string NoiseLine(const nlohmann::json& noise) {
  if (!noise.is_object() || noise.empty()) return "not recorded (written before secmode did)";
  auto load = [](const nlohmann::json& v) {
    return v.is_array() && v.size() == 3 && v[0].is_number() ? Fmt("%.2f", v[0].get<double>())
                                                             : std::string("unknown");
  };
  auto share = [](const nlohmann::json& v) {
    return v.is_number() ? Fmt("%.1f%%", 100 * v.get<double>()) : std::string("unknown");
  };
  return "load average (1 min) " + load(noise.value("loadavg_before", nlohmann::json())) +
         " at the start, " + load(noise.value("loadavg_after", nlohmann::json())) +
         " at the end; over the run the hypervisor took " +
         share(noise.value("steal_fraction", nlohmann::json())) + " of the CPU time (steal) and " +
         share(noise.value("idle_fraction", nlohmann::json())) + " was idle";
}

// Where the measuring thread ran (--pin), as results.json's method says.
std::string PinnedText(const RunResults& r) {
  const nlohmann::json pinned = r.method.value("pinned_cpu", nlohmann::json());
  if (pinned.is_number_integer()) {
    return " The measuring thread was pinned to CPU " + pinned.dump() + " (`--pin`).";
  }
  if (pinned.is_string()) return " The measuring thread was not pinned to a CPU.";
  return "";
}

// How the run's open legs and sources were measured, as its results.json
// `method` says (untrusted: escaped); a run that does not say is named so.
std::string MethodText(const RunResults& r) {
  auto said = [&](const char* key) -> std::string {
    auto it = r.method.find(key);
    return it != r.method.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string out;
  const std::string open = said("open_legs"), sources = said("sources");
  out += open.empty() ? "results.json does not say how its open legs were measured. "
                      : "Open legs: " + MdText(open) + ". ";
  if (!sources.empty()) out += "Sources: " + MdText(sources) + ". ";
  return out;
}

// How the run took a figure from its repetitions (harness::MicroEstimatorOf),
// in words that follow "the".
std::string EstimatorWord(const RunResults& r) {
  const std::string e = harness::MicroEstimatorOf(r);
  return e.empty() ? "figure, by an estimator this secmode does not know," : e;
}

// The micro figures' method, and how many were noisy.
std::string RepetitionsLine(const RunResults& r) {
  size_t noisy = 0, repeated = 0;
  for (const auto& row : r.micro) {
    if (row.m.repetitions_ns.size() > 1) ++repeated;
    if (row.m.noisy()) ++noisy;
  }
  if (repeated == 0) {
    return "Each figure was measured once (results.json written before secmode repeated its "
           "figures): no spread is known.";
  }
  std::string reps = r.method.contains("repetitions") ? r.method["repetitions"].dump() : "several";
  std::string warm = r.method.contains("warmup_ops") ? r.method["warmup_ops"].dump() : "a few";
  return "Each figure is the " + EstimatorWord(r) + " of " + reps +
         " repetitions on one association, after " + warm +
         " untimed warm-up operations; `cv` is the largest " +
         "coefficient of variation of the row's four legs over their repetitions, and a figure " +
         "whose cv exceeds " + Fmt("%.0f%%", 100 * harness::kNoisyCv) + " is marked *noisy* (" +
         std::to_string(noisy) + " of " + std::to_string(r.micro.size()) +
         " figures in this run; per figure in micro.csv and results.json)." + PinnedText(r);
}

std::string CvCell(const Cell& c) {
  if (c.repetitions <= 1) return "-";
  const double cv = c.MaxCv();
  return Fmt("%.1f%%", 100 * cv) + (cv > harness::kNoisyCv ? " *noisy*" : "");
}

std::string MicroMarkdown(const RunResults& r) {
  std::ostringstream out;
  const auto& m = r.machine;
  out << "# secmode report\n\n";
  out << "| | |\n|---|---|\n";
  out << "| command | " << MdCodeCell(r.command) << " |\n";
  out << "| started / finished | " << MdText(r.started_at) << " / " << MdText(r.finished_at)
      << " |\n";
  if (const std::string signal = InterruptedBy(r); !signal.empty()) {
    out << "| interrupted | by " << MdText(signal)
        << ": the run stopped early; what it did not measure is listed under Errors |\n";
  }
  out << "| CPU | " << MdText(m.cpu_model) << " (" << m.logical_cpus << " logical CPUs) |\n";
  std::string flags;
  for (const auto& f : m.cpu_flags) flags += (flags.empty() ? "" : " ") + f;
  out << "| CPU flags | " << MdText(flags) << " |\n";
  out << "| kernel | " << MdText(m.kernel) << " |\n";
  out << "| OpenSSL | " << MdText(m.openssl) << " |\n";
  out << "| Kerberos | " << MdText(m.krb5) << " |\n";
  out << "| compiler / build | " << MdText(m.compiler) << " / " << MdText(m.build_type) << " |\n";
  out << "| compiler flags | " << MdCodeCell(m.compiler_flags) << " |\n";
  out << "| secmode | " << MdText(m.secmode_commit)
      << (m.secmode_tree == "dirty"     ? " (tracked files changed since that commit)"
          : m.secmode_tree == "unknown" ? " (tree state unknown)"
                                        : "")
      << " |\n";
  std::string libs;
  for (const auto& [name, version] : m.libraries) {
    libs += (libs.empty() ? "" : "; ") + name + " " + version;
  }
  out << "| libraries (loaded, dpkg) | " << (libs.empty() ? "unknown" : MdText(libs)) << " |\n";
  out << "| TSC | " << Fmt("%.3f", m.tsc_ghz) << " GHz (cycles/byte are TSC ticks) |\n";
  out << "| machine noise | " << NoiseLine(r.noise) << " |\n\n";
  // A capture's trace measured no leg: no table of them.
  if (r.micro.empty() && r.sections.contains(kTraceSection)) return out.str();

  out << "## Per-operation cost of each leg\n\n"
         "For `sys` and `krb5*` the wire is a whole ONC RPC call or reply carrying an "
         "NFSv4.1-shaped COMPOUND of the given payload size (AUTH_SYS or RPCSEC_GSS); for `smb-*` "
         "a whole SMB2 WRITE request / READ response, signed or inside a TRANSFORM_HEADER. "
         "Each operation is timed alone with CLOCK_MONOTONIC. "
      << MethodText(r)
      << "`round trip` is the sum of the four legs (request sealed and opened, reply "
         "sealed and opened); `x sys` is that sum divided by sys's at the same size, measured in "
         "this run.\n\n"
      << RepetitionsLine(r) << "\n\n";
  for (const auto& [size, cells] : Cells(r)) {
    const Cell* sys = SysCell(cells);
    out << "### " << SizeLabel(size) << "\n\n";
    out << "| mode | engine | enctype | client-seal ns | server-open ns | server-seal ns | "
           "client-open ns | round trip ns | request MB/s | x sys | cv |\n";
    out << "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& [key, c] : cells) {
      double req = c.legs[0] + c.legs[1];
      out << "| " << MdText(std::get<0>(key)) << " | " << MdText(std::get<1>(key)) << " | "
          << (std::get<2>(key).empty() ? "-" : MdText(std::get<2>(key))) << " | "
          << Fmt("%.0f", c.legs[0]) << " | " << Fmt("%.0f", c.legs[1]) << " | "
          << Fmt("%.0f", c.legs[2]) << " | " << Fmt("%.0f", c.legs[3]) << " | "
          << Fmt("%.0f", c.RoundTrip()) << " | "
          << (req > 0 ? Fmt("%.1f", static_cast<double>(size) * 1e3 / req) : "-") << " | "
          << (sys && sys->RoundTrip() > 0 ? Fmt("%.2f", c.RoundTrip() / sys->RoundTrip()) : "-")
          << " | " << CvCell(c) << " |\n";
    }
    out << "\n";
  }
  if (!r.bounds.empty()) {
    out << "## Primitive bounds\n\n| primitive | size | MB/s |\n|---|---:|---:|\n";
    for (const auto& b : r.bounds) {
      out << "| " << MdText(b.primitive) << " | " << SizeLabel(b.size) << " | "
          << Fmt("%.1f", b.bytes_per_second / 1e6) << " |\n";
    }
    out << "\n";
  }
  out << "Percentiles (p50/p99/p99.9) for every row are in micro.csv and results.json.\n";
  return out.str();
}

// Section renderers in report order; the micro section's rows are drawn
// before them (MicroMarkdown), whether or not it has an object in
// RunResults::sections.
struct SectionRenderer {
  const char* name;  // key in RunResults::sections
  void (*render)(const RunResults&, const nlohmann::json&, Rendered&);
};
const SectionRenderer kRenderers[] = {
    {"noise-floor", RenderNoiseFloorSection},
    {"scaling", RenderScalingSection},
    {"gss", RenderGssSection},
    {"smb", RenderSmbSection},
    {"e2e", RenderE2eSection},
    {"smb-e2e", RenderSmbE2eSection},
    {"predictions", RenderPredictionsSection},
    {"lab", RenderLabSection},
    {"smb-lab", RenderSmbLabSection},
    {"windows", RenderWindowsSection},
    {"nconnect", RenderNconnectSection},
    {"nconnect-validation", RenderValidationSection},
    {kTraceSection, RenderTraceSection},
};

bool Draws(const std::string& section) {
  return std::any_of(std::begin(kRenderers), std::end(kRenderers),
                     [&](const SectionRenderer& s) { return section == s.name; });
}

// The keys of RunResults::sections no renderer draws (a results.json from a
// newer secmode, or edited), in the file's order.
std::vector<std::string> UndrawnSections(const RunResults& r) {
  std::vector<std::string> names;
  for (const auto& [name, section] : r.sections.items()) {
    if (!Draws(name)) names.push_back(name);
  }
  return names;
}

}  // namespace

std::vector<std::string> DrawnSections() {
  std::vector<std::string> names = {"micro"};
  for (const SectionRenderer& s : kRenderers) names.emplace_back(s.name);
  return names;
}

bool HasUndrawnRows(const RunResults& r) {
  return r.sections.empty() && (!r.e2e.empty() || !r.nconnect.empty());
}

common::Result<Rendered> RenderRun(const RunResults& r) {
  Rendered out;
  try {
    out.report_md = MicroMarkdown(r);
    for (const SectionRenderer& s : kRenderers) {
      if (!r.sections.contains(s.name)) continue;
      const nlohmann::json& section = r.sections[s.name];
      if (!section.is_object()) {
        // A section that failed before it wrote anything, or an edited file:
        // the rest of the report is still drawn.
        const std::string what = std::string("results.json section ") + s.name + " is " +
                                 section.type_name() + ", not an object: not drawn";
        out.warnings.push_back(what);
        out.report_md += "\nNote: results.json section " + MdCode(s.name) + " is " +
                         section.type_name() + ", not an object: not drawn.\n";
        continue;
      }
      s.render(r, section, out);
    }
  } catch (const nlohmann::json::exception& e) {
    // A value of the wrong type in a section or row (results.json was
    // edited, or written by a different secmode).
    return common::Status::Corrupt(std::string("results.json: cannot draw the report: ") +
                                   e.what());
  }
  if (HasUndrawnRows(r)) {
    const std::string what =
        "results.json has e2e or nconnect rows but no `sections` (written before secmode drew "
        "its reports from results.json alone): those parts are not drawn; their rows are in "
        "results.json";
    out.warnings.push_back(what);
    out.report_md += "\nNote: " + what + ".\n";
  }
  if (const std::vector<std::string> undrawn = UndrawnSections(r); !undrawn.empty()) {
    std::string text, md;
    for (const std::string& name : undrawn) {
      text += (text.empty() ? "" : ", ") + name;
      md += (md.empty() ? "" : ", ") + MdCode(name);
    }
    const std::string why =
        " (written by a newer secmode, or edited): not drawn; their data is in results.json";
    out.warnings.push_back("results.json has sections this secmode has no renderer for: " + text +
                           why);
    out.report_md +=
        "\nNote: results.json has sections this secmode has no renderer for: " + md + why + ".\n";
  }
  if (!r.errors.empty()) {
    out.report_md += "\n## Errors\n\nWhat this run could not measure (results.json `errors`):\n\n";
    for (const auto& e : r.errors) out.report_md += "- " + MdText(e.dump()) + "\n";
  }
  out.micro_csv = MicroCsv(r);
  if (auto html = HtmlReport(out.report_md, out.files); html.ok()) {
    out.report_html = std::move(html).value();
  } else {
    out.warnings.push_back("report.html not drawn: " + html.status().ToString());
  }
  return out;
}

std::string HeadlineMarkdown(const RunResults& r) {
  const auto cells = Cells(r);
  auto at = [&](size_t size) -> const std::map<Key, Cell, KeyOrder>* {
    auto it = cells.find(size);
    return it == cells.end() ? nullptr : &it->second;
  };
  const auto* small = at(4096);
  const auto* large = at(1u << 20);
  std::set<Key, KeyOrder> keys;
  for (const auto* c : {small, large}) {
    if (c) {
      for (const auto& [k, cell] : *c) keys.insert(k);
    }
  }
  auto baseline = [](const std::map<Key, Cell, KeyOrder>& c, const Key& k) -> const Cell* {
    const bool smb = std::get<0>(k).rfind("smb-", 0) == 0;
    for (const auto& [other, cell] : c) {
      if (std::get<0>(other) == (smb ? "smb-plain" : "sys")) return &cell;
    }
    return nullptr;
  };
  std::ostringstream out;
  out << "| mode | engine | round trip at 4 KiB, us | x baseline | request MB/s at 1 MiB | x "
         "baseline |\n|---|---|---:|---:|---:|---:|\n";
  for (const Key& k : keys) {
    out << "| " << MdText(std::get<0>(k))
        << (std::get<2>(k).empty() ? std::string() : " (" + MdText(std::get<2>(k)) + ")") << " | "
        << MdText(std::get<1>(k)) << " | ";
    const Cell* s = small && small->count(k) ? &small->at(k) : nullptr;
    const Cell* sb = s ? baseline(*small, k) : nullptr;
    out << (s ? Fmt("%.1f", s->RoundTrip() / 1e3) : "-") << " | "
        << (s && sb && sb->RoundTrip() > 0 ? Fmt("%.2f", s->RoundTrip() / sb->RoundTrip()) : "-")
        << " | ";
    const Cell* l = large && large->count(k) ? &large->at(k) : nullptr;
    const Cell* lb = l ? baseline(*large, k) : nullptr;
    auto mbs = [](const Cell& c) {
      const double req = c.legs[0] + c.legs[1];
      return req > 0 ? static_cast<double>(1u << 20) * 1e3 / req : 0.0;
    };
    out << (l ? Fmt("%.0f", mbs(*l)) : "-") << " | "
        << (l && lb && mbs(*lb) > 0 ? Fmt("%.2f", mbs(*l) / mbs(*lb)) : "-") << " |\n";
  }
  const auto& m = r.machine;
  std::string commit =
      m.secmode_commit.size() > 12 ? m.secmode_commit.substr(0, 12) : m.secmode_commit;
  if (m.secmode_tree == "dirty") commit += " (dirty tree)";
  out << "\nRound trip: the four legs of one call and reply (request sealed and opened, reply "
         "sealed and opened), each the "
      << EstimatorWord(r)
      << " of its repetitions. Request MB/s: payload bytes "
         "over the request's two legs. x baseline: the mode's figure over that of sys (NFS "
         "modes) or smb-plain (SMB modes) in the same run, so a round trip above 1 and a MB/s "
         "below 1 are what the mode costs. Measured by "
      << MdCode(r.command) << " on " << MdText(r.started_at) << ": " << MdText(m.cpu_model) << ", "
      << m.logical_cpus << " logical CPUs, " << MdText(m.kernel) << ", " << MdText(m.openssl)
      << ", " << MdText(m.krb5) << ", " << MdText(m.compiler) << "; secmode " << MdText(commit)
      << "; machine noise: " << NoiseLine(r.noise) << ".\n";
  return out.str();
}

std::string SummaryTable(const RunResults& r) {
  std::ostringstream out;
  out << common::Sprintf("%-44s %9s %14s %12s %8s\n", "mode", "size", "round trip ns",
                         "request MB/s", "x sys");
  for (const auto& [size, cells] : Cells(r)) {
    const Cell* sys = SysCell(cells);
    for (const auto& [key, c] : cells) {
      std::string name = std::get<0>(key);
      if (!std::get<2>(key).empty()) name += ":" + std::get<2>(key) + ":" + std::get<1>(key);
      double req = c.legs[0] + c.legs[1];
      out << common::Sprintf("%-44s %9s %14.0f %12.1f %8s\n", common::TerminalText(name).c_str(),
                             SizeLabel(size).c_str(), c.RoundTrip(),
                             req > 0 ? static_cast<double>(size) * 1e3 / req : 0.0,
                             sys && sys->RoundTrip() > 0
                                 ? Fmt("%.2f", c.RoundTrip() / sys->RoundTrip()).c_str()
                                 : "-");
    }
  }
  return out.str();
}

}  // namespace secmode::render
