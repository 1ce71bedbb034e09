#include "sim/scenario.h"

#include <algorithm>
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

// ---- The field table ----
//
// Every Scenario and ScenarioResult field is written once, in
// VisitFields(), as a descriptor: its JSON key, for a Scenario field the
// parameter name Validate's messages (and `secmode nconnect`'s flags) use,
// and the values it takes. ToJson, the readers and Validate walk the same
// list, so a new mechanism's field is one line there. Scenario's list is in
// the order Validate checks (the first bad parameter is the one named), with
// the checks of more than one field (Rule) where they come.

// A number Validate holds in [lo, hi] (a double: finite, in [lo, hi]).
template <typename T>
struct Ranged {
  using Bound =
      std::conditional_t<std::is_floating_point_v<std::remove_const_t<T>>, double, int64_t>;
  const char* key;
  const char* param;
  T& value;
  Bound lo, hi;
};
// A value any setting of which is valid (a flag, the seed, a result).
template <typename T>
struct Plain {
  const char* key;
  T& value;
};
// An enum, written by its name.
template <typename E>
struct Named {
  using Value = std::remove_const_t<E>;
  const char* key;
  E& value;
  const char* (*name)(Value);
  Result<Value> (*parse)(const std::string&);
};
// A list of integers: quantiles at kPauseProbs (`quantiles`), or a list a
// Rule checks.
template <typename L>
struct List {
  const char* key;
  const char* param;
  L& value;
  bool quantiles;
};
// A check of more than one field, in Validate only.
template <typename Fn>
struct Rule {
  Fn check;
};
// Deduction guides (clang 14 deduces no aggregate's arguments on its own).
template <typename T, typename L, typename H>
Ranged(const char*, const char*, T&, L, H) -> Ranged<T>;
template <typename T>
Plain(const char*, T&) -> Plain<T>;
template <typename E>
Named(const char*, E&, const char* (*)(std::remove_const_t<E>),
      Result<std::remove_const_t<E>> (*)(const std::string&)) -> Named<E>;
template <typename L>
List(const char*, const char*, L&, bool) -> List<L>;
template <typename Fn>
Rule(Fn) -> Rule<Fn>;

Status BufferRule(const Scenario& s) {
  // Checked after io-size so the product cannot overflow (2^20 x 2^27).
  const int64_t buffers = s.slots * (s.RequestBytes() + s.ReplyBytes());
  if (buffers > kMaxBufferBytes) {
    return Status::InvalidArgument(
        "slots: " + std::to_string(s.slots) + " slots of " + std::to_string(s.io_size) +
        "-byte I/O need " + std::to_string(buffers >> 20) +
        " MiB of message buffers, more than the " + std::to_string(kMaxBufferBytes >> 20) +
        " MiB a load generator may hold");
  }
  return Status::Ok();
}

Status IdleWakeRule(const Scenario& s) {
  const auto& after = s.idle_wake_after_ns;
  const auto& curve = s.idle_wake_curve_ns;
  if (after.size() != curve.size() || after.size() > 64) {
    return Status::InvalidArgument(
        "idle-wake-after-ns and idle-wake-curve-ns: as many of one as of the other, at most 64, "
        "got " +
        std::to_string(after.size()) + " and " + std::to_string(curve.size()));
  }
  for (size_t i = 0; i < after.size(); ++i) {
    SECMODE_RETURN_IF_ERROR(InRange("idle-wake-after-ns", after[i], 0, kHour));
    SECMODE_RETURN_IF_ERROR(InRange("idle-wake-curve-ns", curve[i], 0, kHour));
    if (i > 0 && after[i] <= after[i - 1]) {
      return Status::InvalidArgument("idle-wake-after-ns: idle lengths must rise");
    }
  }
  return Status::Ok();
}

Status PauseRule(const Scenario& s) {
  if (s.pause_per_s > 0 && s.pause_ns.empty()) {
    return Status::InvalidArgument("pause-per-s needs the pause durations (pause-ns)");
  }
  return Status::Ok();
}

// Calls f with each descriptor in turn until one returns an error.
template <typename F, typename... D>
Status Each(F& f, const D&... d) {
  Status status = Status::Ok();
  (void)((status = f(d), status.ok()) && ...);
  return status;
}

