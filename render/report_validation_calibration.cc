// The validation's report: what the simulator is fed, from the section's
// calibration (suite/nconnect_validation.h, Calibration::ToJson).
#include <algorithm>
#include <sstream>
#include <string>

#include "common/format.h"
#include "render/markdown.h"
#include "render/report_sections.h"
#include "render/report_validation_parts.h"

namespace secmode::render {

using common::Fmt;
using nlohmann::json;

namespace {

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

// The thread model's scheduler: the cores, the time slice, wakeups of busy
// and idle cores, who waits first, and the pauses of a busy core.
std::string SchedulerText(const json& c) {
  std::ostringstream md;
  const json wake = c.value("wakeup_probe", json::object());
  const json pause = c.value("pause_probe", json::object());
  std::string slices;
  for (const auto& p : c.value("probes", json::array())) {
    slices += (slices.empty() ? "" : ", ") + Fmt("%.0f", p.value("run_p50_us", 0.0)) + " us with " +
              std::to_string(IntField(p, "threads")) + " busy threads";
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
        "ablation's \"pauses as the probe saw them\" is the model without that); ";
  return md.str();
}

// The waits the thread model is given (a round trip, a reconnect, a
// context's creation), a socket read's CPU and each row's CPU per call.
std::string WaitsText(const json& c, bool lock_wakes_one) {
  std::ostringstream md;
  md << (c.value("cores_awake", false)
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
  return md.str();
}

// The model against its own calibration: the one-call run; empty when the
// model did not run it.
std::string OneCallText(const json& c) {
  if (IntField(c, "one_call_model_p50_ns") <= 0) return "";
  std::ostringstream md;
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
  return md.str();
}

// The model without threads: its round trip and service time.
std::string NoThreadModelText(const json& c) {
  std::ostringstream md;
  md << "loopback round trip " << Fmt("%.1f", IntField(c, "rtt_ns") / 1e3)
     << " us (sys-mode READ, 1 slot, p50, minus the per-call work), and per row a server "
        "service time besides the server's crypto = server threads / sys-mode ops/s of the "
        "same connections and slots measured just before the row plus the client's crypto ("
     << Fmt("%.1f", IntField(c, "client_crypto_ns") / 1e3)
     << " us; client and server share the cores); per-row values are in results.json. The "
        "server runs a thread per connection (model: min(nconnect, cores) server threads "
        "taking connections in turn), and the model resends a disconnected connection's calls "
        "round-robin over all connections, as the load generator does.\n\n";
  return md.str();
}

}  // namespace

std::string CalibrationMarkdown(const json& section, const ValidationRows& rows) {
  const json c = section.value("calibration", json::object());
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
    // What the rows' model did (a run saved before the switch existed has none).
    bool lock_wakes_one = false;
    for (const json* row : rows) {
      lock_wakes_one |=
          row->value("scenario", json::object()).value("context_lock_wakes_one", false);
    }
    md << SchedulerText(c) << WaitsText(c, lock_wakes_one) << OneCallText(c);
  } else {
    md << NoThreadModelText(c);
  }
  return md.str();
}

}  // namespace secmode::render
