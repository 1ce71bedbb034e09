#include "suite/nconnect_attribution.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace secmode::suite {

namespace {

constexpr const char* kStages[4] = {"encode", "hold", "socket", "check"};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

double Us(uint64_t from, uint64_t to) {
  return to > from ? static_cast<double>(to - from) / 1e3 : 0.0;
}

// A step named `name` from its samples (us): how many, median, p90.
SetupStep StepOf(const char* name, const std::vector<double>& us) {
  SetupStep st;
  st.name = name;
  st.count = static_cast<int64_t>(us.size());
  st.median_us = Percentile(us, 0.5);
  st.p90_us = Percentile(us, 0.9);
  return st;
}

uint64_t Key(uint64_t context, uint32_t seq) { return context * 0x9e3779b97f4a7c15ull ^ seq; }

// Signed: a step can end before it began when two threads race.
double SignedUs(uint64_t from, uint64_t to) {
  return (static_cast<double>(to) - static_cast<double>(from)) / 1e3;
}

}  // namespace

nlohmann::json Attribution::ToJson() const {
  nlohmann::json stages = nlohmann::json::object();
  for (int i = 0; i < 4; ++i) {
    stages[kStages[i]] = {{"median_us", stage_median_us[i]}, {"p99_us", stage_p99_us[i]}};
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : causes) {
    rows.push_back({{"stage", c.stage},
                    {"thread", c.thread},
                    {"count", c.count},
                    {"median_excess_us", c.median_excess_us},
                    {"max_excess_us", c.max_excess_us},
                    {"median_lag", c.median_lag}});
  }
  return {{"calls", calls},   {"violations", violations}, {"matched", matched},
          {"stages", stages}, {"causes", rows},           {"dropped_events", dropped_events}};
}

Attribution AttributeViolations(const rpc::CallTrace& trace) {
  Attribution a;
  a.dropped_events = trace.dropped();
  const std::vector<rpc::ClientCallEvent> client = trace.client_events();
  const std::vector<rpc::ServerCallEvent> server = trace.server_events();
  std::unordered_map<uint64_t, const rpc::ClientCallEvent*> by_key;
  by_key.reserve(client.size());
  for (const auto& e : client) {
    if (e.written_ns != 0) by_key[Key(e.context, e.seq)] = &e;
  }
  // Stage durations of every call seen at both ends.
  struct Path {
    const rpc::ClientCallEvent* c;
    const rpc::ServerCallEvent* s;
    double us[4];
  };
  std::vector<Path> paths;
  paths.reserve(server.size());
  std::vector<double> stage[4];
  for (const auto& s : server) {
    ++a.calls;
    auto it = by_key.find(Key(s.context, s.seq));
    if (it == by_key.end()) continue;
    const rpc::ClientCallEvent& c = *it->second;
    Path p{&c,
           &s,
           {Us(c.numbered_ns, c.queued_ns), Us(c.queued_ns, c.written_ns),
            Us(c.written_ns, s.read_ns), Us(s.read_ns, s.checked_ns)}};
    for (int i = 0; i < 4; ++i) stage[i].push_back(p.us[i]);
    paths.push_back(p);
  }
  for (int i = 0; i < 4; ++i) {
    a.stage_median_us[i] = Percentile(stage[i], 0.5);
    a.stage_p99_us[i] = Percentile(stage[i], 0.99);
  }
  struct Acc {
    std::vector<double> excess, lag;
  };
  std::map<std::pair<std::string, std::string>, Acc> acc;
  for (const auto& s : server) {
    if (s.verdict == rpc::SeqVerdict::kBelowWindow) ++a.violations;
  }
  for (const Path& p : paths) {
    if (p.s->verdict != rpc::SeqVerdict::kBelowWindow) continue;
    ++a.matched;
    int worst = 0;
    double worst_excess = -1e300;
    for (int i = 0; i < 4; ++i) {
      const double excess = p.us[i] - a.stage_median_us[i];
      if (excess > worst_excess) {
        worst_excess = excess;
        worst = i;
      }
    }
    // Threads of different connections are alike; the table counts kinds.
    const std::string kind =
        worst <= 1 ? rpc::TraceThreadName(worst == 0 ? p.c->numbered_by : p.c->written_by)
                   : rpc::TraceThreadName(p.s->thread);
    Acc& x = acc[{kStages[worst], kind}];
    x.excess.push_back(worst_excess);
    x.lag.push_back(p.s->highest > p.s->seq ? static_cast<double>(p.s->highest - p.s->seq) : 0);
  }
  for (auto& [key, x] : acc) {
    ViolationCause c;
    c.stage = key.first;
    c.thread = key.second;
    c.count = static_cast<int64_t>(x.excess.size());
    c.median_excess_us = Percentile(x.excess, 0.5);
    c.max_excess_us = *std::max_element(x.excess.begin(), x.excess.end());
    c.median_lag = Percentile(x.lag, 0.5);
    a.causes.push_back(c);
  }
  std::sort(a.causes.begin(), a.causes.end(),
            [](const ViolationCause& x, const ViolationCause& y) { return x.count > y.count; });
  return a;
}

