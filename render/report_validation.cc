// Report part of section "nconnect-validation": the simulator against the
// real krb5p client and server, per grid point, with the agreement rule,
// each point's verdict, and the notes of the points not asserted. Drawn
// from the `nconnect` rows of kind "validation" and the section's
// calibration and rule.
#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "common/format.h"
#include "common/stats.h"
#include "render/gnuplot.h"
#include "render/markdown.h"
#include "render/report_sections.h"

namespace secmode::render {

using common::CsvField;
using common::Fmt;
using common::Result;
using common::SizeLabel;
using common::SkewLabel;

namespace {

using nlohmann::json;

// "22.1 us after 25.0 us idle, ..., 41.0 us after 520.3 us", or "none
// measured".
std::string IdleWakeCurveText(const json& curve) {
  const json idle = curve.value("idle_ns", json::array());
  const json wake = curve.value("wake_ns", json::array());
  if (idle.empty() || idle.size() != wake.size()) return "none measured";
  std::string out;
  for (size_t i = 0; i < idle.size(); ++i) {
    out += (i ? ", " : "") + Fmt("%.1f", wake[i].get<double>() / 1e3) + " us after " +
           Fmt("%.1f", idle[i].get<double>() / 1e3) + (i ? " us" : " us idle");
  }
  return out;
}

// When a woken thread's preemption of a busy core lands, from the busy-core
// probe, or that it was not measured.
std::string BusyWakeText(const json& probe) {
  if (IntField(probe, "rounds") <= 0) {
    return "a woken thread preempts a busy core at its wakeup (the busy-core probe could not "
           "run: fewer than two CPUs)";
  }
  return "a woken thread's preemption of a busy core lands p50 " +
         Fmt("%.1f", probe.value("p50_us", 0.0)) + " / p90 " +
         Fmt("%.1f", probe.value("p90_us", 0.0)) + " / p99 " +
         Fmt("%.1f", probe.value("p99_us", 0.0)) +
         " us after its wakeup, the victim running on meanwhile (drawn from the quantiles of " +
         std::to_string(IntField(probe, "rounds")) +
         " wakeups of a thread sleeping on a CPU that a busy thread runs on)";
}

// Where a woken thread waits, from the wake order probe, or that it was not
// measured.
std::string WakeOrderText(const json& probe) {
  if (IntField(probe, "rounds") <= 0) {
    return "every waiting thread waits in order of arrival (the wake order probe could not "
           "run or saw no round it could classify)";
  }
  return "a thread that wakes waits ahead of the threads descheduled with work left in " +
         Fmt("%.0f", probe.value("woken_first_share", 0.0) * 100) +
         "% of wakeups (the wake order probe: a busy thread preempted by one woken thread while "
         "a second wakes on the same CPU stayed off its core until both had run in " +
         std::to_string(IntField(probe, "woken_first")) + " of " +
         std::to_string(IntField(probe, "rounds")) + " rounds, and ran between them in the others)";
}

// The read probe's loads and line: "2 connections at 2, 4, ... calls
// outstanding, 3 runs each, ...", from Calibration::ReadProbeJson.
std::string ReadProbeText(const json& probe) {
  const json points = probe.value("points", json::array());
  if (points.empty()) return "no run (it could not run)";
  std::string slots, clients, servers;
  for (size_t i = 0; i < points.size(); ++i) {
    const json& p = points[i];
    const std::string sep = i ? "; " : "";
    slots += (i ? ", " : "") + std::to_string(IntField(p, "slots"));
    clients += sep + Fmt("%.2f", p.value("client_reads_per_call", 0.0)) + " reads, " +
               Fmt("%.1f", p.value("client_cpu_ns", 0.0) / 1e3) + " us";
    servers += sep + Fmt("%.2f", p.value("server_reads_per_call", 0.0)) + " reads, " +
               Fmt("%.1f", p.value("server_cpu_ns", 0.0) / 1e3) + " us";
  }
  auto line = [](const json& f) {
    if (!f.value("ok", false)) return std::string("no line");
    return "slope " + Fmt("%.1f", f.value("slope_ns", 0.0) / 1e3) + " +/- " +
           Fmt("%.1f", f.value("slope_se_ns", 0.0) / 1e3) + " us per read, intercept " +
           Fmt("%.1f", f.value("intercept_ns", 0.0) / 1e3) + " us";
  };
  return std::to_string(IntField(probe, "connections")) + " connections at " + slots +
         " calls outstanding, no violation possible, " +
         std::to_string(IntField(probe, "runs_per_point")) + " runs of " +
         Fmt("%.1f", probe.value("seconds", 0.0)) +
         " s each; per load the runs' median reads and CPU per call, client " + clients +
         ", server " + servers +
         "; the least-squares line of CPU per call against reads per call through them: client " +
         line(probe.value("client_fit", json::object())) + ", server " +
         line(probe.value("server_fit", json::object())) +
         "; its slope is a read's CPU. Several loads, because with one call outstanding per "
         "connection one run's CPU per call can be twice the next one's on the same machine";
}

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

// How the threads of the model and of the real runs ran, per point: per
// call, the socket reads (batches), the times a thread went to sleep and
// was given a core, and the mean wait for a core per run, at each end;
// simulated / real (the median of the runs). Empty when no run counted them.
std::string ThreadRunsTable(const std::vector<const json*>& rows) {
  std::ostringstream md;
  bool any = false;
  for (const json* row : rows) {
    const json sim = row->value("simulated", json::object());
    const json runs = row->value("measured_runs", json::array());
    if (IntField(sim, "client_runs") <= 0 || runs.empty() || IntField(runs[0], "client_runs") <= 0)
      continue;
    if (!any) {
      md << "### How the threads ran\n\n"
            "Per call: socket reads (each a batch), sleeps (a thread blocked with nothing to "
            "do: the real threads' voluntary context switches), runs (a thread given a core: "
            "the real threads' schedstat count), and per run the mean wait runnable for a core "
            "in us (the real threads' schedstat run-queue delay), client receivers and server "
            "threads, simulated / real (the median of the runs). A model whose threads sleep "
            "and run more often per call than the real ones reads smaller batches, and at a "
            "cost per read spends more CPU per call.\n\n"
            "| point | client reads | client sleeps | client runs | client wait per run | "
            "server reads | server sleeps | server runs | server wait per run |\n"
            "|---|---|---|---|---|---|---|---|---|\n";
      any = true;
    }
    auto per_call = [](const json& r, const char* key) {
      const double calls = static_cast<double>(std::max<int64_t>(1, IntField(r, "completed")));
      return static_cast<double>(IntField(r, key)) / calls;
    };
    auto per_run = [](const json& r, const char* wait, const char* runs) {
      return static_cast<double>(IntField(r, wait)) / 1e3 /
             static_cast<double>(std::max<int64_t>(1, IntField(r, runs)));
    };
    auto real_median = [&](auto f) {
      std::vector<double> v;
      for (const json& r : runs) v.push_back(f(r));
      return common::Median(v);
    };
    md << "| " << MdText(row->value("name", "")) << " |";
    for (const char* end : {"client", "server"}) {
      const std::string e = end;
      for (const std::string what : {"_reads", "_sleeps", "_runs"}) {
        const std::string key = e + what;
        md << " " << Fmt("%.2f", per_call(sim, key.c_str())) << " / "
           << Fmt("%.2f", real_median([&](const json& r) { return per_call(r, key.c_str()); }))
           << " |";
      }
      const std::string wait = e + "_wait_ns", n = e + "_runs";
      md << " " << Fmt("%.0f", per_run(sim, wait.c_str(), n.c_str())) << " / "
         << Fmt("%.0f",
                real_median([&](const json& r) { return per_run(r, wait.c_str(), n.c_str()); }))
         << " |";
    }
    md << "\n";
  }
  if (any) md << "\n";
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

std::string Verdict(const json& row) {
  const bool v = row.value("violations_agree", false), g = row.value("goodput_agree", false);
  if (v && g) return "agree";
  return !v ? "DISAGREE (violations)" : "DISAGREE (goodput)";
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

// " p50 / p90 |" of a simulated step (ScenarioResult::Step) in us, " - |"
// when the simulated run had none.
std::string ModelStep(const json& steps, const char* name) {
  const json step = steps.value(name, json::object());
  if (IntField(step, "count") == 0) return " - |";
  std::ostringstream o;
  o << " " << Fmt("%.0f", IntField(step, "p50_ns") / 1e3) << " / "
    << Fmt("%.0f", IntField(step, "p90_ns") / 1e3) << " |";
  return o.str();
}

}  // namespace

void RenderValidationSection(const harness::RunResults& r, const json& section, Rendered& out) {
  std::vector<const json*> rows;
  for (const auto& row : r.nconnect) {
    if (row.value("kind", "") == "validation") rows.push_back(&row);
  }
  const json c = section.value("calibration", json::object());
  const json tol = section.value("tolerance", json::object());
  // What the rows' model did (a run saved before the switch existed has none).
  bool lock_wakes_one = false;
  for (const json* row : rows) {
    lock_wakes_one |= row->value("scenario", json::object()).value("context_lock_wakes_one", false);
  }
  std::ostringstream md;
  md << "## nconnect simulator vs real sockets (validation)\n\n"
     << "Each row runs one scenario on the real RPCSEC_GSS TCP client and server ("
     << MdText(section.value("mode", ""))
     << " at both ends, real loopback sockets, in-process server with the scenario's window and "
        "reaction) and in the simulator. The real client holds every call of connection 0 for "
        "the skew after encoding it; violations measured = calls the server found below its "
        "window. The simulator is fed what this machine measured: crypto "
     << Fmt("%.0f", c.value("cost_fixed_ns", 0.0)) << " ns + "
     << Fmt("%.3f", c.value("cost_ns_per_byte", 0.0))
     << " ns/byte per message (mean of the four krb5p legs at 0 B and 4 KiB; it splits a "
        "call's CPU between its request and reply sizes), ";
  if (section.value("thread_model", false)) {
    const json wake = c.value("wakeup_probe", json::object());
    const json pause = c.value("pause_probe", json::object());
    std::string slices;
    for (const auto& p : c.value("probes", json::array())) {
      slices += (slices.empty() ? "" : ", ") + Fmt("%.0f", p.value("run_p50_us", 0.0)) +
                " us with " + std::to_string(IntField(p, "threads")) + " busy threads";
    }
    md << "and the thread model (sim/scenario.h, thread_model): a receiver thread per connection "
          "on the client and a thread per connection on the server, each handling what its "
          "socket holds as one batch, on the machine's "
       << IntField(c, "cores")
       << " cores; the scheduler's time slice from the scheduler probe (median run of a busy "
          "thread between deschedulings: "
       << slices
       << "); wakeup preemption from the wakeup probe (a woken thread takes a core from one "
          "that has run "
       << Fmt("%.1f", IntField(c, "wakeup_preempt_ns") / 1e3)
       << " us: the p10 run of a busy thread while " << IntField(wake, "wakers")
       << " threads keep waking; in that probe the busy threads stay off "
          "their cores p50 "
       << Fmt("%.0f", wake.value("gap_p50_us", 0.0)) << " / p99 "
       << Fmt("%.0f", wake.value("gap_p99_us", 0.0)) << " us, and a woken thread runs p50 "
       << Fmt("%.0f", wake.value("late_p50_us", 0.0)) << " / p99 "
       << Fmt("%.0f", wake.value("late_p99_us", 0.0))
       << " us after its sleep ended, timer slack included: in the model a woken thread waits "
          "while no core is idle and it cannot preempt); a thread woken onto an idle core "
          "starts later by how long the core has idled ("
       << IdleWakeCurveText(c.value("idle_wake_probe", json::object()))
       << "; medians of wakeups of a thread sleeping on an idle CPU that another wakes after "
          "keeping its own busy for a set time, linear in between; the core counts as idle "
          "meanwhile); "
       << BusyWakeText(c.value("busy_wake_probe", json::object())) << "; "
       << WakeOrderText(c.value("wake_order_probe", json::object()))
       << "; a busy core is "
          "paused "
       << Fmt("%.0f", c.value("pause_per_s", 0.0))
       << " times a second, the thread on it stopped for that long (pauses no modelled thread "
          "causes: interrupts, the timer tick, the hypervisor, other processes; from the pause "
          "probe, one busy thread per CPU for "
       << Fmt("%.1f", pause.value("seconds", 0.0)) << " s"
       << (pause.value("chosen_of", 1) > 1
               ? " (the one of " + std::to_string(pause.value("chosen_of", 1)) +
                     " whose paused share was the median)"
               : std::string())
       << ", every gap over " << Fmt("%.0f", IntField(pause, "gap_threshold_ns") / 1e3)
       << " us between its clock reads: p50 " << Fmt("%.0f", pause.value("gap_p50_us", 0.0))
       << " / p99 " << Fmt("%.0f", pause.value("gap_p99_us", 0.0))
       << " us, the model draws from its quantiles; the hypervisor took "
       << (pause.value("steal_fraction", -1.0) >= 0
               ? Fmt("%.1f", 100 * pause.value("steal_fraction", -1.0)) + "%"
               : std::string("an unknown share"))
       << " of the CPU time meanwhile, a share of the paused time that differs from run to "
          "run on a shared host: each point's model is paused instead for the probe's pauses "
          "that were not the hypervisor's plus as many more of the same lengths as make up the "
          "share the hypervisor took in that point's real runs, their median, so a row's "
          "pause_per_s is its own and the model meets the machine as the runs had it; the "
          "ablation's \"pauses as the probe saw them\" is the model without that); "
       << (c.value("cores_awake", false)
               ? std::string(
                     "the waits below are timed with every core kept awake (a CPU latency "
                     "request of 0 us through /dev/cpu_dma_latency, so an idle CPU polls instead "
                     "of halting), because the model adds the wakeup of an idle core itself "
                     "wherever its cores are idle (timed on idle cores they would count it "
                     "twice): ")
               : "the waits below are timed on idle cores, so they include idle-core wakeups "
                 "the model adds again (the cores could not be kept awake: " +
                     MdText(c.value("cores_awake_error", std::string("unknown"))) + "): ")
       << "the loopback's own round trip " << Fmt("%.1f", IntField(c, "net_rtt_ns") / 1e3)
       << " us (one sys call at a time: p50 minus both ends' CPU; "
       << Fmt("%.1f", IntField(c, "net_rtt_idle_ns") / 1e3)
       << " us on idle cores); what a reconnect costs beyond its round trip, "
       << Fmt("%.1f", IntField(c, "reconnect_ns") / 1e3)
       << " us (a NULL call on a fresh connection, so the server accepts and starts a "
          "connection thread, minus the same call on an established one; medians; "
       << Fmt("%.1f", IntField(c, "reconnect_idle_ns") / 1e3) << " us on idle cores), for "
       << Fmt("%.1f", IntField(c, "reconnect_cpu_ns") / 1e3)
       << " us of CPU of both ends (this process's CPU time over fresh calls less that over "
          "established ones), "
       << Fmt("%.1f", IntField(c, "reconnect_client_cpu_ns") / 1e3)
       << " us of it the client's (the calling thread's own CPU time: the model's "
          "reconnecting receiver spends it on a core, at most the reconnect's whole time) and "
          "the rest the server's (accepting, starting the new connection's thread, ending the "
          "old one's: the model's server thread of that connection spends it on a core before "
          "it reads a call of the new connection); what "
          "re-creating a context costs beyond its round trip, "
       << Fmt("%.1f", IntField(c, "gss_setup_ns") / 1e3)
       << " us (the load generator's own path, a short connection and the INIT exchange, "
          "median"
       << (IntField(c, "gss_setup_rounds") > 0
               ? " of " + std::to_string(IntField(c, "gss_setup_rounds"))
               : std::string())
       << ", each right after " << Fmt("%.0f", c.value("gss_setup_burst_seconds", 0.0) * 1e3)
       << " ms of the mode's load, as a re-creation under load follows the calls it "
          "interrupts; back to back on a quiet machine "
       << Fmt("%.1f", IntField(c, "gss_setup_quiet_ns") / 1e3) << " us for "
       << Fmt("%.1f", IntField(c, "gss_setup_quiet_cpu_ns") / 1e3)
       << " us of CPU, the ablation's \"context creation as on a quiet machine\"; all less the "
          "loopback's round trip; "
       << Fmt("%.1f", IntField(c, "gss_setup_idle_ns") / 1e3) << " us on idle cores), for "
       << Fmt("%.1f", IntField(c, "gss_setup_cpu_ns") / 1e3)
       << " us of CPU of both ends (this process's CPU time meanwhile, median; in the model the "
          "re-creating receiver spends it, at most the creation's whole time, on a core before it "
          "waits for the rest); the CPU of one read of a socket, spent once per batch "
          "whatever it holds (the recv, the batch's send, the wakeup and the switches), "
       << Fmt("%.1f", IntField(c, "client_read_ns") / 1e3) << " us on the client and "
       << Fmt("%.1f", IntField(c, "server_read_ns") / 1e3)
       << " us on the server (the read probe: the mode on "
       << ReadProbeText(c.value("read_probe", nlohmann::json::object()))
       << "; 0 where the line cannot tell; the "
          "model spends it when a batch's items are done, before the batch's writes: the traced "
          "runs check a call within a few us of the recv that returned it, so little of it "
          "comes first); and per row each end's CPU per "
          "call, measured from the threads' own CPU time in a run of the mode at the row's "
          "connections, slots, contexts and skew with a window wider than the slots (no "
          "violation can happen there), less the crypto the model adds and that run's reads "
          "at the cost above, and with a skew the "
          "CPU per call of the delay-line thread that writes the held connection's calls "
          "(a thread of its own in the model too). Per-row values are in "
          "results.json. The model sends every resend (after a disconnect, an error reply or a "
          "timeout) on the next connection round-robin over "
          "all connections, as the load generator does (Linux keeps them on their transport)"
       << (lock_wakes_one
               ? ", and the receivers that waited for a re-created context go on one after "
                 "another, as the waiters of the context's mutex do in the load generator (Linux "
                 "wakes the tasks waiting for a credential together)"
               : "")
       << ".\n\n";
    if (IntField(c, "one_call_model_p50_ns") > 0) {
      md << "The model against its own calibration: one sys call at a time (1 connection, 1 "
            "slot, 4 KiB READ) took p50 "
         << Fmt("%.1f", IntField(c, "one_call_p50_ns") / 1e3) << " us on idle cores and "
         << Fmt("%.1f", IntField(c, "one_call_awake_p50_ns") / 1e3)
         << " us with the cores awake; the thread model, given that run's CPU per call ("
         << Fmt("%.1f", IntField(c, "one_call_client_ns") / 1e3) << " us client, "
         << Fmt("%.1f", IntField(c, "one_call_server_ns") / 1e3)
         << " us server) and the round trip above, gives "
         << Fmt("%.1f", IntField(c, "one_call_model_p50_ns") / 1e3)
         << " us (its service time is exponential, so its median lies below its mean).\n\n";
    }
  } else {
    md << "loopback round trip " << Fmt("%.1f", IntField(c, "rtt_ns") / 1e3)
       << " us (sys-mode READ, 1 slot, p50, minus the per-call work), and per row a server "
          "service time besides the server's crypto = server threads / sys-mode ops/s of the "
          "same connections and slots measured just before the row plus the client's crypto ("
       << Fmt("%.1f", IntField(c, "client_crypto_ns") / 1e3)
       << " us; client and server share the cores); per-row values are in results.json. The "
          "server runs a thread per connection (model: min(nconnect, cores) server threads "
          "taking connections in turn), and the model resends a disconnected connection's calls "
          "round-robin over all connections, as the load generator does.\n\n";
  }
  const int64_t seeds = std::max<int64_t>(1, IntField(section, "model_seeds"));
  md << "Agreement rule: each point runs " << std::max<int64_t>(1, IntField(section, "runs"))
     << " time(s) on real sockets";
  if (seeds > 1) {
    md << " and " << seeds
       << " times in the model (seeds; one seed is one sample, and where violations are rare "
          "which seed ran would decide the verdict): the model's violations and goodput are "
          "the seeds' means, and it predicts zero only when every seed does";
  }
  md << ". Where the model predicts zero violations every real run must "
        "show zero; otherwise the simulated count (the measured ones scaled to the simulated "
        "number of operations) lies within the measured range widened by a factor "
     << Fmt("%.2f", tol.value("violation_factor", 0.0)) << " or within "
     << IntField(tol, "violation_slack") << " events of it; goodput agrees within a factor "
     << Fmt("%.2f", tol.value("goodput_factor", 0.0)) << " of the runs' median.";
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
  }
  md << "\n\n";
  md << ShardsText(section);
  // Rows merged from shards of many hosts carry their host: a column then.
  std::set<std::string> hosts;
  for (const json* row : rows) hosts.insert(row->value("host", std::string()));
  const bool host_column = hosts.size() > 1;
  md << (host_column ? "| host " : "")
     << "| nconnect | slots | window | reaction | I/O | skew ms | violations sim | violations "
        "measured | ops/s sim | ops/s measured (median run) | verdict |\n"
     << (host_column ? "|---" : "") << "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n";
  int agree = 0;
  for (const json* row : rows) {
    const json s = row->value("scenario", json::object());
    const json sim = SimulatedMean(*row);
    const json meas = row->value("measured", json::object());
    const std::string verdict = Verdict(*row);
    agree += verdict == "agree" ? 1 : 0;
    if (host_column) md << "| " << MdText(row->value("host", std::string("-"))) << " ";
    md << "| " << IntField(s, "nconnect") << " | " << IntField(s, "slots") << " | "
       << IntField(s, "window") << " | " << MdText(s.value("reaction", "")) << " | "
       << IntField(s, "io_size") << " " << MdText(s.value("op", "")) << " | "
       << Fmt("%.3f", IntField(s, "skew_ns") / 1e6) << " | " << SimulatedRange(*row) << " | "
       << MeasuredRange(*row) << " | " << Fmt("%.0f", sim.value("ops_per_s", 0.0)) << " | "
       << Fmt("%.0f", meas.value("ops_per_s", 0.0)) << " | " << verdict << " |\n";
  }
  md << "\n" << agree << " of " << rows.size() << " scenarios agree.\n\n";
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
  bool any_attribution = false;
  for (const json* row : rows) any_attribution |= row->contains("attribution");
  if (any_attribution) {
    md << "\n### Where the violations come from\n\n"
          "Every call of the real runs is traced at both ends (numbered, queued, written by the "
          "client; read, checked, answered by the server). Each violation's path is cut into "
          "encode (numbered to queued), hold (queued to written: the receiver's batch or the "
          "skew delay line), socket (written to read by the server's thread) and check (read to "
          "checked, within the records of one read); the stage whose time exceeds that stage's "
          "median over all calls the most is the cause, named with the thread that held the "
          "call there. Excess = that stage's time minus its median; lag = how far below the "
          "highest number seen the call arrived.\n\n"
          "| point | violations (matched) | stage medians us: encode / hold / socket / check | "
          "cause: stage, thread | count | median excess us | max excess us | median lag |\n"
          "|---|---:|---|---|---:|---:|---:|---:|\n";
    for (const json* row : rows) {
      if (!row->contains("attribution")) continue;
      const json& a = (*row)["attribution"];
      const json st = a.value("stages", json::object());
      std::string medians;
      for (const char* stage : {"encode", "hold", "socket", "check"}) {
        medians += (medians.empty() ? "" : " / ") +
                   Fmt("%.0f", st.value(stage, json::object()).value("median_us", 0.0));
      }
      const json causes = a.value("causes", json::array());
      const std::string head = "| " + MdText(row->value("name", "")) + " | " +
                               std::to_string(IntField(a, "violations")) + " (" +
                               std::to_string(IntField(a, "matched")) + ") | " + medians + " | ";
      if (causes.empty()) {
        md << head << "- | 0 | - | - | - |\n";
        continue;
      }
      bool first = true;
      for (const auto& c : causes) {
        md << (first ? head : "| | | | ") << MdText(c.value("stage", "")) << ", "
           << MdText(c.value("thread", "")) << " | " << IntField(c, "count") << " | "
           << Fmt("%.0f", c.value("median_excess_us", 0.0)) << " | "
           << Fmt("%.0f", c.value("max_excess_us", 0.0)) << " | "
           << Fmt("%.0f", c.value("median_lag", 0.0)) << " |\n";
        first = false;
      }
    }
    md << "\n";
  }
  bool any_reconnects = false;
  for (const json* row : rows) any_reconnects |= row->contains("reconnects");
  if (any_reconnects) {
    md << "### How the closed connections were replaced under load\n\n"
          "Each time the server closed a connection (drop-disconnect), the traced real run "
          "recorded the steps of its replacement: the server shut it down (close), the client's "
          "receiver read the end of the stream (eof), its new connect returned (connected), the "
          "server's accept returned the new connection (accepted) and its thread began to run "
          "(started), the lost calls were numbered and written again (resent), and the server "
          "checked the first call written on the new connection (first checked). Median / p90 "
          "in us. Beside them, the same two steps of the simulated run (its receiver waits for a "
          "core to read the end of the stream, reconnects in one RTT plus the reconnect time "
          "the calibration measured, then waits for a core again to number and write the "
          "resends).\n\n"
          "| point | reconnects | close -> eof | eof -> connected | connected -> accepted | "
          "accepted -> started | eof -> resent | eof -> first checked | model: reconnects | "
          "model: close -> eof | model: eof -> resent |\n"
          "|---|---:|---|---|---|---|---|---|---:|---|---|\n";
    for (const json* row : rows) {
      if (!row->contains("reconnects")) continue;
      const json& r = (*row)["reconnects"];
      md << "| " << MdText(row->value("name", "")) << " | " << IntField(r, "reconnects") << " |";
      for (const char* name : {"close -> eof", "eof -> connected", "connected -> accepted",
                               "accepted -> started", "eof -> resent", "eof -> first checked"}) {
        json step = json::object();
        for (const auto& st : r.value("steps", json::array())) {
          if (st.value("step", "") == name) step = st;
        }
        if (IntField(step, "count") == 0) {
          md << " - |";
        } else {
          md << " " << Fmt("%.0f", step.value("median_us", 0.0)) << " / "
             << Fmt("%.0f", step.value("p90_us", 0.0)) << " |";
        }
      }
      const json steps = row->value("simulated", json::object()).value("steps", json::object());
      md << " " << IntField(row->value("simulated", json::object()), "disconnects") << " |"
         << ModelStep(steps, "close -> eof") << ModelStep(steps, "eof -> resent") << "\n";
    }
    md << "\n";
  }
  bool any_recreations = false;
  for (const json* row : rows) any_recreations |= row->contains("recreations");
  if (any_recreations) {
    md << "### How contexts were re-created under load\n\n"
          "Each time the server discarded the shared context (discard-context), a receiver of "
          "the traced real run re-created it: from beginning the GSS exchange, holding the "
          "context's lock (the other receivers that need the context wait for it), to the new "
          "context. Median / p90 in us, beside the simulated run's re-creations (its receiver "
          "spends the creation's CPU on a core, then waits one RTT plus the rest of the "
          "creation time the calibration measured with the cores awake). Then how the "
          "receivers went on: from the new context to each receiver's first call numbered "
          "under it (every receiver that numbered one before the next re-creation, pooled). "
          "The receivers that waited meanwhile blocked on the context's lock, and a mutex wakes "
          "one waiter per release, so they take it one after another; the model does the same "
          "(each woken waiter wakes the next once it has a core; the ablation's \"a context's "
          "waiters wake together\" is the model without it).\n\n"
          "| point | re-creations | began -> done | done -> each receiver's first call | model: "
          "re-creations | model: began -> done | model: done -> each receiver's first call |\n"
          "|---|---:|---|---|---:|---|---|\n";
    for (const json* row : rows) {
      if (!row->contains("recreations")) continue;
      const json& r = (*row)["recreations"];
      const json sim = row->value("simulated", json::object());
      const json resumes = row->value("resumes", json::object());
      md << "| " << MdText(row->value("name", "")) << " | " << IntField(r, "count") << " | "
         << Fmt("%.0f", r.value("median_us", 0.0)) << " / " << Fmt("%.0f", r.value("p90_us", 0.0))
         << " | "
         << (IntField(resumes, "count") > 0 ? Fmt("%.0f", resumes.value("median_us", 0.0)) + " / " +
                                                  Fmt("%.0f", resumes.value("p90_us", 0.0))
                                            : std::string("-"))
         << " | " << IntField(sim, "context_recreations") << " |"
         << ModelStep(sim.value("steps", json::object()), "began -> done")
         << ModelStep(sim.value("steps", json::object()), "done -> each receiver's first call")
         << "\n";
    }
    md << "\n";
  }
  bool any_model_stages = false, any_ablation = false;
  for (const json* row : rows) {
    any_model_stages |= row->value("simulated", json::object()).contains("stages");
    any_ablation |= row->contains("ablation");
  }
  if (any_model_stages) {
    md << "### The model's paths beside the real ones\n\n"
          "The same four stages in the simulator (thread model: a receiver thread per "
          "connection, a server thread per connection, per-wakeup batches, the machine's cores "
          "with the probe's time slice and wakeup preemption): median and p99 in us, simulated / "
          "real, and how many violations each stage caused, simulated / real; the model's "
          "figures are its first seed's.\n\n"
          "| point | encode p50, p99 | hold p50, p99 | socket p50, p99 | check p50, p99 | "
          "violations by stage: encode / hold / socket / check |\n|---|---|---|---|---|---|\n";
    for (const json* row : rows) {
      const json st = row->value("simulated", json::object()).value("stages", json::object());
      if (st.empty()) continue;
      const json real = row->value("attribution", json::object()).value("stages", json::object());
      std::map<std::string, int64_t> real_causes;
      for (const auto& c :
           row->value("attribution", json::object()).value("causes", json::array())) {
        real_causes[c.value("stage", "")] += IntField(c, "count");
      }
      md << "| " << MdText(row->value("name", "")) << " |";
      std::string counts;
      for (const char* stage : {"encode", "hold", "socket", "check"}) {
        const json sim = st.value(stage, json::object());
        const json re = real.value(stage, json::object());
        md << " " << Fmt("%.0f", IntField(sim, "p50_ns") / 1e3) << " / "
           << Fmt("%.0f", re.value("median_us", 0.0)) << ", "
           << Fmt("%.0f", IntField(sim, "p99_ns") / 1e3) << " / "
           << Fmt("%.0f", re.value("p99_us", 0.0)) << " |";
        counts += (counts.empty() ? "" : " / ") + std::to_string(IntField(sim, "violations")) +
                  "/" + std::to_string(real_causes[stage]);
      }
      md << " " << counts << " |\n";
    }
    md << "\n";
    md << ThreadRunsTable(rows);
  }
  if (any_ablation) {
    md << "### What each mechanism changes (ablation)\n\n"
          "Each point simulated again with one mechanism off or changed: violations and goodput "
          "(ops/s), beside the full model and the real run, each with the model's first seed "
          "(the verdicts above take the seeds' mean). \"whole socket per wakeup\": a "
          "thread's batch is everything its socket holds instead of one 64 KiB read; \"the "
          "waker is preempted\": a waking thread takes the core of the thread whose write woke "
          "it instead of the one that has run longest; \"one run queue for all cores\": any "
          "free core takes any waiting thread at once, instead of a queue per core whose "
          "threads another core takes only once their cache is cold; \"no thread model\" is the "
          "model "
          "without threads and cores (the server's workers take calls in arrival order, "
          "numbering costs no client CPU); \"every cost per call\": no CPU per socket read, "
          "the row's no-violation run's reads' CPU added to each call instead (the model before "
          "it had a cost per read); \"no core pauses\": no pause of a busy core that no "
          "modelled thread causes; \"pauses as the probe saw them (not the runs' steal)\": the "
          "pause probe's rate, not the one fed the share the hypervisor took in the point's "
          "real runs; \"context creation off the cores\" and \"reconnects off the "
          "cores\": those cost waiting only, no CPU; \"busy cores preempted at the wakeup\": "
          "a woken thread's preemption of a busy core lands at its wakeup, not the busy-core "
          "probe's delay later; \"idle cores wake as after a long idle\": every wakeup of an "
          "idle core takes what the idle-core probe measured after its longest idle, whatever "
          "the core's idle time; \"woken threads wait behind descheduled ones\": every waiting "
          "thread in "
          "order of arrival, not the probe's share ahead; \"context creation as on a quiet "
          "machine\": a re-creation "
          "takes what back-to-back creations took, not what one right after a burst of the "
          "mode's load took; \"a context's waiters wake together\": the receivers waiting for "
          "a re-created context all wake when it is ready, instead of one after another as a "
          "mutex's waiters do.\n\n";
    // One column per variant, in the order the rows list them.
    std::vector<std::string> variants;
    for (const json* row : rows) {
      for (const auto& a : row->value("ablation", json::array())) {
        const std::string v = a.value("without", "");
        if (std::find(variants.begin(), variants.end(), v) == variants.end()) {
          variants.push_back(v);
        }
      }
    }
    md << "| point | real | full model";
    for (const std::string& v : variants) md << " | " << MdText(v);
    md << " |\n|---|---|---";
    for (size_t i = 0; i < variants.size(); ++i) md << "|---";
    md << "|\n";
    auto cell = [](const json& r) {
      return std::to_string(IntField(r, "violations")) + ", " +
             Fmt("%.0f", r.value("ops_per_s", 0.0));
    };
    for (const json* row : rows) {
      if (!row->contains("ablation")) continue;
      std::map<std::string, json> by;
      for (const auto& a : (*row)["ablation"])
        by[a.value("without", "")] = a.value("simulated", json::object());
      md << "| " << MdText(row->value("name", "")) << " | "
         << cell(row->value("measured", json::object())) << " | "
         << cell(row->value("simulated", json::object()));
      for (const std::string& v : variants) {
        md << " | " << (by.count(v) ? cell(by[v]) : std::string("-"));
      }
      md << " |\n";
    }
    md << "\n";
  }
  md << "\nWhy these tolerances: the real run shares the machine's " << r.machine.logical_cpus
     << " logical CPUs between the client's threads, the server's threads and everything else "
        "on the machine; a thread preempted for one scheduler slice (milliseconds) holds its "
        "calls while others overtake them, which moves a violation count by a few events and "
        "goodput by tens of percent from run to run. Hence: where the model says zero, a single "
        "measured event refutes it; otherwise a factor "
     << Fmt("%g", tol.value("violation_factor", 0.0)) << " or " << IntField(tol, "violation_slack")
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
  // Points that disagree, each with the cause its evidence shows.
  bool any_disagree = false;
  for (const json* row : rows) any_disagree |= Verdict(*row) != "agree";
  if (any_disagree) {
    md << "\n### Points that disagree, and what their evidence shows\n\n";
    for (const json* row : rows) {
      if (Verdict(*row) == "agree") continue;
      const std::string why = row->value("diagnosis", "");
      md << "- " << MdText(row->value("name", "")) << ": "
         << MdText(why.empty() ? row->value("detail", "") : why) << "\n";
    }
  }
  // The collapse plot, for the nconnect with the most shared no-skew points.
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
  if (most > 0) {
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
  }
  md << "\nValidation took " << Fmt("%.1f", section.value("wall_seconds", 0.0)) << " s.\n";
  out.report_md.append("\n").append(md.str());
}

}  // namespace secmode::render