// Every Scenario field. S: Scenario or const Scenario.
template <typename S, typename F>
Status VisitFields(S& s, F&& f) requires std::is_same_v<std::remove_const_t<S>, Scenario> {
  return Each(
      f,
      // Client, with the bounds the buffers' product needs first.
      Ranged{"nconnect", "nconnect", s.nconnect, 1, kMaxConnections},
      Ranged{"slots", "slots", s.slots, 1, kMaxSlots},
      Ranged{"window", "window", s.window, 1, kMaxWindow},
      Ranged{"io_size", "io-size", s.io_size, 0, kMaxIoSize}, Rule{[&s] { return BufferRule(s); }},
      Plain{"per_connection_context", s.per_connection_context}, Plain{"reencode", s.reencode},
      Plain{"resend_any_connection", s.resend_any_connection},
      Plain{"context_lock_wakes_one", s.context_lock_wakes_one},
      Ranged{"spread_cap", "spread-cap", s.spread_cap, 0, kMaxWindow},
      Named{"op", s.op, OpName, ParseOp},
      Ranged{"cost_fixed_ns", "cost-fixed-ns", s.cost_fixed_ns, 0, 1e12},
      Ranged{"cost_ns_per_byte", "cost-ns-per-byte", s.cost_ns_per_byte, 0, 1e6},
      Ranged{"retransmit_timeout_ns", "retransmit-timeout-ns", s.retransmit_timeout_ns, 1, kHour},
      // Network. One hour bounds every delay so that sums of them stay far from
      // overflow.
      Ranged{"bandwidth_bytes_per_s", "bandwidth", s.bandwidth_bytes_per_s, 1e3, 1e13},
      Ranged{"rtt_ns", "rtt-ns", s.rtt_ns, 0, kHour},
      Named{"jitter_dist", s.jitter_dist, DistName, ParseDist},
      Ranged{"jitter_ns", "jitter-ns", s.jitter_ns, 0, kHour},
      Ranged{"jitter_sigma", "jitter-sigma", s.jitter_sigma, 0, 4},
      Ranged{"skew_conn", "skew-conn", s.skew_conn, 0, s.nconnect - 1},
      Ranged{"skew_ns", "skew-ns", s.skew_ns, 0, kHour},
      Named{"skew_where", s.skew_where, SkewWhereName, ParseSkewWhere},
      // Server.
      Named{"reaction", s.reaction, rpc::WindowPolicyName, rpc::ParseWindowPolicy},
      Ranged{"server_threads", "server-threads", s.server_threads, 1, 65536},
      Named{"server_order", s.server_order, ServerOrderName, ParseServerOrder},
      Named{"service_dist", s.service_dist, DistName, ParseDist},
      Ranged{"service_ns", "service-ns", s.service_ns, 0, kHour},
      Ranged{"service_sigma", "service-sigma", s.service_sigma, 0, 4},
      Ranged{"gss_setup_ns", "gss-setup-ns", s.gss_setup_ns, 0, kHour},
      Ranged{"gss_setup_cpu_ns", "gss-setup-cpu-ns", s.gss_setup_cpu_ns, 0, s.gss_setup_ns},
      Ranged{"reconnect_ns", "reconnect-ns", s.reconnect_ns, 0, kHour},
      Ranged{"reconnect_cpu_ns", "reconnect-cpu-ns", s.reconnect_cpu_ns, 0, s.reconnect_ns},
      Ranged{"reconnect_server_cpu_ns", "reconnect-server-cpu-ns", s.reconnect_server_cpu_ns, 0,
             kHour},
      // Threads and cores.
      Plain{"thread_model", s.thread_model}, Ranged{"cores", "cores", s.cores, 0, 65536},
      Ranged{"slice_ns", "slice-ns", s.slice_ns, 1000, kHour},
      Ranged{"client_call_ns", "client-call-ns", s.client_call_ns, 0, kHour},
      Ranged{"client_read_ns", "client-read-ns", s.client_read_ns, 0, kHour},
      Ranged{"server_read_ns", "server-read-ns", s.server_read_ns, 0, kHour},
      Ranged{"read_bytes", "read-bytes", s.read_bytes, 0, kMaxBufferBytes},
      Ranged{"migrate_ns", "migrate-ns", s.migrate_ns, 0, kHour},
      Ranged{"wakeup_preempt_ns", "wakeup-preempt-ns", s.wakeup_preempt_ns, 0, kHour},
      Ranged{"idle_wake_ns", "idle-wake-ns", s.idle_wake_ns, 0, kHour},
      Ranged{"skew_sender_ns", "skew-sender-ns", s.skew_sender_ns, 0, kHour},
      Ranged{"pause_per_s", "pause-per-s", s.pause_per_s, 0, 1e6},
      List{"pause_ns", "pause-ns", s.pause_ns, true},
      List{"busy_wake_ns", "busy-wake-ns", s.busy_wake_ns, true},
      Ranged{"woken_first_share", "woken-first-share", s.woken_first_share, 0, 1},
      List{"idle_wake_after_ns", "idle-wake-after-ns", s.idle_wake_after_ns, false},
      List{"idle_wake_curve_ns", "idle-wake-curve-ns", s.idle_wake_curve_ns, false},
      Rule{[&s] { return IdleWakeRule(s); }}, Rule{[&s] { return PauseRule(s); }},
      Named{"preempt_victim", s.preempt_victim, PreemptVictimName, ParsePreemptVictim},
      Plain{"per_core_queues", s.per_core_queues}, Plain{"batching", s.batching},
      // Run.
      Plain{"seed", s.seed}, Ranged{"ops", "ops", s.ops, 1, kMaxOps},
      Ranged{"duration_ns", "duration-ns", s.duration_ns, 0, 1000 * kHour});
}

