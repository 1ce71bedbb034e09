// Report part of section "nconnect-validation": the simulator against the
// real krb5p client and server, per grid point, with the agreement rule,
// each point's verdict, and the notes of the points not asserted. Drawn
// from the `nconnect` rows of kind "validation" and the section's
// calibration and rule.
#include "render/report_validation.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "common/format.h"
#include "render/gnuplot.h"
#include "render/markdown.h"
#include "render/report_sections.h"
#include "render/report_validation_parts.h"

namespace secmode::render {

using common::Fmt;
using common::Result;

namespace {

using nlohmann::json;

// A validation merged from shards (suite/merge.h): which host ran which
// shard and how many of its points agreed; empty for a run of one machine.
std::string ShardsText(const json& section) {
  const json shards = section.value("shards", json::array());
  if (shards.empty()) return "";
  std::ostringstream md;
  md << "This validation ran in " << shards.size()
     << " shards (`secmode nconnect --validate --shard I/N`), joined by `secmode merge`. Each "
        "point was measured and simulated on its shard's host, with that host's calibration "
        "(each row's own in results.json); the calibration described above is shard 0's.\n\n"
        "| shard | host | CPU | started | points | agree | wall s |\n"
        "|---:|---|---|---|---:|---:|---:|\n";
  for (const json& sh : shards) {
    md << "| " << IntField(sh, "index") << " | " << MdText(sh.value("host", "")) << " | "
       << MdText(sh.value("cpu_model", "")) << " | " << MdText(sh.value("started_at", "")) << " | "
       << IntField(sh, "points") << " | " << IntField(sh, "agree") << " | "
       << (sh.contains("wall_seconds") && sh["wall_seconds"].is_number()
               ? Fmt("%.0f", sh["wall_seconds"].get<double>())
               : std::string("-"))
       << " |\n";
  }
  md << "\n";
  return md.str();
}

// "526..678 (3 runs)", or the one run's count.
std::string MeasuredRange(const json& row) {
  const json runs = row.value("measured_runs", json::array());
  if (runs.size() < 2)
    return std::to_string(IntField(row.value("measured", json::object()), "violations"));
  int64_t lo = INT64_MAX, hi = 0;
  for (const auto& r : runs) {
    lo = std::min(lo, IntField(r, "violations"));
    hi = std::max(hi, IntField(r, "violations"));
  }
  return std::to_string(lo) + ".." + std::to_string(hi) + " (" + std::to_string(runs.size()) +
         " runs)";
}

// " (41000..52000)": the real runs' goodput range, or "" for one run.
std::string GoodputRange(const json& row) {
  const json runs = row.value("measured_runs", json::array());
  if (runs.size() < 2) return "";
  double lo = 0, hi = 0;
  bool first = true;
  for (const auto& r : runs) {
    const double v = r.value("ops_per_s", 0.0);
    lo = first ? v : std::min(lo, v);
    hi = first ? v : std::max(hi, v);
    first = false;
  }
  return " (" + Fmt("%.0f", lo) + ".." + Fmt("%.0f", hi) + ")";
}

// The model's side of a row as the comparison took it: with several seeds
// ("simulated_seeds") their mean violations and goodput over the first
// seed's result, else that result.
json SimulatedMean(const json& row) {
  json sim = row.value("simulated", json::object());
  const json seeds = row.value("simulated_seeds", json::object());
  if (IntField(seeds, "seeds") > 1) {
    sim["violations"] = seeds.value("violations_mean", 0.0);
    sim["ops_per_s"] = seeds.value("ops_per_s_mean", 0.0);
  }
  return sim;
}

// "12.4 (3..25, 5 seeds)", or the one seed's count.
std::string SimulatedRange(const json& row) {
  const json seeds = row.value("simulated_seeds", json::object());
  if (IntField(seeds, "seeds") < 2)
    return std::to_string(IntField(row.value("simulated", json::object()), "violations"));
  return Fmt("%.1f", seeds.value("violations_mean", 0.0)) + " (" +
         Fmt("%.0f", seeds.value("violations_min", 0.0)) + ".." +
         Fmt("%.0f", seeds.value("violations_max", 0.0)) + ", " +
         std::to_string(IntField(seeds, "seeds")) + " seeds)";
}

// Why a row is undecided when its runs shared the machine
// (suite/nconnect_validation_verdict.h, HoldShared); empty when they did not.
std::string SharedText(const json& row) {
  const json of = row.value("verdict_intervals", json::object());
  if (of.value("machine_shared", false) != true) return "";
  const json f = of.value("others_fraction", json());
  return "other processes ran " +
         (f.is_number() ? Fmt("%.0f%%", 100 * f.get<double>()) : std::string("a large share")) +
         " of the machine's CPU time while its runs were measured: what they did was the "
         "machine's, not the model's to predict";
}

// A row's verdict: "agrees", "disagrees" or "undecided"
// (suite/nconnect_validation_verdict.h). A row of an older results.json has
// no "verdict", only the two-valued *_agree: "agree" or "disagree", read
// as such.
struct RowVerdict {
  std::string word;  // agrees, disagrees, undecided; agree, disagree (two-valued)
  bool two_valued = false;
  std::string shown;  // the table's cell
};

RowVerdict VerdictOf(const json& row) {
  RowVerdict v;
  if (row.contains("verdict") && row["verdict"].is_string()) {
    v.word = row["verdict"].get<std::string>();
    const json of = row.value("verdict_intervals", json::object());
    std::string which;  // the quantities that decided it
    for (const char* q : {"violations", "goodput_ratio"}) {
      const json part = of.value(q, json::object());
      if (part.value("verdict", "") == v.word)
        which += std::string(which.empty() ? "" : ", ") + (q[0] == 'v' ? "violations" : "goodput");
    }
    v.shown = v.word == "agrees"      ? "agrees"
              : v.word == "disagrees" ? "DISAGREES"
              : v.word == "undecided" ? "undecided"
                                      : MdText(v.word);
    if (of.value("machine_shared", false) == true) {
      v.shown += " (machine shared)";
    } else if (v.word != "agrees" && !which.empty()) {
      v.shown += " (" + which + ")";
    }
    return v;
  }
  const bool viol = row.value("violations_agree", false), good = row.value("goodput_agree", false);
  v.two_valued = true;
  v.word = viol && good ? "agree" : "disagree";
  v.shown = viol && good ? "agree (two-valued)"
            : !viol      ? "DISAGREE (violations; two-valued)"
                         : "DISAGREE (goodput; two-valued)";
  return v;
}

// "8 agree, 1 disagrees, 1 undecided.", with the rows of an older run
// (two-valued verdicts) counted apart and labelled.
std::string VerdictCountsText(const ValidationRows& rows) {
  int agrees = 0, disagrees = 0, undecided = 0, old_agree = 0, old_disagree = 0;
  for (const json* row : rows) {
    const std::string w = VerdictOf(*row).word;
    agrees += w == "agrees";
    undecided += w == "undecided";
    old_agree += w == "agree";
    old_disagree += w == "disagree";
    disagrees += w != "agrees" && w != "undecided" && w != "agree" && w != "disagree";
  }
  std::ostringstream md;
  if (agrees + disagrees + undecided > 0) {
    md << agrees << " agree, " << disagrees << (disagrees == 1 ? " disagrees, " : " disagree, ")
       << undecided << " undecided";
  }
  if (old_agree + old_disagree > 0) {
    md << (agrees + disagrees + undecided > 0 ? "; " : "") << old_agree << " of "
       << old_agree + old_disagree
       << " agree by the two-valued rule of an older results.json (no verdict over the runs' "
          "spread, so none undecided)";
  }
  md << ".";
  return md.str();
}

// Which interval of an undecided row straddles its limit: "violations
// 3.0..9.0 (the runs' median) against 0.0..7.5; goodput measured/sim
// 0.71..0.90 (the runs' median) against 0.77..1.30".
std::string StraddleText(const json& row) {
  const json of = row.value("verdict_intervals", json::object());
  std::string out;
  // Rows since the median's interval say its order; older ones took every run.
  const std::string over = of.contains("order") ? " (the runs' median)" : " over the runs";
  for (const char* q : {"violations", "goodput_ratio"}) {
    const json part = of.value(q, json::object());
    const json m = part.value("measured", json::array()), l = part.value("limit", json::array());
    if (part.value("verdict", "") != "undecided" || m.size() != 2 || l.size() != 2) continue;
    if (!m[0].is_number() || !m[1].is_number() || !l[0].is_number() || !l[1].is_number()) continue;
    const char* f = q[0] == 'v' ? "%.1f" : "%.2f";
    out += std::string(out.empty() ? "" : "; ") +
           (q[0] == 'v' ? "violations " : "goodput measured/sim ") + Fmt(f, m[0].get<double>()) +
           ".." + Fmt(f, m[1].get<double>()) + over + " against " + Fmt(f, l[0].get<double>()) +
           ".." + Fmt(f, l[1].get<double>());
  }
  const std::string straddle =
      of.contains("order") ? "the runs' median straddles the limit" : "the runs straddle the limit";
  return out.empty() ? straddle : straddle + ": " + out;
}

// The collapse plot: goodput, violations and p99 against slots for one
// shared context without skew, a column per (window, reaction): the
// simulated line through the grid's slot counts, and each measured point as
// the median run with the range of the runs. Drawn for the nconnect with the
// most such points; empty when no column has two slot counts.
struct CollapseColumn {
  int64_t window = 0;
  std::string reaction;
  std::map<int64_t, const json*> by_slots;
};

Result<std::string> CollapsePlot(const std::vector<CollapseColumn>& columns, int nconnect) {
  std::ostringstream data, script;
  const char* const metrics[] = {"goodput (ops/s)", "window violations", "p99 latency (ms)"};
  auto value = [](const json& r, int metric) {
    if (metric == 0) return r.value("ops_per_s", 0.0);
    if (metric == 1) return r.value("violations", 0.0);
    return static_cast<double>(IntField(r, "p99_ns")) / 1e6;
  };
  int index = 0;
  script << "set terminal svg size " << std::max<size_t>(640, 380 * columns.size())
         << ",900 dynamic font 'sans,11'\nset output 'out.svg'\nset multiplot layout 3,"
         << columns.size() << " title "
         << GnuplotQuote("Collapse: one shared context, no skew, nconnect " +
                         std::to_string(nconnect))
         << "\nset logscale x 2\nset grid\nset key top left\nset xlabel 'slots'\n";
  for (int metric = 0; metric < 3; ++metric) {
    for (const CollapseColumn& col : columns) {
      data << "# " << metrics[metric] << ", window " << col.window << ", "
           << GnuplotLine(col.reaction) << ": slots sim\n";
      for (const auto& [slots, row] : col.by_slots) {
        data << slots << " " << value(SimulatedMean(*row), metric) << "\n";
      }
      data << "\n\n# measured: slots median min max\n";
      for (const auto& [slots, row] : col.by_slots) {
        double lo = 0, hi = 0;
        bool first = true;
        for (const auto& run : row->value("measured_runs", json::array())) {
          const double v = value(run, metric);
          lo = first ? v : std::min(lo, v);
          hi = first ? v : std::max(hi, v);
          first = false;
        }
        const double mid = value(row->value("measured", json::object()), metric);
        if (first) lo = hi = mid;
        data << slots << " " << mid << " " << lo << " " << hi << "\n";
      }
      data << "\n\n";
      script << "set title "
             << GnuplotQuote("window " + std::to_string(col.window) + ", " + col.reaction)
             << "\nset ylabel " << GnuplotQuote(metrics[metric]) << "\nset yrange [0:*]\n"
             << "plot 'collapse.dat' index " << index
             << " using 1:2 with linespoints lw 2 title 'simulated', 'collapse.dat' index "
             << index + 1 << " using 1:2:3:4 with yerrorbars pt 7 title 'measured'\n";
      index += 2;
    }
  }
  script << "unset multiplot\n";
  return RunGnuplot(script.str(), {{"collapse.dat", data.str()}}, "out.svg");
}

// The rows of kind "validation", in the run's order.
ValidationRows RowsOf(const harness::RunResults& r) {
  ValidationRows rows;
  for (const auto& row : r.nconnect) {
    if (row.value("kind", "") == "validation") rows.push_back(&row);
  }
  return rows;
}

// What agrees with the model's zero: the median run at zero and no run
// beyond the slack, or (a results.json from before that rule) every run.
bool ModelZeroByMedian(const json& tol) {
  const json rule = tol.is_object() ? tol.value("model_zero", json()) : json();
  return rule.is_string() && rule.get<std::string>() == "median run";
}

std::string ModelZeroRule(const json& tol) {
  if (!ModelZeroByMedian(tol)) return "every real run must show zero";
  return "the median real run must show zero and no run more than " +
         std::to_string(IntField(tol, "violation_slack"));
}

// The agreement rule, and the real runs made again for the hypervisor.
std::string AgreementRuleMarkdown(const json& section) {
  const json tol = section.value("tolerance", json::object());
  std::ostringstream md;
  const int64_t seeds = std::max<int64_t>(1, IntField(section, "model_seeds"));
  md << "Agreement rule: each point runs " << std::max<int64_t>(1, IntField(section, "runs"))
     << " time(s) on real sockets";
  if (seeds > 1) {
    md << " and " << seeds
       << " times in the model (seeds; one seed is one sample, and where violations are rare "
          "which seed ran would decide the verdict): the model's violations and goodput are "
          "the seeds' means, and it predicts zero only when every seed does";
  }
  if (const int64_t passes = IntField(section, "calibration_passes"); passes > 1) {
    md << ". What the model is fed was measured " << passes
       << " times, spread over the runs' rounds (the first before them): each point's own "
          "runs with no violation possible, and the calibration's round trip, reconnect and "
          "context creation; each figure is the median of those passes";
  }
  md << ". Where the model predicts zero violations " << ModelZeroRule(tol)
     << "; otherwise the simulated count (the measured ones scaled to the simulated "
        "number of operations) lies within the measured range widened by a factor "
     << Fmt("%.2f", tol.value("violation_factor", 0.0)) << " or within "
     << IntField(tol, "violation_slack") << " events of it; goodput agrees within a factor "
     << Fmt("%.2f", tol.value("goodput_factor", 0.0)) << " of the runs' median.";
  if (section.contains("verdicts")) {
    md << " The verdict rests on the runs' spread: a point's real runs are interleaved with the "
          "other points' (round r makes run r of every point), so they sample the whole "
          "validation's time, and each quantity (violations per run, goodput per run over the "
          "model's) is the distribution-free confidence interval of the runs' median: of n runs "
          "sorted, the k-th smallest to the k-th largest, with the largest k that holds the "
          "median with probability 0.95 (with 9 runs, the second to the eighth: 0.96; with "
          "fewer than 6, every run, at the lower coverage each row gives). The question is "
          "whether the model predicts the typical run, so one unlucky run of nine moves no "
          "verdict. (A results.json without the rows' \"order\" took every run.) A point "
          "agrees when both intervals lie wholly "
          "within their limits (around the model's seeds' mean: the factor or slack above, "
          "exactly zero for a model's zero, goodput within the factor either way), disagrees "
          "when either lies wholly outside, and is undecided when an interval straddles its "
          "limit: its repeats do not settle it.";
  } else {
    md << " (An older results.json: its verdicts are two-valued, a point agreeing when the "
          "model fell within the runs' widened range; none is undecided.)";
  }
  if (section.contains("calm_runs")) {
    const json calm = section.value("calm_runs", json::object());
    md << " A real run (a point's, or its no-violation run) during which the hypervisor took "
       << Fmt("%.0f", 100 * calm.value("max_steal", 0.0))
       << "% or more of the machine's CPU time (steal in /proc/stat, the kernel's figure, never "
          "the run's outcome) is made again, up to "
       << IntField(calm, "attempts")
       << " attempts, the last kept whatever it saw: on a shared host such a run also spends "
          "more CPU per call, which the model's pauses do not stand for. This run made "
       << IntField(calm, "rerun_measured") << " point run(s) and "
       << IntField(calm, "rerun_no_violation") << " no-violation run(s) again.";
    if (calm.contains("max_others") && calm["max_others"].is_number()) {
      md << " A point whose real runs other processes ran "
         << Fmt("%.0f", 100 * calm["max_others"].get<double>())
         << "% or more of the machine's CPU time in (all its runs together; this process's own "
            "time left out, the hypervisor's too) is undecided whatever its intervals say, "
            "\"machine "
            "shared\": such runs are not made again, as a busy machine mostly stays busy for "
            "longer than a run.";
    }
  }
  md << "\n\n";
  return md.str();
}

// A row per point: its scenario, violations and goodput simulated and
// measured, and its verdict; how many agree; what the hypervisor took.
std::string VerdictTable(const ValidationRows& rows) {
  std::ostringstream md;
  // Rows merged from shards of many hosts carry their host: a column then.
  std::set<std::string> hosts;
  for (const json* row : rows) hosts.insert(row->value("host", std::string()));
  const bool host_column = hosts.size() > 1;
  md << (host_column ? "| host " : "")
     << "| nconnect | slots | window | reaction | I/O | skew ms | violations sim | violations "
        "measured | ops/s sim | ops/s measured (median run, range) | verdict |\n"
     << (host_column ? "|---" : "") << "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const json* row : rows) {
    const json s = row->value("scenario", json::object());
    const json sim = SimulatedMean(*row);
    const json meas = row->value("measured", json::object());
    const std::string verdict = VerdictOf(*row).shown;
    if (host_column) md << "| " << MdText(row->value("host", std::string("-"))) << " ";
    md << "| " << IntField(s, "nconnect") << " | " << IntField(s, "slots") << " | "
       << IntField(s, "window") << " | " << MdText(s.value("reaction", "")) << " | "
       << IntField(s, "io_size") << " " << MdText(s.value("op", "")) << " | "
       << Fmt("%.3f", IntField(s, "skew_ns") / 1e6) << " | " << SimulatedRange(*row) << " | "
       << MeasuredRange(*row) << " | " << Fmt("%.0f", sim.value("ops_per_s", 0.0)) << " | "
       << Fmt("%.0f", meas.value("ops_per_s", 0.0)) << GoodputRange(*row) << " | " << verdict
       << " |\n";
  }
  md << "\n" << VerdictCountsText(rows) << "\n\n";
  std::vector<double> steal;
  for (const json* row : rows) {
    const double f = row->value("measured", json::object()).value("steal_fraction", -1.0);
    if (f >= 0) steal.push_back(f);
  }
  if (!steal.empty()) {
    std::sort(steal.begin(), steal.end());
    md << "The hypervisor took " << Fmt("%.1f", 100 * steal[steal.size() / 2]) << "% (median; "
       << Fmt("%.1f", 100 * steal.back())
       << "% at most) of the machine's CPU time during the real runs shown (steal time, "
          "/proc/stat): time in which their threads could not run at all, which the model's "
          "cores do not have.\n\n";
  }
  return md.str();
}

// A row per point: whether it is asserted, disconnects, p50 and p99
// simulated and measured, and the comparison's detail.
std::string PointsTable(const ValidationRows& rows) {
  std::ostringstream md;
  md << "| point | asserted | disconnects sim / real | p50 us sim / real | p99 us sim / real (sim: "
        "the first seed) | "
        "detail |\n|---|---|---|---|---|---|\n";
  for (const json* row : rows) {
    const json sim = row->value("simulated", json::object());
    const json meas = row->value("measured", json::object());
    const bool asserted = row->value("asserted", false);
    const bool assert_goodput = row->value("assert_goodput", asserted);
    md << "| " << MdText(row->value("name", "")) << " | "
       << (!asserted        ? "no (see below)"
           : assert_goodput ? "violations, goodput"
                            : "violations (see below)")
       << " | " << IntField(sim, "disconnects") << " / " << IntField(meas, "disconnects") << " | "
       << Fmt("%.0f", IntField(sim, "p50_ns") / 1e3) << " / "
       << Fmt("%.0f", IntField(meas, "p50_ns") / 1e3) << " | "
       << Fmt("%.0f", IntField(sim, "p99_ns") / 1e3) << " / "
       << Fmt("%.0f", IntField(meas, "p99_ns") / 1e3) << " | " << MdText(row->value("detail", ""))
       << " |\n";
  }
  return md.str();
}

// Why the tolerances are what they are, and the notes of the points not
// (wholly) asserted.
std::string TolerancesMarkdown(const harness::RunResults& r, const json& section,
                               const ValidationRows& rows) {
  const json tol = section.value("tolerance", json::object());
  std::ostringstream md;
  md << "\nWhy these tolerances: the real run shares the machine's " << r.machine.logical_cpus
     << " logical CPUs between the client's threads, the server's threads and everything else "
        "on the machine; a thread preempted for one scheduler slice (milliseconds) holds its "
        "calls while others overtake them, which moves a violation count by a few events and "
        "goodput by tens of percent from run to run. Hence: where the model says zero, "
     << ModelZeroRule(tol)
     << (ModelZeroByMedian(tol)
             ? " (one run whose thread was held can lose a call where the model lost none)"
             : "")
     << "; otherwise a factor " << Fmt("%g", tol.value("violation_factor", 0.0)) << " or "
     << IntField(tol, "violation_slack")
     << " events on violations (counts grow roughly geometrically with skew and slots, so a "
        "factor still separates \"a few\" from \"most calls\"), and a factor "
     << Fmt("%g", tol.value("goodput_factor", 0.0))
     << " on goodput (the model's CPU per call is measured by runs that cannot violate the "
        "window, not fitted to these rows).\n\n";
  for (const json* row : rows) {
    const bool asserted = row->value("asserted", false);
    if (!row->value("assert_goodput", asserted)) {
      md << "- " << MdText(row->value("name", "")) << ": " << MdText(row->value("note", ""))
         << "\n";
    }
  }
  return md.str();
}

// Points that disagree, each with the cause its evidence shows, and the
// undecided ones with the intervals that straddle their limits, or the
// share of the machine other processes took during their runs.
std::string DisagreeingMarkdown(const ValidationRows& rows) {
  std::ostringstream md;
  bool heading = false;
  for (const json* row : rows) {
    const RowVerdict v = VerdictOf(*row);
    if (v.word == "agrees" || v.word == "agree") continue;
    if (!heading)
      md << "\n### Points that disagree or are undecided, and what their evidence shows\n\n";
    heading = true;
    const std::string why = row->value("diagnosis", "");
    md << "- " << MdText(row->value("name", "")) << " (" << MdText(v.word) << "): ";
    if (v.word == "undecided") {
      const std::string shared = SharedText(*row);
      md << (shared.empty() ? StraddleText(*row) : shared);
      if (!why.empty()) md << "; " << MdText(why);
    } else {
      md << MdText(why.empty() ? row->value("detail", "") : why);
    }
    md << "\n";
  }
  return md.str();
}

// The collapse plot, for the nconnect with the most shared no-skew points
// (into out.files, or a warning); empty when no column has two slot counts.
std::string CollapseMarkdown(const ValidationRows& rows, Rendered& out) {
  std::map<int, std::map<std::pair<int64_t, std::string>, CollapseColumn>> shared_noskew;
  for (const json* row : rows) {
    const json sc = row->value("scenario", json::object());
    if (sc.value("per_connection_context", false) || IntField(sc, "skew_ns") != 0) continue;
    CollapseColumn& col = shared_noskew[static_cast<int>(IntField(sc, "nconnect"))]
                                       [{IntField(sc, "window"), sc.value("reaction", "")}];
    col.window = IntField(sc, "window");
    col.reaction = sc.value("reaction", "");
    col.by_slots[IntField(sc, "slots")] = row;
  }
  int plot_nconnect = 0;
  size_t most = 0;
  for (const auto& [n, cols] : shared_noskew) {
    size_t points = 0;
    for (const auto& [key, col] : cols)
      points += col.by_slots.size() >= 2 ? col.by_slots.size() : 0;
    if (points > most || (points == most && n == 4)) {
      most = points;
      plot_nconnect = n;
    }
  }
  if (most == 0) return "";
  std::ostringstream md;
  std::vector<CollapseColumn> columns;
  for (const auto& [key, col] : shared_noskew[plot_nconnect]) {
    if (col.by_slots.size() >= 2) columns.push_back(col);
  }
  auto svg = CollapsePlot(columns, plot_nconnect);
  md << "\n### The collapse: slots against the window\n\n";
  if (svg.ok()) {
    out.files.emplace_back("nconnect-collapse.svg", *svg);
    md << "![goodput, violations and p99 vs slots: simulated (line), measured (the median run, "
          "bars the range of the runs)](nconnect-collapse.svg)\n";
  } else {
    out.warnings.push_back("plot nconnect-collapse.svg failed: " + svg.status().ToString());
    md << "(plot nconnect-collapse.svg could not be drawn: " << MdText(svg.status().ToString())
       << "; the numbers are in the tables and results.json)\n";
  }
  return md.str();
}

}  // namespace

