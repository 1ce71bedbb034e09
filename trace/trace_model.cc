#include "trace/trace_model.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "common/format.h"
#include "sim/simulator.h"

namespace secmode::trace {

using common::Result;
using common::Status;
using nlohmann::json;

namespace {

// A time in the unit that reads best.
std::string Us(int64_t ns) {
  const auto v = static_cast<double>(ns);
  if (ns >= 1000000000) return common::Fmt("%.1f", v / 1e9) + " s";
  if (ns >= 1000000) return common::Fmt("%.1f", v / 1e6) + " ms";
  return common::Fmt("%.1f", v / 1e3) + " us";
}

// The most of the context's connections open at once (a connection is open
// from its first segment captured to its last).
size_t MostOpenAtOnce(const RpcTrace& t, const ContextTrace& x) {
  std::vector<std::pair<int64_t, int>> edges;  // (time, +1 opens / -1 ends)
  for (size_t c : x.connections) {
    edges.emplace_back(t.connections[c].first_ts_ns, 1);
    edges.emplace_back(t.connections[c].last_ts_ns, -1);
  }
  std::sort(edges.begin(), edges.end());  // at one time, an end before an opening
  int open = 0, most = 0;
  for (const auto& [time, step] : edges) {
    open += step;
    most = std::max(most, open);
  }
  return static_cast<size_t>(most);
}

// The context's busiest operation in its mode with replies, or null.
const std::pair<const std::pair<std::string, std::string>, OperationTrace>* BusiestOperation(
    const RpcTrace& t, const ContextTrace& x) {
  const std::string mode = "rpcsec_gss " + x.service;
  const std::pair<const std::pair<std::string, std::string>, OperationTrace>* best = nullptr;
  for (const auto& op : t.operations) {
    if (op.first.second != mode || op.second.replies == 0) continue;
    if (!best || op.second.replies > best->second.replies) best = &op;
  }
  return best;
}

// What the server did with a call below its window, as far as the context's
// traffic shows it.
std::pair<rpc::WindowPolicy, std::string> Reaction(const RpcTrace& t, const ContextTrace& x) {
  if (x.context_problems > 0) {
    return {rpc::WindowPolicy::kDiscardContext,
            std::to_string(x.context_problems) + " replies to its calls said the context was gone"};
  }
  // Connections the server ended in the capture with calls outstanding;
  // calls never answered while far more later ones were (passed over, not
  // slow). Calls merely in flight where the capture stops say nothing.
  size_t closed_by_server = 0;
  uint64_t unanswered = 0;
  for (size_t c : x.connections) {
    const ConnectionTrace& ct = t.connections[c];
    if ((ct.closed || ct.reset) && ct.ended_by_server && ct.outstanding_at_end > 0) {
      ++closed_by_server;
    } else {
      unanswered += ct.passed_over;
    }
  }
  if (closed_by_server > 0) {
    return {rpc::WindowPolicy::kDropDisconnect, "the server ended " +
                                                    std::to_string(closed_by_server) +
                                                    " of its connections with calls outstanding"};
  }
  if (x.retransmissions > 0 || unanswered > 0) {
    return {rpc::WindowPolicy::kDrop,
            std::to_string(x.retransmissions) + " of its calls were sent again and " +
                std::to_string(unanswered) +
                " never answered while many later ones were, on connections the server did not "
                "end"};
  }
  return {rpc::WindowPolicy::kDropDisconnect,
          "no call of it was dropped in the capture: assumed, what Linux nfsd does"};
}

}  // namespace

Result<TraceScenario> ScenarioFromTrace(RpcTrace& t, CaptureSide side, uint32_t window,
                                        const sim::Scenario& base) {
  size_t best = SIZE_MAX;
  for (size_t i = 0; i < t.contexts.size(); ++i) {
    if (t.contexts[i].calls > 0 &&
        (best == SIZE_MAX || t.contexts[i].calls > t.contexts[best].calls))
      best = i;
  }
  if (best == SIZE_MAX) {
    return Status::InvalidArgument(
        "trace --simulate: the capture holds no RPCSEC_GSS DATA call, so no sequence window to "
        "model (sec=sys has none)");
  }
  ContextTrace& x = t.contexts[best];
  uint64_t replies = 0;
  for (size_t c : x.connections) replies += t.connections[c].replies;
  const auto* op = BusiestOperation(t, x);
  if (op == nullptr || replies == 0) {
    return Status::InvalidArgument(
        "trace --simulate: no reply on the connections of context " + x.handle.substr(0, 16) +
        " was captured, so neither its calls in flight nor its response times can be told "
        "(capture both directions)");
  }
  TraceScenario out;
  out.context = best;
  sim::Scenario& s = out.scenario;
  s = base;
  auto assume = [&out](std::string parameter, std::string value, std::string from) {
    out.assumptions.push_back({std::move(parameter), std::move(value), std::move(from)});
  };
  s.per_connection_context = false;
  assume("context", x.handle.substr(0, 16),
         "the capture's busiest: " + std::to_string(x.calls) + " DATA calls over " +
             std::to_string(x.connections.size()) + " connections, shared by all of them");

  s.nconnect = static_cast<int>(
      std::clamp<size_t>(MostOpenAtOnce(t, x), 1, static_cast<size_t>(sim::kMaxConnections)));
  assume("nconnect", std::to_string(s.nconnect),
         "the most of its " + std::to_string(x.connections.size()) +
             " connections open at once (first to last segment captured)");

  // The slots of its NFSv4.1 session where SEQUENCE is in clear (the
  // session with the most calls over its connections), else the most calls
  // in flight, which counts a call never answered until its connection ends.
  const SessionTrace* session = nullptr;
  for (const SessionTrace& st : t.sessions) {
    const bool shared = std::any_of(st.connections.begin(), st.connections.end(),
                                    [&x](size_t c) { return x.connections.count(c) > 0; });
    if (shared && st.slots_used > 0 && (!session || st.calls > session->calls)) session = &st;
  }
  if (session) {
    s.slots = std::clamp<int64_t>(static_cast<int64_t>(session->slots_used), 1, sim::kMaxSlots);
    assume("slots", std::to_string(s.slots),
           "the slot ids its connections' NFSv4.1 session used in SEQUENCE (its calls in flight "
           "reached " +
               std::to_string(x.most_in_flight) + ")");
  } else {
    s.slots = std::clamp<int64_t>(static_cast<int64_t>(x.most_in_flight), 1, sim::kMaxSlots);
    assume("slots", std::to_string(s.slots),
           "the most of its calls in flight as one was sent (no SEQUENCE in clear; a call never "
           "answered counts until its connection ends)");
  }

  const SideGuess g = GuessSide(t);
  if (g.handshakes > 0) {
    s.rtt_ns = g.syn_to_synack_ns + g.synack_to_ack_ns;
    assume("rtt", Us(s.rtt_ns),
           "the medians of " + std::to_string(g.handshakes) +
               " handshakes' gaps added (SYN to SYN-ACK " + Us(g.syn_to_synack_ns) +
               ", SYN-ACK to ACK " + Us(g.synack_to_ack_ns) +
               "): one of them holds the round trip");
  } else {
    assume("rtt", Us(s.rtt_ns), "no handshake was captured: the model's default");
  }

  const auto& [key, stats] = *op;
  OperationTrace& busiest = t.operations[key];
  const auto median = static_cast<int64_t>(busiest.response_ns.Percentile(0.5));
  const int64_t served =
      side == CaptureSide::kServer ? median : std::max<int64_t>(0, median - s.rtt_ns);
  // An exponential time with that median has a mean of median / ln 2.
  s.service_ns = std::llround(static_cast<double>(served) / std::log(2.0));
  s.service_dist = sim::Dist::kExponential;
  assume("service", "exponential, median " + Us(served),
         "the median response time of " + key.first + " (" + Us(median) + ") at the capture point" +
             (side == CaptureSide::kServer ? std::string(" (the server's side)")
              : side == CaptureSide::kClient
                  ? std::string(", less the round trip")
                  : std::string(", less the round trip (the side unknown: taken as not the "
                                "server's)")) +
             ". It holds the server's crypto, queueing and the reply's transfer, which the model "
             "adds again. The busiest operation of its mode, over every context of that mode");

  const double call_bytes = static_cast<double>(stats.call_bytes) /
                            static_cast<double>(std::max<uint64_t>(1, stats.calls));
  const double reply_bytes = static_cast<double>(stats.reply_bytes) /
                             static_cast<double>(std::max<uint64_t>(1, stats.replies));
  const double written = call_bytes - static_cast<double>(sim::kRequestOverhead);
  const double read = reply_bytes - static_cast<double>(sim::kReplyOverhead);
  s.op = written > read ? sim::Op::kWrite : sim::Op::kRead;
  s.io_size = std::clamp<int64_t>(std::llround(std::max(written, read)), 0, sim::kMaxIoSize);
  assume("io", std::string(sim::OpName(s.op)) + " " + std::to_string(s.io_size) + " bytes",
         "the mean call (" + common::Fmt("%.0f", call_bytes) + " bytes) and reply (" +
             common::Fmt("%.0f", reply_bytes) + " bytes) of " + key.first +
             ", less the model's framing");

  // A connection that lags behind the others.
  int64_t from = INT64_MAX, to = 0;
  std::vector<double> mean_lag;
  for (size_t c : x.connections) {
    const ConnectionTrace& ct = t.connections[c];
    from = std::min(from, ct.first_ts_ns);
    to = std::max(to, ct.last_ts_ns);
    if (ct.data_calls > 0) {
      mean_lag.push_back(static_cast<double>(ct.data_lag_total) /
                         static_cast<double>(ct.data_calls));
    }
  }
  const double seconds = static_cast<double>(std::max<int64_t>(1, to - from)) / 1e9;
  out.calls_per_s = static_cast<double>(x.calls) / seconds;
  s.skew_ns = 0;
  if (mean_lag.size() >= 2 && s.nconnect >= 2) {
    auto most = std::max_element(mean_lag.begin(), mean_lag.end());
    double others = 0;
    for (auto it = mean_lag.begin(); it != mean_lag.end(); ++it) {
      if (it != most) others += *it;
    }
    others /= static_cast<double>(mean_lag.size() - 1);
    if (*most >= std::max(1.0, 2 * others)) {
      s.skew_conn = 0;
      s.skew_where = sim::SkewWhere::kClient;
      s.skew_ns = std::llround((*most - others) * seconds * 1e9 / static_cast<double>(x.calls));
      assume("skew", Us(s.skew_ns) + " on one connection",
             "one connection's calls lag " + common::Fmt("%.1f", *most) +
                 " numbers behind on average, the others' " + common::Fmt("%.1f", others) +
                 ": the difference times the mean gap between the context's calls");
    }
  }
  if (s.skew_ns == 0) {
    assume("skew", "none", "no connection's calls lag twice as far as the others' on average");
  }

  if (x.created && x.announced_window > 0) {
    s.window = std::min<int64_t>(x.announced_window, sim::kMaxWindow);
    assume("window", std::to_string(s.window),
           "announced by its server in the INIT reply captured (" +
               std::to_string(x.announced_window) + ")");
  } else if (window > 0) {
    s.window = std::min<int64_t>(window, sim::kMaxWindow);
    assume("window", std::to_string(s.window), "given (--window)");
  } else {
    s.window = kAssumedWindow;
    assume("window", std::to_string(s.window),
           "its INIT is not in the capture: assumed, Linux nfsd's (--window for another)");
  }

  auto [reaction, why] = Reaction(t, x);
  s.reaction = reaction;
  assume("reaction", rpc::WindowPolicyName(reaction), why);
  assume("retransmit timeout", Us(s.retransmit_timeout_ns),
         "the model's (Linux's timeo=600); a capture does not show it");
  assume("re-encode", s.reencode ? "on" : "off",
         "the model's: a Linux client since about 5.0 numbers a call again at transmit when its "
         "number fell a window behind (--recommend shows that alternative)");

  assume("the rest", "the model's",
         "crypto " + common::Fmt("%.0f", s.cost_fixed_ns) + " ns + " +
             common::Fmt("%.2f", s.cost_ns_per_byte) +
             " ns a byte per message and leg (about krb5p with aes256-cts on one core, whatever "
             "the capture's mode), jitter " +
             Us(s.jitter_ns) + " " + sim::DistName(s.jitter_dist) + ", " +
             common::Fmt("%.0f", s.bandwidth_bytes_per_s * 8 / 1e9) +
             " Gbit/s, no client CPU per call besides crypto; not from the capture");
  s.ops = std::clamp<int64_t>(static_cast<int64_t>(x.calls), 20000, kMaxModelOps);
  s.duration_ns = 0;
  assume("operations", std::to_string(s.ops) + " per seed",
         "its DATA calls, at least 20000 and at most " + std::to_string(kMaxModelOps) +
             "; the model's counts are scaled to the capture's calls");
  return out;
}

Result<TraceModel> ModelTrace(TraceScenario from, int seeds, bool recommend) {
  if (seeds < 1) return Status::InvalidArgument("trace --simulate: seeds must be at least 1");
  TraceModel m;
  m.from = std::move(from);
  Status valid = m.from.scenario.Validate();
  if (!valid.ok()) {
    return Status::InvalidArgument(
        "trace --simulate: the scenario the capture gives is not one "
        "the model takes: " +
        valid.message());
  }
  for (int seed = 1; seed <= seeds; ++seed) {
    sim::Scenario s = m.from.scenario;
    s.seed = static_cast<uint64_t>(seed);
    SECMODE_ASSIGN_OR_RETURN(sim::ScenarioResult r, sim::Simulate(s));
    m.runs.push_back(std::move(r));
  }
  if (recommend) {
    SECMODE_ASSIGN_OR_RETURN(m.recommendation, sim::Recommend(m.from.scenario, 1024, seeds));
    m.recommended = true;
  }
  return m;
}

namespace {

int64_t Total(const std::vector<int64_t>& lags) {
  int64_t n = 0;
  for (int64_t v : lags) n += v;
  return n;
}

// [lowest, highest] of f over the runs.
template <typename F>
json Range(const std::vector<sim::ScenarioResult>& runs, F f) {
  double lo = 0, hi = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const double v = f(runs[i]);
    lo = i == 0 ? v : std::min(lo, v);
    hi = i == 0 ? v : std::max(hi, v);
  }
  return json::array({lo, hi});
}

json ModelLags(const std::vector<sim::ScenarioResult>& runs, bool checked) {
  auto lags = [checked](const sim::ScenarioResult& r) -> const std::vector<int64_t>& {
    return checked ? r.checked_lags : r.sent_lags;
  };
  return {{"p50", Range(runs, [&](const auto& r) { return sim::LagQuantile(lags(r), 0.5); })},
          {"p99", Range(runs, [&](const auto& r) { return sim::LagQuantile(lags(r), 0.99); })},
          {"max", Range(runs, [&](const auto& r) {
             return static_cast<double>(lags(r).empty() ? 0 : lags(r).size() - 1);
           })}};
}

// The model's calls at `window` or more below the highest, scaled to `calls`.
json ModelBelow(const std::vector<sim::ScenarioResult>& runs, bool checked, uint32_t window,
                uint64_t calls) {
  return Range(runs, [&](const sim::ScenarioResult& r) {
    const std::vector<int64_t>& lags = checked ? r.checked_lags : r.sent_lags;
    const int64_t total = Total(lags);
    if (total == 0) return 0.0;
    return std::round(static_cast<double>(sim::CallsAtLeast(lags, window)) *
                      static_cast<double>(calls) / static_cast<double>(total));
  });
}

}  // namespace

