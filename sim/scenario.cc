#include "sim/scenario.h"

#include <cmath>

namespace secmode::sim {

using common::Result;
using common::Status;
using nlohmann::json;

namespace {

template <typename E, size_t N>
Result<E> ParseName(const std::string& what, const std::string& name,
                    const std::pair<const char*, E> (&table)[N]) {
  std::string known;
  for (const auto& [text, value] : table) {
    if (name == text) return value;
    known += (known.empty() ? "" : ", ") + std::string(text);
  }
  return Status::InvalidArgument(what + ": unknown value '" + name + "' (known: " + known + ")");
}

template <typename E, size_t N>
const char* NameOf(E value, const std::pair<const char*, E> (&table)[N]) {
  for (const auto& [text, v] : table) {
    if (v == value) return text;
  }
  return "?";
}

const std::pair<const char*, Reaction> kReactions[] = {
    {"drop", Reaction::kDrop},
    {"drop-disconnect", Reaction::kDropDisconnect},
    {"discard-context", Reaction::kDiscardContext}};
const std::pair<const char*, Op> kOps[] = {{"read", Op::kRead}, {"write", Op::kWrite}};
const std::pair<const char*, Dist> kDists[] = {{"constant", Dist::kConstant},
                                               {"exponential", Dist::kExponential},
                                               {"lognormal", Dist::kLogNormal}};
const std::pair<const char*, SkewWhere> kSkewWheres[] = {{"client", SkewWhere::kClient},
                                                         {"network", SkewWhere::kNetwork}};
const std::pair<const char*, ServerOrder> kServerOrders[] = {
    {"arrival", ServerOrder::kArrival}, {"round-robin", ServerOrder::kRoundRobin}};
const std::pair<const char*, PreemptVictim> kPreemptVictims[] = {
    {"longest", PreemptVictim::kLongest}, {"waker", PreemptVictim::kWaker}};

Status InRange(const char* name, int64_t v, int64_t lo, int64_t hi) {
  if (v < 0 && lo == 0) {
    return Status::InvalidArgument(std::string(name) + ": " + std::to_string(v) +
                                   ", must not be negative");
  }
  if (v < lo || v > hi) {
    return Status::InvalidArgument(std::string(name) + ": " + std::to_string(v) + ", must be in [" +
                                   std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return Status::Ok();
}

Status FiniteInRange(const char* name, double v, double lo, double hi) {
  if (!std::isfinite(v) || v < lo || v > hi) {
    return Status::InvalidArgument(std::string(name) + ": " + std::to_string(v) +
                                   ", must be a number in [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "]");
  }
  return Status::Ok();
}

// Quantiles at kPauseProbs: none, or one per probability, each in [0, 1 h],
// none below the one before.
constexpr int64_t kHour = int64_t{3600} * 1000000000;  // the longest time any knob takes, ns
Status Quantiles(const char* name, const std::vector<int64_t>& q) {
  if (!q.empty() && q.size() != kPauseQuantiles) {
    return Status::InvalidArgument(std::string(name) + ": expected " +
                                   std::to_string(kPauseQuantiles) + " quantiles, got " +
                                   std::to_string(q.size()));
  }
  for (size_t i = 0; i < q.size(); ++i) {
    SECMODE_RETURN_IF_ERROR(InRange(name, q[i], 0, kHour));
    if (i > 0 && q[i] < q[i - 1]) {
      return Status::InvalidArgument(std::string(name) + ": quantiles must not decrease");
    }
  }
  return Status::Ok();
}

}  // namespace

const char* ReactionName(Reaction r) { return NameOf(r, kReactions); }
Result<Reaction> ParseReaction(const std::string& n) {
  return ParseName("reaction", n, kReactions);
}
const char* OpName(Op op) { return NameOf(op, kOps); }
Result<Op> ParseOp(const std::string& n) { return ParseName("op", n, kOps); }
const char* DistName(Dist d) { return NameOf(d, kDists); }
Result<Dist> ParseDist(const std::string& n) { return ParseName("distribution", n, kDists); }
const char* SkewWhereName(SkewWhere w) { return NameOf(w, kSkewWheres); }
const char* ServerOrderName(ServerOrder o) { return NameOf(o, kServerOrders); }
Result<ServerOrder> ParseServerOrder(const std::string& n) {
  return ParseName("server-order", n, kServerOrders);
}
const char* PreemptVictimName(PreemptVictim v) { return NameOf(v, kPreemptVictims); }
Result<PreemptVictim> ParsePreemptVictim(const std::string& n) {
  return ParseName("preempt-victim", n, kPreemptVictims);
}
Result<SkewWhere> ParseSkewWhere(const std::string& n) {
  return ParseName("skew-where", n, kSkewWheres);
}

int64_t Scenario::RequestBytes() const {
  return kRequestOverhead + (op == Op::kWrite ? io_size : 0);
}
int64_t Scenario::ReplyBytes() const { return kReplyOverhead + (op == Op::kRead ? io_size : 0); }
int64_t Scenario::CostNs(int64_t bytes) const {
  return static_cast<int64_t>(cost_fixed_ns + cost_ns_per_byte * static_cast<double>(bytes) + 0.5);
}

Status Scenario::Validate() const {
  SECMODE_RETURN_IF_ERROR(InRange("nconnect", nconnect, 1, kMaxConnections));
  SECMODE_RETURN_IF_ERROR(InRange("slots", slots, 1, kMaxSlots));
  SECMODE_RETURN_IF_ERROR(InRange("window", window, 1, kMaxWindow));
  SECMODE_RETURN_IF_ERROR(InRange("io-size", io_size, 0, kMaxIoSize));
  // Checked after io-size so the product cannot overflow (2^20 x 2^27).
  const int64_t buffers = slots * (RequestBytes() + ReplyBytes());
  if (buffers > kMaxBufferBytes) {
    return Status::InvalidArgument(
        "slots: " + std::to_string(slots) + " slots of " + std::to_string(io_size) +
        "-byte I/O need " + std::to_string(buffers >> 20) +
        " MiB of message buffers, more than the " + std::to_string(kMaxBufferBytes >> 20) +
        " MiB a load generator may hold");
  }
  SECMODE_RETURN_IF_ERROR(InRange("spread-cap", spread_cap, 0, kMaxWindow));
  SECMODE_RETURN_IF_ERROR(FiniteInRange("cost-fixed-ns", cost_fixed_ns, 0, 1e12));
  SECMODE_RETURN_IF_ERROR(FiniteInRange("cost-ns-per-byte", cost_ns_per_byte, 0, 1e6));
  SECMODE_RETURN_IF_ERROR(
      InRange("retransmit-timeout-ns", retransmit_timeout_ns, 1, int64_t{3600} * 1000000000));
  SECMODE_RETURN_IF_ERROR(FiniteInRange("bandwidth", bandwidth_bytes_per_s, 1e3, 1e13));
  // One hour bounds every delay so that sums of them stay far from overflow.
  SECMODE_RETURN_IF_ERROR(InRange("rtt-ns", rtt_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("jitter-ns", jitter_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(FiniteInRange("jitter-sigma", jitter_sigma, 0, 4));
  SECMODE_RETURN_IF_ERROR(InRange("skew-conn", skew_conn, 0, nconnect - 1));
  SECMODE_RETURN_IF_ERROR(InRange("skew-ns", skew_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("server-threads", server_threads, 1, 65536));
  SECMODE_RETURN_IF_ERROR(InRange("service-ns", service_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(FiniteInRange("service-sigma", service_sigma, 0, 4));
  SECMODE_RETURN_IF_ERROR(InRange("gss-setup-ns", gss_setup_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("gss-setup-cpu-ns", gss_setup_cpu_ns, 0, gss_setup_ns));
  SECMODE_RETURN_IF_ERROR(InRange("reconnect-ns", reconnect_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("reconnect-cpu-ns", reconnect_cpu_ns, 0, reconnect_ns));
  SECMODE_RETURN_IF_ERROR(InRange("reconnect-server-cpu-ns", reconnect_server_cpu_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("cores", cores, 0, 65536));
  SECMODE_RETURN_IF_ERROR(InRange("slice-ns", slice_ns, 1000, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("client-call-ns", client_call_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("client-read-ns", client_read_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("server-read-ns", server_read_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("read-bytes", read_bytes, 0, kMaxBufferBytes));
  SECMODE_RETURN_IF_ERROR(InRange("migrate-ns", migrate_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("wakeup-preempt-ns", wakeup_preempt_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("idle-wake-ns", idle_wake_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(InRange("skew-sender-ns", skew_sender_ns, 0, kHour));
  SECMODE_RETURN_IF_ERROR(FiniteInRange("pause-per-s", pause_per_s, 0, 1e6));
  SECMODE_RETURN_IF_ERROR(Quantiles("pause-ns", pause_ns));
  SECMODE_RETURN_IF_ERROR(Quantiles("busy-wake-ns", busy_wake_ns));
  SECMODE_RETURN_IF_ERROR(FiniteInRange("woken-first-share", woken_first_share, 0, 1));
  if (idle_wake_after_ns.size() != idle_wake_curve_ns.size() || idle_wake_after_ns.size() > 64) {
    return Status::InvalidArgument(
        "idle-wake-after-ns and idle-wake-curve-ns: as many of one as of the other, at most 64, "
        "got " +
        std::to_string(idle_wake_after_ns.size()) + " and " +
        std::to_string(idle_wake_curve_ns.size()));
  }
  for (size_t i = 0; i < idle_wake_after_ns.size(); ++i) {
    SECMODE_RETURN_IF_ERROR(InRange("idle-wake-after-ns", idle_wake_after_ns[i], 0, kHour));
    SECMODE_RETURN_IF_ERROR(InRange("idle-wake-curve-ns", idle_wake_curve_ns[i], 0, kHour));
    if (i > 0 && idle_wake_after_ns[i] <= idle_wake_after_ns[i - 1]) {
      return Status::InvalidArgument("idle-wake-after-ns: idle lengths must rise");
    }
  }
  if (pause_per_s > 0 && pause_ns.empty()) {
    return Status::InvalidArgument("pause-per-s needs the pause durations (pause-ns)");
  }
  SECMODE_RETURN_IF_ERROR(InRange("ops", ops, 1, kMaxOps));
  SECMODE_RETURN_IF_ERROR(InRange("duration-ns", duration_ns, 0, 1000 * kHour));
  return Status::Ok();
}

json Scenario::ToJson() const {
  return {{"nconnect", nconnect},
          {"slots", slots},
          {"per_connection_context", per_connection_context},
          {"reencode", reencode},
          {"resend_any_connection", resend_any_connection},
          {"context_lock_wakes_one", context_lock_wakes_one},
          {"spread_cap", spread_cap},
          {"op", OpName(op)},
          {"io_size", io_size},
          {"cost_fixed_ns", cost_fixed_ns},
          {"cost_ns_per_byte", cost_ns_per_byte},
          {"gss_setup_ns", gss_setup_ns},
          {"gss_setup_cpu_ns", gss_setup_cpu_ns},
          {"retransmit_timeout_ns", retransmit_timeout_ns},
          {"reconnect_ns", reconnect_ns},
          {"reconnect_cpu_ns", reconnect_cpu_ns},
          {"reconnect_server_cpu_ns", reconnect_server_cpu_ns},
          {"bandwidth_bytes_per_s", bandwidth_bytes_per_s},
          {"rtt_ns", rtt_ns},
          {"jitter_dist", DistName(jitter_dist)},
          {"jitter_ns", jitter_ns},
          {"jitter_sigma", jitter_sigma},
          {"skew_conn", skew_conn},
          {"skew_ns", skew_ns},
          {"skew_where", SkewWhereName(skew_where)},
          {"window", window},
          {"reaction", ReactionName(reaction)},
          {"server_threads", server_threads},
          {"server_order", ServerOrderName(server_order)},
          {"service_dist", DistName(service_dist)},
          {"service_ns", service_ns},
          {"service_sigma", service_sigma},
          {"thread_model", thread_model},
          {"cores", cores},
          {"slice_ns", slice_ns},
          {"wakeup_preempt_ns", wakeup_preempt_ns},
          {"idle_wake_ns", idle_wake_ns},
          {"skew_sender_ns", skew_sender_ns},
          {"pause_per_s", pause_per_s},
          {"pause_ns", pause_ns},
          {"busy_wake_ns", busy_wake_ns},
          {"woken_first_share", woken_first_share},
          {"idle_wake_after_ns", idle_wake_after_ns},
          {"idle_wake_curve_ns", idle_wake_curve_ns},
          {"preempt_victim", PreemptVictimName(preempt_victim)},
          {"per_core_queues", per_core_queues},
          {"migrate_ns", migrate_ns},
          {"batching", batching},
          {"client_call_ns", client_call_ns},
          {"client_read_ns", client_read_ns},
          {"server_read_ns", server_read_ns},
          {"read_bytes", read_bytes},
          {"seed", seed},
          {"ops", ops},
          {"duration_ns", duration_ns}};
}

namespace {

// Reads j[key] into out if present; a wrong type is an error naming the key.
template <typename T>
Status Read(const json& j, const char* key, T& out) {
  if (!j.contains(key)) return Status::Ok();
  const json& v = j[key];
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return Status::InvalidArgument(std::string(key) + ": expected a boolean");
  } else {
    if (!v.is_number()) return Status::InvalidArgument(std::string(key) + ": expected a number");
  }
  out = v.get<T>();
  return Status::Ok();
}

Status ReadList(const json& j, const char* key, std::vector<int64_t>& out) {
  if (!j.contains(key)) return Status::Ok();
  const json& v = j[key];
  if (!v.is_array()) return Status::InvalidArgument(std::string(key) + ": expected a list");
  out.clear();
  for (const json& x : v) {
    if (!x.is_number_integer()) {
      return Status::InvalidArgument(std::string(key) + ": expected integers");
    }
    out.push_back(x.get<int64_t>());
  }
  return Status::Ok();
}

template <typename E>
Status ReadEnum(const json& j, const char* key, E& out, Result<E> (*parse)(const std::string&)) {
  if (!j.contains(key)) return Status::Ok();
  if (!j[key].is_string()) return Status::InvalidArgument(std::string(key) + ": expected a string");
  SECMODE_ASSIGN_OR_RETURN(out, parse(j[key].get<std::string>()));
  return Status::Ok();
}

}  // namespace

Scenario EveryMechanismScenario() {
  Scenario s;
  s.thread_model = true;
  s.cores = 2;
  s.wakeup_preempt_ns = 10000;
  s.idle_wake_ns = 30000;
  // A pause process of the shape the pause probe finds on a VM (round
  // figures: this scenario states the simulator's speed, not a machine).
  s.pause_per_s = 500;
  s.pause_ns = {5000, 10000, 20000, 40000, 50000, 60000, 80000, 200000, 2000000, 8000000};
  s.busy_wake_ns = {10000, 15000, 17000, 19000, 20000, 21000, 23000, 30000, 80000, 1000000};
  s.idle_wake_after_ns = {20000, 100000, 200000};
  s.idle_wake_curve_ns = {20000, 30000, 40000};
  s.woken_first_share = 0.9;
  s.client_call_ns = 5000;
  s.client_read_ns = 20000;  // a read's CPU once per batch, both ends
  s.server_read_ns = 20000;
  s.read_bytes = 65536;
  s.per_core_queues = true;
  s.context_lock_wakes_one = true;
  return s;
}

Result<Scenario> ScenarioFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("scenario: not a JSON object");
  Scenario s;
  SECMODE_RETURN_IF_ERROR(Read(j, "nconnect", s.nconnect));
  SECMODE_RETURN_IF_ERROR(Read(j, "slots", s.slots));
  SECMODE_RETURN_IF_ERROR(Read(j, "per_connection_context", s.per_connection_context));
  SECMODE_RETURN_IF_ERROR(Read(j, "reencode", s.reencode));
  SECMODE_RETURN_IF_ERROR(Read(j, "resend_any_connection", s.resend_any_connection));
  SECMODE_RETURN_IF_ERROR(Read(j, "context_lock_wakes_one", s.context_lock_wakes_one));
  SECMODE_RETURN_IF_ERROR(Read(j, "spread_cap", s.spread_cap));
  SECMODE_RETURN_IF_ERROR(ReadEnum(j, "op", s.op, ParseOp));
  SECMODE_RETURN_IF_ERROR(Read(j, "io_size", s.io_size));
  SECMODE_RETURN_IF_ERROR(Read(j, "cost_fixed_ns", s.cost_fixed_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "cost_ns_per_byte", s.cost_ns_per_byte));
  SECMODE_RETURN_IF_ERROR(Read(j, "gss_setup_ns", s.gss_setup_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "gss_setup_cpu_ns", s.gss_setup_cpu_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "retransmit_timeout_ns", s.retransmit_timeout_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "reconnect_ns", s.reconnect_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "reconnect_cpu_ns", s.reconnect_cpu_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "reconnect_server_cpu_ns", s.reconnect_server_cpu_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "bandwidth_bytes_per_s", s.bandwidth_bytes_per_s));
  SECMODE_RETURN_IF_ERROR(Read(j, "rtt_ns", s.rtt_ns));
  SECMODE_RETURN_IF_ERROR(ReadEnum(j, "jitter_dist", s.jitter_dist, ParseDist));
  SECMODE_RETURN_IF_ERROR(Read(j, "jitter_ns", s.jitter_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "jitter_sigma", s.jitter_sigma));
  SECMODE_RETURN_IF_ERROR(Read(j, "skew_conn", s.skew_conn));
  SECMODE_RETURN_IF_ERROR(Read(j, "skew_ns", s.skew_ns));
  SECMODE_RETURN_IF_ERROR(ReadEnum(j, "skew_where", s.skew_where, ParseSkewWhere));
  SECMODE_RETURN_IF_ERROR(Read(j, "window", s.window));
  SECMODE_RETURN_IF_ERROR(ReadEnum(j, "reaction", s.reaction, ParseReaction));
  SECMODE_RETURN_IF_ERROR(Read(j, "server_threads", s.server_threads));
  SECMODE_RETURN_IF_ERROR(ReadEnum(j, "server_order", s.server_order, ParseServerOrder));
  SECMODE_RETURN_IF_ERROR(ReadEnum(j, "preempt_victim", s.preempt_victim, ParsePreemptVictim));
  SECMODE_RETURN_IF_ERROR(ReadEnum(j, "service_dist", s.service_dist, ParseDist));
  SECMODE_RETURN_IF_ERROR(Read(j, "service_ns", s.service_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "service_sigma", s.service_sigma));
  SECMODE_RETURN_IF_ERROR(Read(j, "thread_model", s.thread_model));
  SECMODE_RETURN_IF_ERROR(Read(j, "cores", s.cores));
  SECMODE_RETURN_IF_ERROR(Read(j, "slice_ns", s.slice_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "wakeup_preempt_ns", s.wakeup_preempt_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "idle_wake_ns", s.idle_wake_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "skew_sender_ns", s.skew_sender_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "pause_per_s", s.pause_per_s));
  SECMODE_RETURN_IF_ERROR(ReadList(j, "pause_ns", s.pause_ns));
  SECMODE_RETURN_IF_ERROR(ReadList(j, "busy_wake_ns", s.busy_wake_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "woken_first_share", s.woken_first_share));
  SECMODE_RETURN_IF_ERROR(ReadList(j, "idle_wake_after_ns", s.idle_wake_after_ns));
  SECMODE_RETURN_IF_ERROR(ReadList(j, "idle_wake_curve_ns", s.idle_wake_curve_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "batching", s.batching));
  SECMODE_RETURN_IF_ERROR(Read(j, "client_call_ns", s.client_call_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "client_read_ns", s.client_read_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "server_read_ns", s.server_read_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "read_bytes", s.read_bytes));
  SECMODE_RETURN_IF_ERROR(Read(j, "per_core_queues", s.per_core_queues));
  SECMODE_RETURN_IF_ERROR(Read(j, "migrate_ns", s.migrate_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "seed", s.seed));
  SECMODE_RETURN_IF_ERROR(Read(j, "ops", s.ops));
  SECMODE_RETURN_IF_ERROR(Read(j, "duration_ns", s.duration_ns));
  SECMODE_RETURN_IF_ERROR(s.Validate());
  return s;
}

json ScenarioResult::ToJson() const {
  json j = {{"seed", seed},
            {"completed", completed},
            {"elapsed_ns", elapsed_ns},
            {"ops_per_s", ops_per_s},
            {"mb_per_s", mb_per_s},
            {"violations", violations},
            {"drops", drops},
            {"disconnects", disconnects},
            {"context_recreations", context_recreations},
            {"error_replies", error_replies},
            {"retransmissions", retransmissions},
            {"retransmitted_bytes", retransmitted_bytes},
            {"reencodes", reencodes},
            {"max_spread", max_spread},
            {"p50_ns", p50_ns},
            {"p99_ns", p99_ns},
            {"p999_ns", p999_ns},
            {"stalled_fraction", stalled_fraction},
            {"events", events},
            {"preemptions", preemptions},
            {"client_reads", client_reads},
            {"server_reads", server_reads},
            {"client_sleeps", client_sleeps},
            {"server_sleeps", server_sleeps},
            {"client_runs", client_runs},
            {"server_runs", server_runs},
            {"client_wait_ns", client_wait_ns},
            {"server_wait_ns", server_wait_ns},
            {"idle_fraction", idle_fraction},
            {"steal_fraction", steal_fraction},
            {"truncated", truncated}};
  if (stage_p50_ns[0] || stage_p50_ns[1] || stage_p50_ns[2] || stage_p50_ns[3]) {
    static const char* const kStages[4] = {"encode", "hold", "socket", "check"};
    json stages = json::object();
    for (int i = 0; i < 4; ++i) {
      stages[kStages[i]] = {{"p50_ns", stage_p50_ns[i]},
                            {"p99_ns", stage_p99_ns[i]},
                            {"violations", violation_stage[i]}};
    }
    j["stages"] = stages;
  }
  json steps = json::object();
  for (const auto& [name, step] :
       {std::pair<const char*, const Step&>{"close -> eof", close_to_eof},
        {"eof -> resent", eof_to_resent},
        {"began -> done", recreation},
        {"done -> each receiver's first call", resume}}) {
    if (step.count > 0) {
      steps[name] = {{"count", step.count}, {"p50_ns", step.p50_ns}, {"p90_ns", step.p90_ns}};
    }
  }
  if (!steps.empty()) j["steps"] = steps;
  return j;
}

Result<ScenarioResult> ScenarioResultFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("scenario result: not a JSON object");
  ScenarioResult r;
  SECMODE_RETURN_IF_ERROR(Read(j, "seed", r.seed));
  SECMODE_RETURN_IF_ERROR(Read(j, "completed", r.completed));
  SECMODE_RETURN_IF_ERROR(Read(j, "elapsed_ns", r.elapsed_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "ops_per_s", r.ops_per_s));
  SECMODE_RETURN_IF_ERROR(Read(j, "mb_per_s", r.mb_per_s));
  SECMODE_RETURN_IF_ERROR(Read(j, "violations", r.violations));
  SECMODE_RETURN_IF_ERROR(Read(j, "drops", r.drops));
  SECMODE_RETURN_IF_ERROR(Read(j, "disconnects", r.disconnects));
  SECMODE_RETURN_IF_ERROR(Read(j, "context_recreations", r.context_recreations));
  SECMODE_RETURN_IF_ERROR(Read(j, "error_replies", r.error_replies));
  SECMODE_RETURN_IF_ERROR(Read(j, "retransmissions", r.retransmissions));
  SECMODE_RETURN_IF_ERROR(Read(j, "retransmitted_bytes", r.retransmitted_bytes));
  SECMODE_RETURN_IF_ERROR(Read(j, "reencodes", r.reencodes));
  SECMODE_RETURN_IF_ERROR(Read(j, "max_spread", r.max_spread));
  SECMODE_RETURN_IF_ERROR(Read(j, "p50_ns", r.p50_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "p99_ns", r.p99_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "p999_ns", r.p999_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "stalled_fraction", r.stalled_fraction));
  SECMODE_RETURN_IF_ERROR(Read(j, "events", r.events));
  SECMODE_RETURN_IF_ERROR(Read(j, "preemptions", r.preemptions));
  SECMODE_RETURN_IF_ERROR(Read(j, "client_reads", r.client_reads));
  SECMODE_RETURN_IF_ERROR(Read(j, "server_reads", r.server_reads));
  SECMODE_RETURN_IF_ERROR(Read(j, "client_sleeps", r.client_sleeps));
  SECMODE_RETURN_IF_ERROR(Read(j, "server_sleeps", r.server_sleeps));
  SECMODE_RETURN_IF_ERROR(Read(j, "client_runs", r.client_runs));
  SECMODE_RETURN_IF_ERROR(Read(j, "server_runs", r.server_runs));
  SECMODE_RETURN_IF_ERROR(Read(j, "client_wait_ns", r.client_wait_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "server_wait_ns", r.server_wait_ns));
  SECMODE_RETURN_IF_ERROR(Read(j, "idle_fraction", r.idle_fraction));
  SECMODE_RETURN_IF_ERROR(Read(j, "steal_fraction", r.steal_fraction));
  SECMODE_RETURN_IF_ERROR(Read(j, "truncated", r.truncated));
  if (j.contains("steps") && j["steps"].is_object()) {
    for (const auto& [name, step] :
         {std::pair<const char*, ScenarioResult::Step*>{"close -> eof", &r.close_to_eof},
          {"eof -> resent", &r.eof_to_resent},
          {"began -> done", &r.recreation},
          {"done -> each receiver's first call", &r.resume}}) {
      if (!j["steps"].contains(name)) continue;
      const json& k = j["steps"][name];
      SECMODE_RETURN_IF_ERROR(Read(k, "count", step->count));
      SECMODE_RETURN_IF_ERROR(Read(k, "p50_ns", step->p50_ns));
      SECMODE_RETURN_IF_ERROR(Read(k, "p90_ns", step->p90_ns));
    }
  }
  return r;
}

}  // namespace secmode::sim
