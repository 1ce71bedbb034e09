#include "sim/recommend.h"

#include <algorithm>

#include "common/format.h"
#include "sim/simulator.h"

namespace secmode::sim {

using common::Fmt;
using common::Result;
using common::Status;

namespace {

Result<Alternative> RunAlternative(std::string name, const Scenario& s, int seeds) {
  Alternative a{std::move(name), s, {}, 0, 0};
  for (int k = 0; k < seeds; ++k) {
    Scenario run = s;
    run.seed = s.seed + static_cast<uint64_t>(k);
    SECMODE_ASSIGN_OR_RETURN(ScenarioResult r, Simulate(run));
    if (k == 0) {
      a.result = r;
      a.worst_ops_per_s = r.ops_per_s;
    }
    a.worst_violations = std::max(a.worst_violations, r.violations);
    a.worst_ops_per_s = std::min(a.worst_ops_per_s, r.ops_per_s);
  }
  return a;
}

}  // namespace

Result<Recommendation> Recommend(const Scenario& base, int64_t max_slots, int seeds) {
  SECMODE_RETURN_IF_ERROR(base.Validate());
  if (max_slots < 1 || max_slots > kMaxSlots) {
    return Status::InvalidArgument("max-slots: " + std::to_string(max_slots) + ", must be in [1, " +
                                   std::to_string(kMaxSlots) + "]");
  }
  if (seeds < 1) return Status::InvalidArgument("seeds: must be at least 1");
  Recommendation rec;
  for (int64_t slots = 1; slots <= max_slots; slots *= 2) {
    Scenario s = base;
    s.slots = slots;
    s.spread_cap = 0;
    if (!s.Validate().ok()) break;  // e.g. buffers too large at this size
    bool safe = true;
    ScenarioResult first;
    for (int k = 0; k < seeds && safe; ++k) {
      s.seed = base.seed + static_cast<uint64_t>(k);
      SECMODE_ASSIGN_OR_RETURN(ScenarioResult r, Simulate(s));
      if (k == 0) first = r;
      safe = r.violations == 0;
    }
    if (!safe) {
      rec.first_unsafe_slots = slots;
      break;
    }
    rec.max_safe_slots = slots;
    rec.at_max_safe = first;
  }
  // The alternatives keep the slots the user asked for (or the first unsafe
  // count, if that is more) and change one thing each.
  Scenario given = base;
  given.slots = std::max(base.slots, rec.first_unsafe_slots);
  if (!given.Validate().ok()) return rec;
  rec.alternative_slots = given.slots;
  struct Change {
    const char* name;
    bool applies;
    void (*apply)(Scenario&);
  };
  const Change changes[] = {
      {"as given", true, [](Scenario&) {}},
      {"per-connection contexts", !base.per_connection_context,
       [](Scenario& s) { s.per_connection_context = true; }},
      {"spread capped at the window", base.spread_cap == 0 || base.spread_cap > base.window,
       [](Scenario& s) { s.spread_cap = s.window; }},
      {"re-encode at transmit", !base.reencode, [](Scenario& s) { s.reencode = true; }},
  };
  for (const Change& c : changes) {
    if (!c.applies) continue;
    Scenario s = given;
    c.apply(s);
    if (!s.Validate().ok()) continue;
    SECMODE_ASSIGN_OR_RETURN(Alternative a, RunAlternative(c.name, s, seeds));
    rec.alternatives.push_back(std::move(a));
  }
  return rec;
}

std::string AssumptionsText(const Scenario& b) {
  std::string out;
  out += "  window " + std::to_string(b.window) + ", reaction " +
         rpc::WindowPolicyName(b.reaction) + ", " +
         (b.per_connection_context ? "one context per connection" : "one shared context") +
         ", re-encode " + (b.reencode ? "on" : "off") + "\n";
  out += "  nconnect " + std::to_string(b.nconnect) + ", " + std::to_string(b.io_size) + " B " +
         OpName(b.op) + ", skew " + Fmt("%.3f", b.skew_ns / 1e6) + " ms on connection " +
         std::to_string(b.skew_conn) + " (" + SkewWhereName(b.skew_where) + ")\n";
  out += "  network: RTT " + Fmt("%.3f", b.rtt_ns / 1e6) + " ms, jitter " +
         DistName(b.jitter_dist) + " mean " + Fmt("%.3f", b.jitter_ns / 1e6) + " ms, " +
         Fmt("%.2f", b.bandwidth_bytes_per_s * 8 / 1e9) + " Gbit/s per connection\n";
  out += "  crypto per message " + Fmt("%.0f", b.cost_fixed_ns) + " ns + " +
         Fmt("%.3f", b.cost_ns_per_byte) + " ns/byte; server service " + DistName(b.service_dist) +
         " mean " + Fmt("%.3f", b.service_ns / 1e6) + " ms\n";
  if (b.thread_model) {
    out += "  threads: a receiver thread per connection (client CPU per call besides crypto " +
           Fmt("%.1f", b.client_call_ns / 1e3) + " us) and a server thread per connection, " +
           (!b.batching ? std::string("no batching")
            : b.read_bytes > 0
                ? "per-wakeup batches of one " + std::to_string(b.read_bytes) + "-byte read"
                : std::string("per-wakeup batches of all the socket holds")) +
           (b.client_read_ns > 0 || b.server_read_ns > 0
                ? ", each read costing " + Fmt("%.1f", b.client_read_ns / 1e3) + " us (client) / " +
                      Fmt("%.1f", b.server_read_ns / 1e3) + " us (server) of CPU"
                : std::string()) +
           "\n";
    if (b.cores > 0) {
      out +=
          "  pauses: " + std::to_string(b.cores) + " cores shared by client and server threads" +
          (b.per_core_queues ? " (a run queue per core, a thread's cache hot for " +
                                   Fmt("%.3f", b.migrate_ns / 1e6) + " ms)"
                             : std::string()) +
          "; a thread is descheduled after a " + Fmt("%.3f", b.slice_ns / 1e6) +
          " ms slice when others wait" +
          (b.wakeup_preempt_ns > 0
               ? ", and a waking thread takes the core of one that has run " +
                     Fmt("%.1f", b.wakeup_preempt_ns / 1e3) + " us" +
                     (b.busy_wake_ns.empty()
                          ? std::string(" at once")
                          : " a median " + Fmt("%.1f", b.busy_wake_ns[kPauseMedian] / 1e3) +
                                " us after its wakeup")
               : ", and a waking thread waits for a slice to end") +
          (b.idle_wake_ns > 0 ? "; a thread woken onto an idle core starts " +
                                    Fmt("%.1f", b.idle_wake_ns / 1e3) + " us later" +
                                    (b.per_core_queues && !b.idle_wake_curve_ns.empty()
                                         ? " after a long idle, " +
                                               Fmt("%.1f", b.idle_wake_curve_ns.front() / 1e3) +
                                               " us after a short one"
                                         : std::string())
                              : std::string()) +
          (b.woken_first_share > 0 ? "; " + Fmt("%.0f", b.woken_first_share * 100) +
                                         "% of woken threads wait ahead of the ones they preempted"
                                   : std::string()) +
          (b.pause_per_s > 0 && !b.pause_ns.empty()
               ? "; a busy core pauses " + Fmt("%.0f", b.pause_per_s) + " times a second (median " +
                     Fmt("%.1f", b.pause_ns[kPauseMedian] / 1e3) + " us, longest " +
                     Fmt("%.1f", b.pause_ns.back() / 1e3) + " us)"
               : std::string()) +
          "\n";
    } else {
      out += "  pauses: none (a core for every thread)\n";
    }
  } else {
    out += "  no threads or cores: encoding on the issuing thread, " +
           std::to_string(b.server_threads) + " server workers (" +
           ServerOrderName(b.server_order) + " order); nothing is ever descheduled\n";
  }
  return out;
}

std::string Recommendation::ToText(const Scenario& b) const {
  std::string out = "assumptions:\n" + AssumptionsText(b);
  if (max_safe_slots == 0) {
    out += "no slot count is safe: even 1 slot saw window violations\n";
  } else {
    out +=
        "largest safe slot count: " + std::to_string(max_safe_slots) +
        " (no violations in any seed at this or any smaller power of two" +
        (first_unsafe_slots ? ", " + std::to_string(first_unsafe_slots) + " slots had violations)\n"
                            : "; larger counts not tried)\n");
    out += "  goodput there: " + Fmt("%.0f", at_max_safe.ops_per_s) + " ops/s, " +
           Fmt("%.1f", at_max_safe.mb_per_s) + " MB/s, p99 " +
           Fmt("%.3f", at_max_safe.p99_ns / 1e6) + " ms\n";
  }
  if (!alternatives.empty()) {
    out += "alternatives at " + std::to_string(alternative_slots) +
           " slots (goodput and violations: the worst of the seeds; p99: the first seed):\n";
    for (const Alternative& a : alternatives) {
      out += "  " + a.name + ": " + Fmt("%.0f", a.worst_ops_per_s) + " ops/s, " +
             Fmt("%.1f", a.worst_ops_per_s * static_cast<double>(b.io_size) / 1e6) + " MB/s, p99 " +
             Fmt("%.3f", a.result.p99_ns / 1e6) + " ms, " + std::to_string(a.worst_violations) +
             " violations" + (a.result.truncated ? " (thrashes: the run was cut short)" : "") +
             "\n";
    }
  }
  return out;
}

}  // namespace secmode::sim
