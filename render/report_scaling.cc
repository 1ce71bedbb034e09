// The "scaling" section: per mode, the aggregate throughput at each thread
// count with its per-thread efficiency, and a plot of the speedup over one
// thread (suite/section_scaling.cc computes; this only draws).
#include <map>
#include <sstream>
#include <vector>

#include "common/format.h"
#include "render/gnuplot.h"
#include "render/markdown.h"
#include "render/report_sections.h"

namespace secmode::render {

using common::Fmt;
using nlohmann::json;

namespace {

std::string ModeLabel(const json& row) {
  std::string name = row.at("mode").get<std::string>();
  const std::string enctype = row.value("enctype", "");
  if (!enctype.empty()) name += ":" + enctype + ":" + row.value("engine", "");
  if (row.value("context", "own") == "shared") name += " (one shared context)";
  return name;
}

}  // namespace

void RenderScalingSection(const harness::RunResults&, const json& section, Rendered& out) {
  std::ostringstream md;
  const std::vector<size_t> counts = section.at("thread_counts").get<std::vector<size_t>>();
  const size_t cpus = section.at("logical_cpus").get<size_t>();
  if (counts.empty()) {
    out.report_md += "\n## Core scaling\n\nresults.json records no thread counts for it.\n";
    return;
  }
  md << "\n## Core scaling\n\n"
     << "Each mode with 1 to " << cpus << " threads and " << cpus + 1
     << " (more threads than logical CPUs: oversubscribed, marked *), each thread with an "
        "association of its own doing round trips (the four legs in order) on "
     << common::SizeLabel(section.at("size").get<size_t>())
     << " payloads; all threads start together and the figure is the round trips they "
        "completed in "
     << Fmt("%.2f", section.at("seconds").get<double>()) << " s of wall time, the median of "
     << section.at("repetitions").get<int>()
     << " repetitions. MB/s is payload bytes per second of all threads together; efficiency "
        "is that over the thread count times the one-thread figure of this run (1.00: "
        "perfect scaling).";
  bool shared = false;
  for (const json& row : section.at("rows")) shared |= row.value("context", "own") == "shared";
  if (shared) {
    md << " Each krb5p mode is measured again with one context shared by all its threads, the "
          "way nconnect's connections share one (rows \"one shared context\"): the native "
          "engine seals and opens on each thread's own copy of the context's keys in parallel, "
          "MIT's library is serialised per context; only the sequence counter and the window are "
          "shared (the server's window is "
       << section.value("shared_context_window", 0)
       << " calls there, so a thread descheduled between numbering a call and the server's "
          "check never falls out of it: these rows measure the crypto, the nconnect sections "
          "the window).";
  }
  md << "\n\n";
  if (section.contains("interrupted") && section["interrupted"].is_string()) {
    md << "Interrupted by " << MdText(section["interrupted"].get<std::string>())
       << ": the modes after the last row were not measured (see Errors).\n\n";
  }
  // mode -> threads -> row, in the order the rows came.
  std::vector<std::string> order;
  std::map<std::string, std::map<size_t, const json*>> by_mode;
  for (const json& row : section.at("rows")) {
    const std::string m = ModeLabel(row);
    if (!by_mode.count(m)) order.push_back(m);
    by_mode[m][row.at("threads").get<size_t>()] = &row;
  }
  if (order.empty()) {
    md << "No mode was measured (see Errors).\n";
    out.report_md += md.str();
    return;
  }
  md << "| mode |";
  for (size_t t : counts) md << " " << t << (t > cpus ? "* " : " ") << "threads MB/s (eff.) |";
  md << "\n|---|";
  for (size_t i = 0; i < counts.size(); ++i) md << "---:|";
  md << "\n";
  std::ostringstream data;
  std::string plot;
  int index = 0;
  for (const std::string& m : order) {
    md << "| " << MdText(m) << " |";
    const auto& rows = by_mode[m];
    double one = 0;
    if (auto it = rows.find(1); it != rows.end()) {
      one = it->second->at("round_trips_per_second").get<double>();
    }
    for (size_t t : counts) {
      auto it = rows.find(t);
      if (it == rows.end()) {
        md << " - |";
        continue;
      }
      const json& row = *it->second;
      const double cv = row.value("cv", 0.0);
      md << " " << Fmt("%.1f", row.at("bytes_per_second").get<double>() / 1e6);
      if (row.contains("efficiency") && row["efficiency"].is_number()) {
        md << " (" << Fmt("%.2f", row["efficiency"].get<double>()) << ")";
      }
      if (cv > harness::kNoisyCv) md << " *noisy*";
      md << " |";
      if (one > 0) {
        data << t << " " << row.at("round_trips_per_second").get<double>() / one << "\n";
      }
    }
    md << "\n";
    if (one > 0) {
      data << "\n\n";
      plot += std::string(plot.empty() ? "plot " : ", ") + "'scaling.dat' index " +
              std::to_string(index++) + " using 1:2 with linespoints lw 2 title " + GnuplotQuote(m);
    }
  }
  if (!plot.empty()) {
    std::ostringstream script;
    script << "set terminal svg size 1000,560 dynamic font 'sans,11'\n"
           << "set output 'out.svg'\n"
           << "set title "
           << GnuplotQuote(
                  "Speedup over one thread (own association per thread unless the mode says one "
                  "shared context)")
           << "\nset xlabel 'threads (" << cpus << " logical CPUs)'\nset ylabel 'speedup'\n"
           << "set grid\nset key outside right\nset xrange [0.8:" << counts.back() + 0.2
           << "]\nset yrange [0:*]\nset xtics 1\n"
           << plot << ", (x <= " << cpus
           << " ? x : 1/0) with lines dt 2 lc 'black' title 'ideal'\n";
    auto svg = RunGnuplot(script.str(), {{"scaling.dat", data.str()}}, "out.svg");
    if (svg.ok()) {
      out.files.emplace_back("scaling.svg", *svg);
      md << "\n![speedup over one thread](scaling.svg)\n";
    } else {
      out.warnings.push_back("plot scaling.svg failed: " + svg.status().ToString());
      md << "\n(plot scaling.svg could not be drawn: " << MdText(svg.status().ToString()) << ")\n";
    }
  }
  out.report_md += md.str();
}

}  // namespace secmode::render