// Every ScenarioResult field but the per-stage figures and the steps
// (kStages, StepFields). R: ScenarioResult or const ScenarioResult.
template <typename R, typename F>
Status VisitFields(R& r, F&& f) requires std::is_same_v<std::remove_const_t<R>, ScenarioResult> {
  return Each(f, Plain{"seed", r.seed}, Plain{"completed", r.completed},
              Plain{"elapsed_ns", r.elapsed_ns}, Plain{"ops_per_s", r.ops_per_s},
              Plain{"mb_per_s", r.mb_per_s}, Plain{"violations", r.violations},
              Plain{"drops", r.drops}, Plain{"disconnects", r.disconnects},
              Plain{"context_recreations", r.context_recreations},
              Plain{"error_replies", r.error_replies}, Plain{"retransmissions", r.retransmissions},
              Plain{"retransmitted_bytes", r.retransmitted_bytes}, Plain{"reencodes", r.reencodes},
              Plain{"max_spread", r.max_spread}, Plain{"p50_ns", r.p50_ns},
              Plain{"p99_ns", r.p99_ns}, Plain{"p999_ns", r.p999_ns},
              Plain{"stalled_fraction", r.stalled_fraction}, Plain{"events", r.events},
              Plain{"preemptions", r.preemptions}, Plain{"client_reads", r.client_reads},
              Plain{"server_reads", r.server_reads}, Plain{"client_sleeps", r.client_sleeps},
              Plain{"server_sleeps", r.server_sleeps}, Plain{"client_runs", r.client_runs},
              Plain{"server_runs", r.server_runs}, Plain{"client_wait_ns", r.client_wait_ns},
              Plain{"server_wait_ns", r.server_wait_ns}, Plain{"idle_fraction", r.idle_fraction},
              Plain{"steal_fraction", r.steal_fraction}, Plain{"truncated", r.truncated});
}

// The reconnect and re-creation steps, under "steps" by these names.
template <typename R>
auto StepFields(R& r) {
  return std::array{Plain{"close -> eof", r.close_to_eof}, Plain{"eof -> resent", r.eof_to_resent},
                    Plain{"began -> done", r.recreation},
                    Plain{"done -> each receiver's first call", r.resume}};
}
constexpr const char* kStages[4] = {"encode", "hold", "socket", "check"};

// The visitors.

// Validate: each field's value in its range.
struct Checker {
  template <typename T>
  Status operator()(const Ranged<T>& f) const {
    if constexpr (std::is_floating_point_v<std::remove_const_t<T>>) {
      return FiniteInRange(f.param, f.value, f.lo, f.hi);
    } else {
      return InRange(f.param, f.value, f.lo, f.hi);
    }
  }
  template <typename L>
  Status operator()(const List<L>& f) const {
    return f.quantiles ? Quantiles(f.param, f.value) : Status::Ok();
  }
  template <typename Fn>
  Status operator()(const Rule<Fn>& f) const {
    return f.check();
  }
  Status operator()(const auto&) const { return Status::Ok(); }  // Plain, Named
};