SetupStep AttributeRecreations(const rpc::CallTrace& trace) {
  using rpc::SetupEventKind;
  std::map<uint32_t, std::vector<uint64_t>> began, done;
  for (const auto& e : trace.setup_events()) {
    if (e.kind == SetupEventKind::kClientRecreateBegan) began[e.conn].push_back(e.ns);
    if (e.kind == SetupEventKind::kClientRecreateDone) done[e.conn].push_back(e.ns);
  }
  std::vector<double> took;
  for (auto& [conn, starts] : began) {
    std::vector<uint64_t>& ends = done[conn];
    std::sort(ends.begin(), ends.end());
    for (uint64_t t : starts) {
      auto end = std::lower_bound(ends.begin(), ends.end(), t);
      if (end != ends.end()) took.push_back(SignedUs(t, *end));
    }
  }
  return StepOf("began -> done", took);
}

SetupStep AttributeResumes(const rpc::CallTrace& trace) {
  using rpc::SetupEventKind;
  std::vector<uint64_t> began, done;
  for (const auto& e : trace.setup_events()) {
    if (e.kind == SetupEventKind::kClientRecreateBegan) began.push_back(e.ns);
    if (e.kind == SetupEventKind::kClientRecreateDone) done.push_back(e.ns);
  }
  std::sort(began.begin(), began.end());
  std::sort(done.begin(), done.end());
  // Each receiver's numbering times, in order.
  std::map<uint32_t, std::vector<uint64_t>> numbered;
  for (const auto& c : trace.client_events()) {
    if (c.numbered_by == rpc::TraceThread::kReceiver) {
      numbered[c.numbered_by_index].push_back(c.numbered_ns);
    }
  }
  for (auto& [receiver, times] : numbered) std::sort(times.begin(), times.end());
  std::vector<double> took;
  for (uint64_t d : done) {
    // Until the next re-creation began (none: the end of the run).
    auto next = std::upper_bound(began.begin(), began.end(), d);
    const uint64_t until = next == began.end() ? ~0ull : *next;
    for (const auto& [receiver, times] : numbered) {
      auto first = std::lower_bound(times.begin(), times.end(), d);
      if (first != times.end() && *first < until) took.push_back(Us(d, *first));
    }
  }
  return StepOf("done -> each receiver's first call", took);
}

nlohmann::json SetupStep::ToJson() const {
  return {{"step", name}, {"count", count}, {"median_us", median_us}, {"p90_us", p90_us}};
}

nlohmann::json ReconnectTimes::ToJson() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& st : steps) rows.push_back(st.ToJson());
  return {{"reconnects", reconnects}, {"steps", rows}};
}

