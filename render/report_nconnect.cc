// Report part of section "nconnect": the simulator sweep's tables (largest
// safe slot count per window, skew and nconnect; one table per reaction at
// the plotted slot count) and its plots, drawn with gnuplot from the sweep
// rows of RunResults::nconnect (those without "kind").
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "common/format.h"
#include "render/gnuplot.h"
#include "render/markdown.h"
#include "render/report_sections.h"

namespace secmode::render {

using common::CsvField;
using common::Fmt;
using common::SizeLabel;
using common::SkewLabel;

namespace {

using common::Result;
using nlohmann::json;

// The sweep's axes, as sections.nconnect.grid has them.
struct Grid {
  json base;
  std::vector<int64_t> nconnect, window, slots, io_size, skew_ns;
  std::vector<std::string> reactions;
};

Grid ReadGrid(const json& g) {
  Grid grid;
  grid.base = g.value("base", json::object());
  grid.nconnect = g.value("nconnect", std::vector<int64_t>{});
  grid.window = g.value("window", std::vector<int64_t>{});
  grid.slots = g.value("slots", std::vector<int64_t>{});
  std::sort(grid.slots.begin(), grid.slots.end());
  grid.io_size = g.value("io_size", std::vector<int64_t>{});
  grid.skew_ns = g.value("skew_ns", std::vector<int64_t>{});
  grid.reactions = g.value("reactions", std::vector<std::string>{});
  return grid;
}

// The rows of one plotted slice: everything fixed but window, nconnect, slots.
struct Slice {
  std::string reaction;
  int64_t io_size, skew_ns;
};

// The sweep row for one point of a slice, or null.
const json* Find(const std::vector<const json*>& rows, const Slice& s, int64_t window,
                 int64_t nconnect, int64_t slots) {
  for (const json* row : rows) {
    if (row->contains("error")) continue;
    if (row->value("reaction", "") == s.reaction && IntField(*row, "io_size") == s.io_size &&
        IntField(*row, "skew_ns") == s.skew_ns && IntField(*row, "window") == window &&
        IntField(*row, "nconnect") == nconnect && IntField(*row, "slots") == slots) {
      return row;
    }
  }
  return nullptr;
}

// Largest slot count of the grid at which this and every smaller slot count
// had no violations; 0 if even the smallest had some, -1 if no rows.
int64_t MaxSafeSlots(const std::vector<const json*>& rows, const Grid& g, const Slice& s,
                     int64_t window, int64_t n) {
  int64_t best = 0;
  for (int64_t k : g.slots) {
    const json* row = Find(rows, s, window, n, k);
    if (row == nullptr) return -1;
    if (IntField(*row, "violations") > 0) break;
    best = k;
  }
  return best;
}

// How a simulator speed (sections.nconnect.simulator_speed*) was timed: the
// median of several runs after a cold one (spread over the sweep, or in
// older runs back to back), or (older runs still) one run.
std::string SpeedRuns(const json& speed) {
  const int64_t runs = IntField(speed, "runs");
  const std::string run = std::to_string(IntField(speed, "rpcs")) + " RPCs";
  const std::string times = Fmt("%.3f", speed.value("cpu_seconds", 0.0)) +
                            " s of thread CPU time, " +
                            Fmt("%.3f", speed.value("wall_seconds", 0.0)) + " s wall";
  if (runs <= 1) return run + " in " + times;
  return "median of " + std::to_string(runs) + " runs of " + run +
         (speed.value("interleaved", false) ? " spread over the sweep" : "") + " after a cold one, " +
         Fmt("%.2f", speed.value("min_rpcs_per_second", 0.0) / 1e6) + "-" +
         Fmt("%.2f", speed.value("max_rpcs_per_second", 0.0) / 1e6) + " M; the cold run " +
         Fmt("%.2f", speed.value("cold_rpcs_per_second", 0.0) / 1e6) + " M; the median run " +
         times;
}

std::string SliceLabel(const Grid& g, const Slice& s) {
  return SizeLabel(static_cast<uint64_t>(s.io_size)) + " " + g.base.value("op", "") + ", " +
         SkewLabel(s.skew_ns) + " on one connection, " + s.reaction;
}

// Violations or goodput vs nconnect, one line per window.
Result<std::string> LinePlot(const std::vector<const json*>& rows, const Grid& g, const Slice& s,
                             int64_t slots, bool goodput) {
  std::ostringstream data, script;
  std::string plot;
  int index = 0;
  for (int64_t w : g.window) {
    data << "# window " << w << "\n";
    for (int64_t n : g.nconnect) {
      const json* row = Find(rows, s, w, n, slots);
      if (row == nullptr) continue;
      data << n << " ";
      if (goodput) {
        data << row->value("mb_per_s", 0.0) << "\n";
      } else {
        data << IntField(*row, "violations") << "\n";
      }
    }
    data << "\n\n";
    plot += std::string(plot.empty() ? "plot " : ", ") + "'slice.dat' index " +
            std::to_string(index++) + " using 1:2 with linespoints lw 2 title 'window " +
            std::to_string(w) + "'";
  }
  script << "set terminal svg size 900,500 dynamic font 'sans,12'\n"
         << "set output 'out.svg'\n"
         << "set title "
         << GnuplotQuote(std::string(goodput ? "Goodput" : "Window violations") + ", " +
                         std::to_string(slots) + " slots, " + SliceLabel(g, s))
         << "\nset xlabel 'nconnect'\nset ylabel "
         << GnuplotQuote(goodput ? "goodput (MB/s)"
                                 : "violations in " + std::to_string(IntField(g.base, "ops")) +
                                       " operations")
         << "\nset logscale x 2\nset grid\nset key outside right\nset yrange [0:*]\n"
         << plot << "\n";
  return RunGnuplot(script.str(), {{"slice.dat", data.str()}}, "out.svg");
}

// Safe (no violations) or unsafe, slots x nconnect, one panel per window.
Result<std::string> SafeMap(const std::vector<const json*>& rows, const Grid& g, const Slice& s) {
  std::ostringstream data, script;
  std::string xtics, ytics;
  for (size_t i = 0; i < g.nconnect.size(); ++i) {
    xtics +=
        (i ? ", " : "") + GnuplotQuote(std::to_string(g.nconnect[i])) + " " + std::to_string(i);
  }
  for (size_t j = 0; j < g.slots.size(); ++j) {
    ytics += (j ? ", " : "") + GnuplotQuote(std::to_string(g.slots[j])) + " " + std::to_string(j);
  }
  const size_t panels = g.window.size();
  script << "set terminal svg size " << 320 * panels + 80 << ",420 dynamic font 'sans,12'\n"
         << "set output 'out.svg'\n"
         << "set multiplot layout 1," << panels << " title "
         << GnuplotQuote("Safe (green: no violations) / unsafe (red), " + SliceLabel(g, s)) << "\n"
         << "set palette defined (0 '#2e8b57', 1 '#d62728')\nset cbrange [0:1]\nunset colorbox\n"
         << "set xtics (" << xtics << ")\nset ytics (" << ytics << ")\n"
         << "set xrange [-0.5:" << g.nconnect.size() - 0.5 << "]\n"
         << "set yrange [-0.5:" << g.slots.size() - 0.5 << "]\n"
         << "set xlabel 'nconnect'\nset ylabel 'slots'\n";
  int index = 0;
  for (int64_t w : g.window) {
    for (size_t j = 0; j < g.slots.size(); ++j) {
      for (size_t i = 0; i < g.nconnect.size(); ++i) {
        const json* row = Find(rows, s, w, g.nconnect[i], g.slots[j]);
        data << i << " " << j << " " << (row && IntField(*row, "violations") == 0 ? 0 : 1) << "\n";
      }
      data << "\n";
    }
    data << "\n";
    script << "set title 'window " << w << "'\nplot 'safe.dat' index " << index++
           << " using 1:2:3 with image notitle\n";
  }
  script << "unset multiplot\n";
  return RunGnuplot(script.str(), {{"safe.dat", data.str()}}, "out.svg");
}

}  // namespace

void RenderNconnectSection(const harness::RunResults& r, const json& section, Rendered& out) {
  const Grid grid = ReadGrid(section.value("grid", json::object()));
  std::vector<const json*> rows;
  for (const auto& row : r.nconnect) {
    if (!row.contains("kind")) rows.push_back(&row);
  }
  if (grid.reactions.empty() || grid.io_size.empty() || grid.skew_ns.empty() ||
      grid.slots.empty()) {
    out.warnings.push_back("nconnect section without a grid: not rendered");
    return;
  }
  const json& base = grid.base;
  const json speed = section.value("simulator_speed", json::object());
  const json speed_all = section.value("simulator_speed_every_mechanism", json::object());

  // What the report and the plots show.
  Slice slice{grid.reactions.front(), grid.io_size.front(),
              *std::max_element(grid.skew_ns.begin(), grid.skew_ns.end())};
  if (std::count(grid.io_size.begin(), grid.io_size.end(), 65536)) slice.io_size = 65536;
  int64_t plot_slots = grid.slots.back();
  if (std::count(grid.slots.begin(), grid.slots.end(), 256)) plot_slots = 256;

  const int64_t failed = IntField(section, "failed"), truncated = IntField(section, "truncated");
  std::ostringstream md;
  md << "## nconnect with a shared RPCSEC_GSS sequence window (simulated)\n\n"
     << "Discrete-event simulation of one client and one server (sim/simulator.h): requests "
        "numbered at encode time from one counter shared by all connections (as the Linux client "
        "does), spread round-robin over nconnect TCP connections with per-connection send "
        "queues and bandwidth, one connection delayed by the skew before its socket, the server "
        "checking each number against its window (RFC 2203 section 5.3.3.1). A violation is a "
        "call whose number arrived a window or more below the highest seen. Each scenario runs "
        "until "
     << IntField(base, "ops")
     << " operations completed; every row of results.json `nconnect` has all "
        "parameters, all outputs and the seed ("
     << base.value("seed", uint64_t{0})
     << "), and re-running it gives the same numbers bit for bit.\n\n"
     << "| | |\n|---|---|\n"
     << "| crypto cost per message | " << MdText(section.value("cost_source", "")) << " |\n"
     << "| base scenario | RTT " << Fmt("%.3f", IntField(base, "rtt_ns") / 1e6) << " ms, jitter "
     << MdText(base.value("jitter_dist", "")) << " mean "
     << Fmt("%.3f", IntField(base, "jitter_ns") / 1e6) << " ms, "
     << Fmt("%.2f", base.value("bandwidth_bytes_per_s", 0.0) * 8 / 1e9)
     << " Gbit/s per connection, " << IntField(base, "server_threads") << " server threads ("
     << MdText(base.value("server_order", "")) << " order), service "
     << MdText(base.value("service_dist", "")) << " mean "
     << Fmt("%.3f", IntField(base, "service_ns") / 1e6) << " ms, re-encode "
     << (base.value("reencode", false) ? "on" : "off") << ", GSS context setup "
     << Fmt("%.1f", IntField(base, "gss_setup_ns") / 1e6) << " ms |\n"
     << "| simulator speed | " << Fmt("%.2f", speed.value("rpcs_per_second", 0.0) / 1e6)
     << " M simulated RPCs per CPU-second on one core (default scenario, " << SpeedRuns(speed)
     << ")"
     << (speed_all.empty()
             ? std::string()
             : "; " + Fmt("%.2f", speed_all.value("rpcs_per_second", 0.0) / 1e6) +
                   " M with every mechanism of the thread model on (receiver and server threads, "
                   "batches, " +
                   std::to_string(IntField(speed_all, "cores")) +
                   " cores with a run queue each, time slice and wakeup preemption; " +
                   SpeedRuns(speed_all) + ")")
     << " |\n"
     << "| sweep | " << IntField(section, "scenarios") << " scenarios, "
     << IntField(section, "total_ops") << " operations, "
     << Fmt("%.1f", section.value("wall_seconds", 0.0)) << " s wall on "
     << IntField(section, "threads") << " threads"
     << (failed ? ", " + std::to_string(failed) + " failed (see rows' \"error\")" : "")
     << (truncated ? ", " + std::to_string(truncated) +
                         " thrashing scenarios cut at their event budget (\"truncated\")"
                   : "")
     << " |\n\n";

  {
    // Whether a violation happens does not depend on the reaction (the runs
    // are identical up to the first one), only what it costs does.
    Slice s = slice;
    md << "### Largest safe slot count, " << SizeLabel(static_cast<uint64_t>(s.io_size)) << " "
       << MdText(base.value("op", "")) << "\n\n"
       << "The largest slot count of the grid at which it and every smaller one had no "
          "violations (0: none safe). The server's reaction does not change where the first "
          "violation happens, only what it costs (tables below).\n\n| window | skew |";
    for (int64_t n : grid.nconnect) md << " nconnect " << n << " |";
    md << "\n|---:|---:|";
    for (size_t i = 0; i < grid.nconnect.size(); ++i) md << "---:|";
    md << "\n";
    for (int64_t w : grid.window) {
      for (int64_t skew : grid.skew_ns) {
        s.skew_ns = skew;
        md << "| " << w << " | " << Fmt("%g", skew / 1e6) << " ms |";
        for (int64_t n : grid.nconnect) {
          int64_t best = MaxSafeSlots(rows, grid, s, w, n);
          md << " " << (best < 0 ? std::string("-") : std::to_string(best)) << " |";
        }
        md << "\n";
      }
    }
    md << "\n";
  }

  for (const std::string& reaction : grid.reactions) {
    Slice s = slice;
    s.reaction = reaction;
    md << "### " << plot_slots << " slots, " << MdText(SliceLabel(grid, s)) << "\n\n"
       << "| window | nconnect | violations | disconnects | context re-creations | "
          "retransmitted MB | goodput MB/s | ops/s | p50 ms | p99 ms | p99.9 ms | stalled |\n"
       << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (int64_t w : grid.window) {
      for (int64_t n : grid.nconnect) {
        const json* row = Find(rows, s, w, n, plot_slots);
        if (row == nullptr) continue;
        const json& x = *row;
        md << "| " << w << " | " << n << " | " << IntField(x, "violations") << " | "
           << IntField(x, "disconnects") << " | " << IntField(x, "context_recreations") << " | "
           << Fmt("%.1f", IntField(x, "retransmitted_bytes") / 1e6) << " | "
           << Fmt("%.1f", x.value("mb_per_s", 0.0)) << " | "
           << Fmt("%.0f", x.value("ops_per_s", 0.0)) << " | "
           << Fmt("%.3f", IntField(x, "p50_ns") / 1e6) << " | "
           << Fmt("%.3f", IntField(x, "p99_ns") / 1e6) << " | "
           << Fmt("%.3f", IntField(x, "p999_ns") / 1e6) << " | "
           << Fmt("%.3f", x.value("stalled_fraction", 0.0))
           << (x.value("truncated", false) ? " (truncated)" : "") << " |\n";
      }
    }
    md << "\n";
  }

  struct PlotJob {
    const char* file;
    const char* what;
    Result<std::string> svg;
  };
  PlotJob plots[] = {
      {"nconnect-violations.svg", "violations vs nconnect",
       LinePlot(rows, grid, slice, plot_slots, false)},
      {"nconnect-goodput.svg", "goodput vs nconnect",
       LinePlot(rows, grid, slice, plot_slots, true)},
      {"nconnect-safe.svg", "safe/unsafe map", SafeMap(rows, grid, slice)},
  };
  for (auto& p : plots) {
    if (p.svg.ok()) {
      out.files.emplace_back(p.file, *p.svg);
      md << "![" << p.what << "](" << p.file << ")\n\n";
    } else {
      out.warnings.push_back(std::string("plot ") + p.file +
                             " failed: " + p.svg.status().ToString());
      md << "(plot " << p.file << " could not be drawn: " << MdText(p.svg.status().ToString())
         << "; the numbers are in the tables and results.json)\n\n";
    }
  }
  out.report_md.append("\n").append(md.str());
}

}  // namespace secmode::render
