// Report part of section "nconnect-validation": the simulator against the
// real krb5p client and server, per grid point, with the agreement rule,
// each point's verdict, and the notes of the points not asserted. Drawn
// from the `nconnect` rows of kind "validation" and the section's
// calibration and rule.
#include <algorithm>
#include <climits>
#include <map>
#include <sstream>
#include <string>

#include "common/format.h"
#include "render/report_sections.h"

namespace secmode::render {

using common::CsvField;
using common::Fmt;
using common::SizeLabel;
using common::SkewLabel;

namespace {

using nlohmann::json;

// "526..678 (3 runs)", or the one run's count.
std::string MeasuredRange(const json& row) {
  const json runs = row.value("measured_runs", json::array());
  if (runs.size() < 2)
    return std::to_string(I(row.value("measured", json::object()), "violations"));
  int64_t lo = INT64_MAX, hi = 0;
  for (const auto& r : runs) {
    lo = std::min(lo, I(r, "violations"));
    hi = std::max(hi, I(r, "violations"));
  }
  return std::to_string(lo) + ".." + std::to_string(hi) + " (" + std::to_string(runs.size()) +
         " runs)";
}

std::string Verdict(const json& row) {
  const bool v = row.value("violations_agree", false), g = row.value("goodput_agree", false);
  if (v && g) return "agree";
  return !v ? "DISAGREE (violations)" : "DISAGREE (goodput)";
}

}  // namespace

void RenderValidationSection(const harness::RunResults& r, const json& section, Rendered& out) {
  std::vector<const json*> rows;
  for (const auto& row : r.nconnect) {
    if (row.value("kind", "") == "validation") rows.push_back(&row);
  }
  const json c = section.value("calibration", json::object());
  const json tol = section.value("tolerance", json::object());
  std::ostringstream md;
  md << "## nconnect simulator vs real sockets (validation)\n\n"
     << "Each row runs one scenario twice: on the real RPCSEC_GSS TCP client and server ("
     << section.value("mode", "")
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
    std::string slices;
    for (const auto& p : c.value("probes", json::array())) {
      slices += (slices.empty() ? "" : ", ") + Fmt("%.0f", p.value("run_p50_us", 0.0)) +
                " us with " + std::to_string(I(p, "threads")) + " busy threads";
    }
    md << "and the thread model (sim/scenario.h, thread_model): a receiver thread per connection "
          "on the client and a thread per connection on the server, each handling what its "
          "socket holds as one batch, on the machine's "
       << I(c, "cores")
       << " cores; the scheduler's time slice from the scheduler probe (median run of a busy "
          "thread between deschedulings: "
       << slices
       << "); wakeup preemption from the wakeup probe (a woken thread takes a core from one "
          "that has run "
       << Fmt("%.1f", I(c, "wakeup_preempt_ns") / 1e3) << " us: the p10 run of a busy thread while "
       << I(wake, "wakers") << " threads keep waking); the loopback's own round trip "
       << Fmt("%.1f", I(c, "net_rtt_ns") / 1e3)
       << " us (one sys call at a time: p50 minus both ends' CPU); and per row each end's CPU per "
          "call, measured from the threads' own CPU time in a run of the mode at the row's "
          "connections, slots and contexts with a window wider than the slots (no violation "
          "can happen there), less the crypto the model adds. Per-row values are in "
          "results.json. The model resends a disconnected connection's calls round-robin over "
          "all connections, as the load generator does (Linux keeps them on their transport)."
          "\n\n";
  } else {
    md << "loopback round trip " << Fmt("%.1f", I(c, "rtt_ns") / 1e3)
       << " us (sys-mode READ, 1 slot, p50, minus the per-call work), and per row a server "
          "service time besides the server's crypto = server threads / sys-mode ops/s of the "
          "same connections and slots measured just before the row plus the client's crypto ("
       << Fmt("%.1f", I(c, "client_crypto_ns") / 1e3)
       << " us; client and server share the cores); per-row values are in results.json. The "
          "server runs a thread per connection (model: min(nconnect, cores) server threads "
          "taking connections in turn), and the model resends a disconnected connection's calls "
          "round-robin over all connections, as the load generator does.\n\n";
  }
  md << "Agreement rule: each point runs " << std::max<int64_t>(1, I(section, "runs"))
     << " time(s) on real sockets. Where the model predicts zero violations every real run must "
        "show zero; otherwise the simulated count (the measured ones scaled to the simulated "
        "number of operations) lies within the measured range widened by a factor "
     << Fmt("%.2f", tol.value("violation_factor", 0.0)) << " or within "
     << I(tol, "violation_slack") << " events of it; goodput agrees within a factor "
     << Fmt("%.2f", tol.value("goodput_factor", 0.0)) << " of the runs' median.\n\n";
  md << "| nconnect | slots | window | reaction | I/O | skew ms | violations sim | violations "
        "measured | ops/s sim | ops/s measured (median run) | verdict |\n"
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n";
  int agree = 0;
  for (const json* row : rows) {
    const json s = row->value("scenario", json::object());
    const json sim = row->value("simulated", json::object());
    const json meas = row->value("measured", json::object());
    const std::string verdict = Verdict(*row);
    agree += verdict == "agree" ? 1 : 0;
    md << "| " << I(s, "nconnect") << " | " << I(s, "slots") << " | " << I(s, "window") << " | "
       << s.value("reaction", "") << " | " << I(s, "io_size") << " " << s.value("op", "") << " | "
       << Fmt("%.3f", I(s, "skew_ns") / 1e6) << " | " << I(sim, "violations") << " | "
       << MeasuredRange(*row) << " | " << Fmt("%.0f", sim.value("ops_per_s", 0.0)) << " | "
       << Fmt("%.0f", meas.value("ops_per_s", 0.0)) << " | " << verdict << " |\n";
  }
  md << "\n" << agree << " of " << rows.size() << " scenarios agree.\n\n";
  md << "| point | asserted | disconnects sim / real | p50 us sim / real | p99 us sim / real | "
        "detail |\n|---|---|---|---|---|---|\n";
  for (const json* row : rows) {
    const json sim = row->value("simulated", json::object());
    const json meas = row->value("measured", json::object());
    const bool asserted = row->value("asserted", false);
    const bool assert_goodput = row->value("assert_goodput", asserted);
    md << "| " << row->value("name", "") << " | "
       << (!asserted        ? "no (see below)"
           : assert_goodput ? "violations, goodput"
                            : "violations (see below)")
       << " | " << I(sim, "disconnects") << " / " << I(meas, "disconnects") << " | "
       << Fmt("%.0f", I(sim, "p50_ns") / 1e3) << " / " << Fmt("%.0f", I(meas, "p50_ns") / 1e3)
       << " | " << Fmt("%.0f", I(sim, "p99_ns") / 1e3) << " / "
       << Fmt("%.0f", I(meas, "p99_ns") / 1e3) << " | " << row->value("detail", "") << " |\n";
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
      const std::string head = "| " + row->value("name", "") + " | " +
                               std::to_string(I(a, "violations")) + " (" +
                               std::to_string(I(a, "matched")) + ") | " + medians + " | ";
      if (causes.empty()) {
        md << head << "- | 0 | - | - | - |\n";
        continue;
      }
      bool first = true;
      for (const auto& c : causes) {
        md << (first ? head : "| | | | ") << c.value("stage", "") << ", " << c.value("thread", "")
           << " | " << I(c, "count") << " | " << Fmt("%.0f", c.value("median_excess_us", 0.0))
           << " | " << Fmt("%.0f", c.value("max_excess_us", 0.0)) << " | "
           << Fmt("%.0f", c.value("median_lag", 0.0)) << " |\n";
        first = false;
      }
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
          "real, and how many violations each stage caused, simulated / real.\n\n"
          "| point | encode p50, p99 | hold p50, p99 | socket p50, p99 | check p50, p99 | "
          "violations by stage: encode / hold / socket / check |\n|---|---|---|---|---|---|\n";
    for (const json* row : rows) {
      const json st = row->value("simulated", json::object()).value("stages", json::object());
      if (st.empty()) continue;
      const json real = row->value("attribution", json::object()).value("stages", json::object());
      std::map<std::string, int64_t> real_causes;
      for (const auto& c :
           row->value("attribution", json::object()).value("causes", json::array())) {
        real_causes[c.value("stage", "")] += I(c, "count");
      }
      md << "| " << row->value("name", "") << " |";
      std::string counts;
      for (const char* stage : {"encode", "hold", "socket", "check"}) {
        const json sim = st.value(stage, json::object());
        const json re = real.value(stage, json::object());
        md << " " << Fmt("%.0f", I(sim, "p50_ns") / 1e3) << " / "
           << Fmt("%.0f", re.value("median_us", 0.0)) << ", " << Fmt("%.0f", I(sim, "p99_ns") / 1e3)
           << " / " << Fmt("%.0f", re.value("p99_us", 0.0)) << " |";
        counts += (counts.empty() ? "" : " / ") + std::to_string(I(sim, "violations")) + "/" +
                  std::to_string(real_causes[stage]);
      }
      md << " " << counts << " |\n";
    }
    md << "\n";
  }
  if (any_ablation) {
    md << "### What each mechanism changes (ablation)\n\n"
          "Each point simulated again with one mechanism off: violations and goodput (ops/s), "
          "beside the full model and the real run. \"no thread model\" is the model without "
          "threads and cores (the server's workers take calls in arrival order, numbering costs "
          "no client CPU).\n\n"
          "| point | real | full model | no batching | no wakeup preemption | no descheduling | no "
          "thread model |\n|---|---|---|---|---|---|---|\n";
    auto cell = [](const json& r) {
      return std::to_string(I(r, "violations")) + ", " + Fmt("%.0f", r.value("ops_per_s", 0.0));
    };
    for (const json* row : rows) {
      if (!row->contains("ablation")) continue;
      std::map<std::string, json> by;
      for (const auto& a : (*row)["ablation"])
        by[a.value("without", "")] = a.value("simulated", json::object());
      md << "| " << row->value("name", "") << " | " << cell(row->value("measured", json::object()))
         << " | " << cell(row->value("simulated", json::object()));
      for (const char* v :
           {"no batching", "no wakeup preemption", "no descheduling", "no thread model"}) {
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
        "goodput by tens of percent from run to run. Hence: zero where the model's zero is "
        "structural (fewer numbers in flight than the window, or one context per connection "
        "with in-order TCP), otherwise a factor "
     << Fmt("%g", tol.value("violation_factor", 0.0)) << " or " << I(tol, "violation_slack")
     << " events on violations (counts grow roughly geometrically with skew and slots, so a "
        "factor still separates \"a few\" from \"most calls\"), and a factor "
     << Fmt("%g", tol.value("goodput_factor", 0.0))
     << " on goodput (the model's CPU per call is measured by runs that cannot violate the "
        "window, not fitted to these rows).\n\n";
  for (const json* row : rows) {
    const bool asserted = row->value("asserted", false);
    if (!row->value("assert_goodput", asserted)) {
      md << "- " << row->value("name", "") << ": " << row->value("note", "") << "\n";
    }
  }
  md << "\nValidation took " << Fmt("%.1f", section.value("wall_seconds", 0.0)) << " s.\n";
  out.report_md.append("\n").append(md.str());
}

}  // namespace secmode::render