ReconnectTimes AttributeReconnects(const rpc::CallTrace& trace) {
  using rpc::SetupEventKind;
  ReconnectTimes r;
  const std::vector<rpc::ClientCallEvent> client = trace.client_events();
  const std::vector<rpc::ServerCallEvent> server = trace.server_events();
  const std::vector<rpc::SetupEvent> conn = trace.setup_events();
  // Per connection index, each kind's times in order.
  std::map<std::pair<SetupEventKind, uint32_t>, std::vector<uint64_t>> times;
  for (const auto& e : conn) times[{e.kind, e.conn}].push_back(e.ns);
  for (auto& [key, v] : times) std::sort(v.begin(), v.end());
  // The times of one kind on connection c around ns: the last one before
  // it and the first at or after it (0: none).
  auto around = [&](SetupEventKind kind, uint32_t c, uint64_t ns) -> std::pair<uint64_t, uint64_t> {
    auto it = times.find({kind, c});
    if (it == times.end()) return {0, 0};
    auto at = std::lower_bound(it->second.begin(), it->second.end(), ns);
    return {at == it->second.begin() ? 0 : *(at - 1), at == it->second.end() ? 0 : *at};
  };
  auto first_at_or_after = [&](SetupEventKind kind, uint32_t c, uint64_t ns) {
    return around(kind, c, ns).second;
  };
  auto only = [&](SetupEventKind kind, uint32_t c) -> uint64_t {
    auto it = times.find({kind, c});
    return it == times.end() || it->second.empty() ? 0 : it->second.front();
  };
  // The client's written calls per connection, in order, and the server's
  // record of each call.
  std::map<uint32_t, std::vector<const rpc::ClientCallEvent*>> written;
  for (const auto& e : client) {
    if (e.written_ns != 0) written[e.conn].push_back(&e);
  }
  for (auto& [c, v] : written) {
    std::sort(v.begin(), v.end(), [](auto* x, auto* y) { return x->written_ns < y->written_ns; });
  }
  std::unordered_map<uint64_t, const rpc::ServerCallEvent*> at_server;
  at_server.reserve(server.size());
  for (const auto& e : server) at_server.emplace(Key(e.context, e.seq), &e);

  enum { kCloseEof, kEofConnected, kConnectedAccepted, kAcceptedStarted, kEofResent, kEofChecked };
  const char* names[] = {"close -> eof",        "eof -> connected", "connected -> accepted",
                         "accepted -> started", "eof -> resent",    "eof -> first checked"};
  std::vector<double> step[6];
  for (const auto& e : conn) {
    if (e.kind != SetupEventKind::kClientEof) continue;
    ++r.reconnects;
    const uint64_t eof = e.ns;
    const uint64_t connected = first_at_or_after(SetupEventKind::kClientConnected, e.conn, eof);
    const uint64_t resent = first_at_or_after(SetupEventKind::kClientResent, e.conn, eof);
    if (connected) step[kEofConnected].push_back(SignedUs(eof, connected));
    if (resent) step[kEofResent].push_back(SignedUs(eof, resent));
    auto wit = written.find(e.conn);
    if (wit == written.end()) continue;
    const auto& calls = wit->second;
    auto after = std::lower_bound(calls.begin(), calls.end(), eof,
                                  [](auto* x, uint64_t ns) { return x->written_ns < ns; });
    // The old connection: the last call written on it before the end, if
    // one was written after its connect (a connection whose calls were all
    // still held, a skewed one's in its delay line, has none: the last call
    // before the end then went to the connection before it, whose close is
    // not this end's).
    const uint64_t opened = around(SetupEventKind::kClientConnected, e.conn, eof).first;
    if (after != calls.begin() && (*(after - 1))->written_ns >= opened) {
      auto old = at_server.find(Key((*(after - 1))->context, (*(after - 1))->seq));
      if (old != at_server.end()) {
        const uint64_t closed = only(SetupEventKind::kServerClosed, old->second->conn);
        if (closed && closed <= eof) step[kCloseEof].push_back(SignedUs(closed, eof));
      }
    }
    // The new connection: the first call written on it after the connect.
    if (!connected) continue;
    auto first = std::lower_bound(calls.begin(), calls.end(), connected,
                                  [](auto* x, uint64_t ns) { return x->written_ns < ns; });
    if (first == calls.end()) continue;
    auto fresh = at_server.find(Key((*first)->context, (*first)->seq));
    if (fresh == at_server.end()) continue;
    const rpc::ServerCallEvent& s = *fresh->second;
    step[kEofChecked].push_back(SignedUs(eof, s.checked_ns));
    const uint64_t accepted = only(SetupEventKind::kServerAccepted, s.conn);
    const uint64_t started = only(SetupEventKind::kServerStarted, s.conn);
    if (accepted) step[kConnectedAccepted].push_back(SignedUs(connected, accepted));
    if (accepted && started) step[kAcceptedStarted].push_back(SignedUs(accepted, started));
  }
  for (int i = 0; i < 6; ++i) r.steps.push_back(StepOf(names[i], step[i]));
  return r;
}

}  // namespace secmode::suite
