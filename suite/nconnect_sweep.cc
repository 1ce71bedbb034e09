#include "bench/nconnect_sweep.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "common/clock.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "sim/simulator.h"

namespace secmode::bench {

using common::Result;
using common::Status;
using sim::Scenario;
using sim::SweepRow;

namespace {

std::string Fmt(const char* f, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string SizeLabel(int64_t size) {
  if (size >= (1 << 20) && size % (1 << 20) == 0) return std::to_string(size >> 20) + " MiB";
  if (size >= 1024 && size % 1024 == 0) return std::to_string(size >> 10) + " KiB";
  return std::to_string(size) + " B";
}

std::string SkewLabel(int64_t ns) {
  if (ns == 0) return "no skew";
  return Fmt("%g", static_cast<double>(ns) / 1e6) + " ms skew";
}

// The rows of one plotted slice: everything fixed but window, nconnect, slots.
struct Slice {
  sim::Reaction reaction;
  int64_t io_size, skew_ns;
};

bool InSlice(const SweepRow& row, const Slice& s) {
  return row.error.empty() && row.scenario.reaction == s.reaction &&
         row.scenario.io_size == s.io_size && row.scenario.skew_ns == s.skew_ns;
}

const SweepRow* Find(const std::vector<SweepRow>& rows, const Slice& s, int64_t window, int n,
                     int64_t slots) {
  for (const auto& row : rows) {
    if (InSlice(row, s) && row.scenario.window == window && row.scenario.nconnect == n &&
        row.scenario.slots == slots) {
      return &row;
    }
  }
  return nullptr;
}

// Largest slot count of the grid at which this and every smaller slot count
// had no violations; 0 if even the smallest had some, -1 if no rows.
int64_t MaxSafeSlots(const std::vector<SweepRow>& rows, const sim::SweepGrid& g, const Slice& s,
                     int64_t window, int n) {
  std::vector<int64_t> slots = g.slots;
  std::sort(slots.begin(), slots.end());
  int64_t best = 0;
  for (int64_t k : slots) {
    const SweepRow* row = Find(rows, s, window, n, k);
    if (row == nullptr) return -1;
    if (row->result.violations > 0) break;
    best = k;
  }
  return best;
}

// Runs gnuplot on `script` in a fresh temporary directory holding the `data`
// files (the script names them relatively), and returns the contents of the
// file the script wrote as `output`.
Result<std::string> Gnuplot(const std::string& script,
                            const std::vector<std::pair<std::string, std::string>>& data,
                            const std::string& output) {
  if (common::FindProgram("gnuplot").empty()) {
    return Status::Unavailable("gnuplot not found (Debian package gnuplot-nox)");
  }
  SECMODE_ASSIGN_OR_RETURN(std::string dir, common::MakeTempDirectory("secmode-plot-"));
  struct Cleanup {
    std::string dir;
    ~Cleanup() { (void)common::RemoveTree(dir); }
  } cleanup{dir};
  for (const auto& [name, contents] : data) {
    SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir + "/" + name, contents));
  }
  SECMODE_RETURN_IF_ERROR(
      common::WriteFileAtomically(dir + "/plot.gp", "cd '" + dir + "'\n" + script));
  common::Command cmd;
  cmd.argv = {"gnuplot", dir + "/plot.gp"};
  cmd.log_path = dir + "/gnuplot.log";
  SECMODE_ASSIGN_OR_RETURN(int rc, common::RunAndWait(cmd, 30000));
  if (rc != 0) {
    return Status::Internal("gnuplot exited " + std::to_string(rc) + ": " +
                            common::TailOfFile(cmd.log_path, 5));
  }
  auto out = common::ReadFile(dir + "/" + output);
  if (!out.ok() || out->empty()) {
    return Status::Internal("gnuplot wrote no " + output + ": " +
                            common::TailOfFile(cmd.log_path, 5));
  }
  return *out;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::string SliceLabel(const sim::SweepGrid& g, const Slice& s) {
  return SizeLabel(s.io_size) + " " + sim::OpName(g.base.op) + ", " + SkewLabel(s.skew_ns) +
         " on one connection, " + sim::ReactionName(s.reaction);
}

// Violations or goodput vs nconnect, one line per window.
Result<std::string> LinePlot(const std::vector<SweepRow>& rows, const sim::SweepGrid& g,
                             const Slice& s, int64_t slots, bool goodput) {
  std::ostringstream data, script;
  std::string plot;
  int index = 0;
  for (int64_t w : g.window) {
    data << "# window " << w << "\n";
    for (int n : g.nconnect) {
      const SweepRow* row = Find(rows, s, w, n, slots);
      if (row == nullptr) continue;
      data << n << " " << (goodput ? row->result.mb_per_s : row->result.violations) << "\n";
    }
    data << "\n\n";
    plot += std::string(plot.empty() ? "plot " : ", ") + "'slice.dat' index " +
            std::to_string(index++) + " using 1:2 with linespoints lw 2 title 'window " +
            std::to_string(w) + "'";
  }
  script << "set terminal svg size 900,500 dynamic font 'sans,12'\n"
         << "set output 'out.svg'\n"
         << "set title "
         << Quote(std::string(goodput ? "Goodput" : "Window violations") + ", " +
                  std::to_string(slots) + " slots, " + SliceLabel(g, s))
         << "\nset xlabel 'nconnect'\nset ylabel "
         << Quote(goodput ? "goodput (MB/s)"
                          : "violations in " + std::to_string(g.base.ops) + " operations")
         << "\nset logscale x 2\nset grid\nset key outside right\nset yrange [0:*]\n"
         << plot << "\n";
  return Gnuplot(script.str(), {{"slice.dat", data.str()}}, "out.svg");
}

// Safe (no violations) or unsafe, slots x nconnect, one panel per window.
Result<std::string> SafeMap(const std::vector<SweepRow>& rows, const sim::SweepGrid& g,
                            const Slice& s) {
  std::vector<int64_t> slots = g.slots;
  std::sort(slots.begin(), slots.end());
  std::ostringstream data, script;
  std::string xtics, ytics;
  for (size_t i = 0; i < g.nconnect.size(); ++i) {
    xtics += (i ? ", " : "") + Quote(std::to_string(g.nconnect[i])) + " " + std::to_string(i);
  }
  for (size_t j = 0; j < slots.size(); ++j) {
    ytics += (j ? ", " : "") + Quote(std::to_string(slots[j])) + " " + std::to_string(j);
  }
  const size_t panels = g.window.size();
  script << "set terminal svg size " << 320 * panels + 80 << ",420 dynamic font 'sans,12'\n"
         << "set output 'out.svg'\n"
         << "set multiplot layout 1," << panels << " title "
         << Quote("Safe (green: no violations) / unsafe (red), " + SliceLabel(g, s)) << "\n"
         << "set palette defined (0 '#2e8b57', 1 '#d62728')\nset cbrange [0:1]\nunset colorbox\n"
         << "set xtics (" << xtics << ")\nset ytics (" << ytics << ")\n"
         << "set xrange [-0.5:" << g.nconnect.size() - 0.5 << "]\n"
         << "set yrange [-0.5:" << slots.size() - 0.5 << "]\n"
         << "set xlabel 'nconnect'\nset ylabel 'slots'\n";
  int index = 0;
  for (int64_t w : g.window) {
    for (size_t j = 0; j < slots.size(); ++j) {
      for (size_t i = 0; i < g.nconnect.size(); ++i) {
        const SweepRow* row = Find(rows, s, w, g.nconnect[i], slots[j]);
        data << i << " " << j << " " << (row && row->result.violations == 0 ? 0 : 1) << "\n";
      }
      data << "\n";
    }
    data << "\n";
    script << "set title 'window " << w << "'\nplot 'safe.dat' index " << index++
           << " using 1:2:3 with image notitle\n";
  }
  script << "unset multiplot\n";
  return Gnuplot(script.str(), {{"safe.dat", data.str()}}, "out.svg");
}

// Mean of the four legs per payload size for each krb5p association.
using AssocKey = std::pair<std::string, std::string>;  // enctype, engine

}  // namespace

bool FitCostsFromMicro(const RunResults& results, Scenario& scenario, std::string* source) {
  std::map<AssocKey, std::map<size_t, std::pair<double, int>>> by;
  for (const auto& row : results.micro) {
    if (row.mode != "krb5p" || row.threads != 1 || row.m.ns_per_op <= 0) continue;
    auto& cell = by[{row.enctype, row.engine}][row.size];
    cell.first += row.m.ns_per_op;
    cell.second += 1;
  }
  for (const auto& [key, sizes] : by) {
    std::vector<std::pair<double, double>> pts;
    for (const auto& [size, cell] : sizes) {
      if (cell.second == 4) pts.emplace_back(static_cast<double>(size), cell.first / 4);
    }
    if (pts.size() < 2) continue;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double n = static_cast<double>(pts.size());
    for (const auto& [x, y] : pts) {
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    const double den = n * sxx - sx * sx;
    if (den <= 0) continue;
    const double b = std::max(0.0, (n * sxy - sx * sy) / den);
    const double a = std::max(0.0, (sy - b * sx) / n);
    scenario.cost_fixed_ns = a;
    scenario.cost_ns_per_byte = b;
    if (source) {
      *source = "fitted to this run's micro results for krb5p:" + key.first + ":" + key.second +
                " (mean of the four legs at " + std::to_string(pts.size()) +
                " sizes): " + Fmt("%.0f", a) + " ns + " + Fmt("%.3f", b) + " ns/byte per message";
    }
    return true;
  }
  return false;
}

Result<SimSpeed> MeasureSimSpeed(const Scenario& scenario) {
  const uint64_t t0 = common::NowNs();
  const double c0 = (static_cast<double>(common::ThreadCpuNs()) / 1e9);
  SECMODE_ASSIGN_OR_RETURN(sim::ScenarioResult r, sim::Simulate(scenario));
  SimSpeed speed;
  speed.cpu_seconds = (static_cast<double>(common::ThreadCpuNs()) / 1e9) - c0;
  speed.wall_seconds = static_cast<double>(common::NowNs() - t0) / 1e9;
  speed.rpcs = r.completed;
  speed.rpcs_per_second =
      speed.cpu_seconds > 0 ? static_cast<double>(r.completed) / speed.cpu_seconds : 0;
  return speed;
}

Status AddNconnectSweep(const sim::SweepGrid& grid, const std::string& cost_source, int threads,
                        RunResults& results, std::ostream& log) {
  if (grid.size() == 0) return Status::InvalidArgument("nconnect sweep: empty grid");
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  if (threads <= 0) threads = 1;
  // The simulator's own speed on the default scenario, one thread.
  Scenario speed_scenario;
  speed_scenario.ops = 200000;
  SECMODE_ASSIGN_OR_RETURN(SimSpeed speed, MeasureSimSpeed(speed_scenario));
  log << " [simulator: " << Fmt("%.2f", speed.rpcs_per_second / 1e6)
      << " M simulated RPCs per CPU-second]" << std::flush;

  const std::vector<Scenario> scenarios = grid.Expand();
  const uint64_t t0 = common::NowNs();
  const std::vector<SweepRow> rows = sim::RunSweep(scenarios, threads);
  const double wall = static_cast<double>(common::NowNs() - t0) / 1e9;
  int64_t total_ops = 0, errors = 0, truncated = 0;
  for (const auto& row : rows) {
    results.nconnect.push_back(row.ToJson());
    total_ops += row.result.completed;
    errors += row.error.empty() ? 0 : 1;
    truncated += row.result.truncated ? 1 : 0;
  }
  log << " [" << rows.size() << " scenarios in " << Fmt("%.1f", wall) << " s]" << std::flush;

  // What the report and the plots show.
  Slice slice{grid.reactions.front(), grid.io_size.front(),
              *std::max_element(grid.skew_ns.begin(), grid.skew_ns.end())};
  if (std::count(grid.io_size.begin(), grid.io_size.end(), 65536)) slice.io_size = 65536;
  int64_t plot_slots = *std::max_element(grid.slots.begin(), grid.slots.end());
  if (std::count(grid.slots.begin(), grid.slots.end(), 256)) plot_slots = 256;

  std::ostringstream md;
  md << "## nconnect with a shared RPCSEC_GSS sequence window (simulated)\n\n"
     << "Discrete-event simulation of one client and one server (sim/simulator.h): requests "
        "numbered at encode time from one counter shared by all connections (as the Linux client "
        "does), spread round-robin over nconnect TCP connections with per-connection send "
        "queues and bandwidth, one connection delayed by the skew before its socket, the server "
        "checking each number against its window (RFC 2203 section 5.3.3.1). A violation is a "
        "call whose number arrived a window or more below the highest seen. Each scenario runs "
        "until "
     << grid.base.ops
     << " operations completed; every row of results.json `nconnect` has all "
        "parameters, all outputs and the seed ("
     << grid.base.seed << "), and re-running it gives the same numbers bit for bit.\n\n"
     << "| | |\n|---|---|\n"
     << "| crypto cost per message | " << cost_source << " |\n"
     << "| base scenario | RTT " << Fmt("%.3f", grid.base.rtt_ns / 1e6) << " ms, jitter "
     << sim::DistName(grid.base.jitter_dist) << " mean " << Fmt("%.3f", grid.base.jitter_ns / 1e6)
     << " ms, " << Fmt("%.2f", grid.base.bandwidth_bytes_per_s * 8 / 1e9)
     << " Gbit/s per connection, " << grid.base.server_threads << " server threads ("
     << sim::ServerOrderName(grid.base.server_order) << " order), service "
     << sim::DistName(grid.base.service_dist) << " mean " << Fmt("%.3f", grid.base.service_ns / 1e6)
     << " ms, re-encode " << (grid.base.reencode ? "on" : "off") << ", GSS context setup "
     << Fmt("%.1f", grid.base.gss_setup_ns / 1e6) << " ms |\n"
     << "| simulator speed | " << Fmt("%.2f", speed.rpcs_per_second / 1e6)
     << " M simulated RPCs per CPU-second on one core (default scenario, " << speed.rpcs
     << " RPCs in " << Fmt("%.3f", speed.cpu_seconds) << " s of thread CPU time, "
     << Fmt("%.3f", speed.wall_seconds) << " s wall) |\n"
     << "| sweep | " << rows.size() << " scenarios, " << total_ops << " operations, "
     << Fmt("%.1f", wall) << " s wall on " << threads << " threads"
     << (errors ? ", " + std::to_string(errors) + " failed (see rows' \"error\")" : "")
     << (truncated ? ", " + std::to_string(truncated) +
                         " thrashing scenarios cut at their event budget (\"truncated\")"
                   : "")
     << " |\n\n";

  {
    // Whether a violation happens does not depend on the reaction (the runs
    // are identical up to the first one), only what it costs does.
    Slice s = slice;
    md << "### Largest safe slot count, " << SizeLabel(s.io_size) << " "
       << sim::OpName(grid.base.op) << "\n\n"
       << "The largest slot count of the grid at which it and every smaller one had no "
          "violations (0: none safe). The server's reaction does not change where the first "
          "violation happens, only what it costs (tables below).\n\n| window | skew |";
    for (int n : grid.nconnect) md << " nconnect " << n << " |";
    md << "\n|---:|---:|";
    for (size_t i = 0; i < grid.nconnect.size(); ++i) md << "---:|";
    md << "\n";
    for (int64_t w : grid.window) {
      for (int64_t skew : grid.skew_ns) {
        s.skew_ns = skew;
        md << "| " << w << " | " << Fmt("%g", skew / 1e6) << " ms |";
        for (int n : grid.nconnect) {
          int64_t best = MaxSafeSlots(rows, grid, s, w, n);
          md << " " << (best < 0 ? std::string("-") : std::to_string(best)) << " |";
        }
        md << "\n";
      }
    }
    md << "\n";
  }

  for (sim::Reaction reaction : grid.reactions) {
    Slice s = slice;
    s.reaction = reaction;
    md << "### " << plot_slots << " slots, " << SliceLabel(grid, s) << "\n\n"
       << "| window | nconnect | violations | disconnects | context re-creations | "
          "retransmitted MB | goodput MB/s | ops/s | p50 ms | p99 ms | p99.9 ms | stalled |\n"
       << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (int64_t w : grid.window) {
      for (int n : grid.nconnect) {
        const SweepRow* row = Find(rows, s, w, n, plot_slots);
        if (row == nullptr) continue;
        const auto& r = row->result;
        md << "| " << w << " | " << n << " | " << r.violations << " | " << r.disconnects << " | "
           << r.context_recreations << " | " << Fmt("%.1f", r.retransmitted_bytes / 1e6) << " | "
           << Fmt("%.1f", r.mb_per_s) << " | " << Fmt("%.0f", r.ops_per_s) << " | "
           << Fmt("%.3f", r.p50_ns / 1e6) << " | " << Fmt("%.3f", r.p99_ns / 1e6) << " | "
           << Fmt("%.3f", r.p999_ns / 1e6) << " | " << Fmt("%.3f", r.stalled_fraction)
           << (r.truncated ? " (truncated)" : "") << " |\n";
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
      results.extra_files.emplace_back(p.file, *p.svg);
      md << "![" << p.what << "](" << p.file << ")\n\n";
    } else {
      log << " [plot " << p.file << " failed: " << p.svg.status().ToString() << "]" << std::flush;
      md << "(plot " << p.file << " could not be drawn: " << p.svg.status().ToString()
         << "; the numbers are in the tables and results.json)\n\n";
    }
  }
  results.report_sections.push_back(md.str());
  return Status::Ok();
}

}  // namespace secmode::bench