json TraceModelJson(RpcTrace& t, const TraceModel& m, const std::vector<uint32_t>& windows) {
  ContextTrace& x = t.contexts[m.from.context];
  const sim::Scenario& s = m.from.scenario;
  json assumptions = json::array();
  for (const TraceAssumption& a : m.from.assumptions) {
    assumptions.push_back({{"parameter", a.parameter}, {"value", a.value}, {"from", a.from}});
  }
  std::vector<uint32_t> all = windows;
  const auto server_window = static_cast<uint32_t>(s.window);
  if (std::find(all.begin(), all.end(), server_window) == all.end()) all.push_back(server_window);
  std::sort(all.begin(), all.end());
  json below = json::array();
  for (uint32_t w : all) {
    const bool counted = std::find(windows.begin(), windows.end(), w) != windows.end();
    const auto it = x.below_window.find(w);
    below.push_back(
        {{"window", w},
         {"capture", counted ? json(it == x.below_window.end() ? 0 : it->second) : json(nullptr)},
         {"model_sent", ModelBelow(m.runs, false, w, x.calls)},
         {"model_checked", ModelBelow(m.runs, true, w, x.calls)}});
  }
  json j = {
      {"context", x.handle},
      {"calls", x.calls},
      {"seeds", m.runs.size()},
      {"assumptions", assumptions},
      {"scenario", s.ToJson()},
      {"lag",
       {{"capture",
         {{"p50", x.lag.Percentile(0.5)}, {"p99", x.lag.Percentile(0.99)}, {"max", x.max_lag}}},
        {"model_sent", ModelLags(m.runs, false)},
        {"model_checked", ModelLags(m.runs, true)}}},
      {"below_window", below},
      {"server",
       {{"window", server_window},
        {"reaction", rpc::WindowPolicyName(s.reaction)},
        {"model_drops", ModelBelow(m.runs, true, server_window, x.calls)}}},
      {"rate",
       {{"capture_calls_per_s", m.from.calls_per_s},
        {"model_calls_per_s", Range(m.runs, [](const sim::ScenarioResult& r) {
           return r.elapsed_ns > 0 ? static_cast<double>(Total(r.sent_lags)) * 1e9 /
                                         static_cast<double>(r.elapsed_ns)
                                   : 0.0;
         })}}}};
  if (m.recommended) {
    const sim::Recommendation& rec = m.recommendation;
    json alternatives = json::array();
    for (const sim::Alternative& a : rec.alternatives) {
      alternatives.push_back({{"name", a.name},
                              {"slots", a.scenario.slots},
                              {"worst_violations", a.worst_violations},
                              {"worst_ops_per_s", a.worst_ops_per_s}});
    }
    j["recommendation"] = {{"max_safe_slots", rec.max_safe_slots},
                           {"ops_per_s_at_max_safe", rec.at_max_safe.ops_per_s},
                           {"first_unsafe_slots", rec.first_unsafe_slots},
                           {"alternatives", alternatives}};
  }
  return j;
}