void RenderValidationSection(const harness::RunResults& r, const json& section, Rendered& out) {
  const ValidationRows rows = RowsOf(r);
  std::ostringstream md;
  md << CalibrationMarkdown(section, rows) << AgreementRuleMarkdown(section) << ShardsText(section)
     << VerdictTable(rows) << PointsTable(rows) << AttributionMarkdown(rows)
     << ReconnectsMarkdown(rows) << RecreationsMarkdown(rows) << ModelPathsMarkdown(rows)
     << AblationMarkdown(rows) << TolerancesMarkdown(r, section, rows) << DisagreeingMarkdown(rows)
     << CollapseMarkdown(rows, out);
  md << "\nValidation took " << Fmt("%.1f", section.value("wall_seconds", 0.0)) << " s.\n";
  out.report_md.append("\n").append(md.str());
}

Result<std::string> ValidationMarkdown(const harness::RunResults& r) {
  if (!r.sections.contains("nconnect-validation")) return std::string();
  Rendered drawn;
  try {
    RenderValidationSection(r, r.sections["nconnect-validation"], drawn);
  } catch (const nlohmann::json::exception& e) {
    return common::Status::Corrupt(
        std::string("results.json: cannot draw the validation's report: ") + e.what());
  }
  return drawn.report_md.substr(1);  // without the line RenderRun puts before a section
}

}  // namespace secmode::render