// ToJson: each field under its key.
struct Writer {
  json& j;
  template <typename T>
  Status operator()(const Ranged<T>& f) const {
    j[f.key] = f.value;
    return Status::Ok();
  }
  template <typename T>
  Status operator()(const Plain<T>& f) const {
    j[f.key] = f.value;
    return Status::Ok();
  }
  template <typename E>
  Status operator()(const Named<E>& f) const {
    j[f.key] = f.name(f.value);
    return Status::Ok();
  }
  template <typename L>
  Status operator()(const List<L>& f) const {
    j[f.key] = f.value;
    return Status::Ok();
  }
  template <typename Fn>
  Status operator()(const Rule<Fn>&) const {
    return Status::Ok();
  }
};

// The readers: each field present under its key (missing keys keep their
// defaults); a wrong type is an error naming the key.
struct Reader {
  const json& j;
  template <typename T>
  Status operator()(const Ranged<T>& f) const {
    return Read(j, f.key, f.value);
  }
  template <typename T>
  Status operator()(const Plain<T>& f) const {
    return Read(j, f.key, f.value);
  }
  template <typename E>
  Status operator()(const Named<E>& f) const {
    return ReadEnum(j, f.key, f.value, f.parse);
  }
  template <typename L>
  Status operator()(const List<L>& f) const {
    return ReadList(j, f.key, f.value);
  }
  template <typename Fn>
  Status operator()(const Rule<Fn>&) const {
    return Status::Ok();
  }
};

}  // namespace

Status Scenario::Validate() const { return VisitFields(*this, Checker{}); }

json Scenario::ToJson() const {
  json j = json::object();
  (void)VisitFields(*this, Writer{j});
  return j;
}

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
  SECMODE_RETURN_IF_ERROR(VisitFields(s, Reader{j}));
  SECMODE_RETURN_IF_ERROR(s.Validate());
  return s;
}

json ScenarioResult::ToJson() const {
  json j = json::object();
  (void)VisitFields(*this, Writer{j});
  if (stage_p50_ns[0] || stage_p50_ns[1] || stage_p50_ns[2] || stage_p50_ns[3]) {
    json stages = json::object();
    for (int i = 0; i < 4; ++i) {
      stages[kStages[i]] = {{"p50_ns", stage_p50_ns[i]},
                            {"p99_ns", stage_p99_ns[i]},
                            {"violations", violation_stage[i]}};
    }
    j["stages"] = stages;
  }
  json steps = json::object();
  for (const auto& [name, step] : StepFields(*this)) {
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
  SECMODE_RETURN_IF_ERROR(VisitFields(r, Reader{j}));
  if (j.contains("steps") && j["steps"].is_object()) {
    for (const auto& [name, step] : StepFields(r)) {
      if (!j["steps"].contains(name)) continue;
      const json& k = j["steps"][name];
      SECMODE_RETURN_IF_ERROR(Read(k, "count", step.count));
      SECMODE_RETURN_IF_ERROR(Read(k, "p50_ns", step.p50_ns));
      SECMODE_RETURN_IF_ERROR(Read(k, "p90_ns", step.p90_ns));
    }
  }
  return r;
}

}  // namespace secmode::sim

namespace secmode::sim {

int64_t CallsAtLeast(const std::vector<int64_t>& lags, uint32_t lag) {
  int64_t n = 0;
  for (size_t i = std::min<size_t>(lag, lags.size()); i < lags.size(); ++i) n += lags[i];
  return n;
}

uint32_t LagQuantile(const std::vector<int64_t>& lags, double q) {
  int64_t total = 0;
  for (int64_t n : lags) total += n;
  if (total == 0) return 0;
  // Nearest rank: the smallest lag with at least ceil(q * total) calls at or below it.
  const auto rank = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(q * static_cast<double>(total))));
  int64_t seen = 0;
  for (size_t i = 0; i < lags.size(); ++i) {
    seen += lags[i];
    if (seen >= rank) return static_cast<uint32_t>(i);
  }
  return static_cast<uint32_t>(lags.size() - 1);
}

}  // namespace secmode::sim