namespace {

std::string RangeText(const json& r, const char* format = "%.0f") {
  if (!r.is_array() || r.size() != 2) return "-";
  const double lo = r[0].get<double>(), hi = r[1].get<double>();
  return lo == hi ? common::Fmt(format, lo)
                  : common::Fmt(format, lo) + "-" + common::Fmt(format, hi);
}

std::string LagText(const json& l, bool ranges) {
  if (!ranges) {
    return std::to_string(l["p50"].get<uint64_t>()) + " / " +
           std::to_string(l["p99"].get<uint64_t>()) + " / " +
           std::to_string(l["max"].get<uint64_t>());
  }
  return RangeText(l["p50"]) + " / " + RangeText(l["p99"]) + " / " + RangeText(l["max"]);
}

}  // namespace

std::string TraceModelText(const json& model) {
  std::ostringstream out;
  out << "\nthe model of context " << model["context"].get<std::string>().substr(0, 16) << " ("
      << model["calls"].get<uint64_t>() << " DATA calls), " << model["seeds"].get<size_t>()
      << " seeds; figures of the model are lowest-highest over the seeds:\n";
  for (const json& a : model["assumptions"]) {
    out << "  " << a["parameter"].get<std::string>() << " " << a["value"].get<std::string>() << ": "
        << a["from"].get<std::string>() << "\n";
  }
  const json& lag = model["lag"];
  out << "lag p50 / p99 / max: capture " << LagText(lag["capture"], false) << "; model as sent "
      << LagText(lag["model_sent"], true) << "; as the server checked "
      << LagText(lag["model_checked"], true) << "\n";
  out << "calls below a window of W, of the capture's " << model["calls"].get<uint64_t>()
      << " (model's counts scaled to them):\n"
      << "       W      capture    model as sent  as the server checked\n";
  auto column = [](const std::string& text, size_t width) {
    return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
  };
  for (const json& b : model["below_window"]) {
    const json& c = b["capture"];
    out << column(std::to_string(b["window"].get<uint32_t>()), 8)
        << column(c.is_null() ? std::string("-") : std::to_string(c.get<uint64_t>()), 13)
        << column(RangeText(b["model_sent"]), 17) << column(RangeText(b["model_checked"]), 23)
        << "\n";
  }
  const json& server = model["server"];
  out << "the server's window " << server["window"].get<uint32_t>() << " ("
      << server["reaction"].get<std::string>() << "): the model estimates "
      << RangeText(server["model_drops"]) << " calls below it where the server checks them\n";
  const json& rate = model["rate"];
  out << "rate: capture " << common::Fmt("%.0f", rate["capture_calls_per_s"].get<double>())
      << " calls/s (over its connections' time, idle included), model "
      << RangeText(rate["model_calls_per_s"]) << " calls/s (over its run, timeouts included)\n";
  return out.str();
}

}  // namespace secmode::trace
