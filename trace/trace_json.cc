// RpcTrace as JSON (`secmode trace --json`), and that JSON as the
// terminal's table. Every string here is made by this code (numbers, hex,
// names from fixed tables): nothing of the capture is copied as text.
#include <cstdio>
#include <sstream>

#include "common/format.h"
#include "trace/rpc_trace.h"

namespace secmode::trace {

using nlohmann::json;

namespace {

json Direction(const DirectionCounts& d, const RecordCounts& r) {
  return {{"bytes", d.bytes},
          {"captured_bytes", d.captured},
          {"lost_bytes", d.lost},
          {"segments", d.segments},
          {"retransmitted_segments", d.retransmitted},
          {"out_of_order_segments", d.out_of_order},
          {"records", r.records},
          {"records_cut", r.records_cut},
          {"keepalives", r.keepalives},
          {"lost_place", r.lost_place},
          {"passed_over_bytes", r.passed_over}};
}

json ByWindow(const std::map<uint32_t, uint64_t>& counts, const TraceOptions& options) {
  json out = json::object();
  for (uint32_t w : options.windows) {
    auto it = counts.find(w);
    out[std::to_string(w)] = it == counts.end() ? 0 : it->second;
  }
  return out;
}

// A distribution as a report draws it: its value at every 2% and in the
// tail, [[q, value / scale], ...]; empty without samples.
json Quantiles(common::LatencySamples& s, double scale) {
  json out = json::array();
  if (s.count() == 0) return out;
  std::vector<double> qs;
  for (int i = 0; i < 50; ++i) qs.push_back(i / 50.0);
  for (double q : {0.99, 0.995, 0.999, 1.0}) qs.push_back(q);
  for (double q : qs) out.push_back({q, static_cast<double>(s.Percentile(q)) / scale});
  return out;
}

// Calls per lag bin (LagBin): from, to (null for the last, open bin), calls.
json LagHistogram(const ContextTrace& x) {
  json out = json::array();
  for (size_t b = 0; b < kLagBins; ++b) {
    const uint64_t from = b == 0 ? 0 : uint64_t{1} << (b - 1);
    const json to = b + 1 == kLagBins ? json(nullptr) : json(b == 0 ? 0 : (uint64_t{1} << b) - 1);
    out.push_back({{"from", from}, {"to", to}, {"calls", x.lag_histogram[b]}});
  }
  return out;
}

// The most calls in flight in each stretch of the capture's time, from
// `first_ts_ns` on (null where no call was sent).
json InFlightOverTime(const MostOverTime& m, int64_t first_ts_ns) {
  json most = json::array();
  for (uint32_t v : m.bins()) most.push_back(v == MostOverTime::kNone ? json(nullptr) : json(v));
  return {{"start_s", static_cast<double>(m.start_ns() - first_ts_ns) / 1e9},
          {"bin_s", static_cast<double>(m.width_ns()) / 1e9},
          {"most", most}};
}

// Whether a reply of the context's calls may have gone unseen: a server
// direction of its connections handed on bytes the capture did not keep (a
// snap length hides the replies after the first in a frame) or lost. Its
// calls then stay in flight: the counts of calls in flight are at most.
bool RepliesHidden(const ContextTrace& x, const RpcTrace& t) {
  for (size_t i : x.connections) {
    const DirectionCounts& d = t.connections[i].from_server;
    if (d.bytes > d.captured) return true;
  }
  return false;
}

json Context(ContextTrace& x, const TraceOptions& options, const RpcTrace& t) {
  return {{"handle", x.handle},
          {"service", x.service},
          {"calls", x.calls},
          {"connections", x.connections.size()},
          {"lag",
           {{"p50", x.lag.Percentile(0.5)}, {"p99", x.lag.Percentile(0.99)}, {"max", x.max_lag}}},
          {"lagging_calls", x.lagging},
          {"in_flight",
           {{"p50", x.in_flight.Percentile(0.5)},
            {"p99", x.in_flight.Percentile(0.99)},
            {"max", x.most_in_flight},
            {"upper_bound", RepliesHidden(x, t)}}},
          {"below_window", ByWindow(x.below_window, options)},
          {"duplicates", ByWindow(x.duplicates, options)},
          {"at_or_above_maxseq", x.at_maxseq},
          {"retransmissions", x.retransmissions},
          {"context_problem_replies", x.context_problems},
          {"created_in_capture", x.created},
          {"created_after", x.created ? json(x.created_after) : json(nullptr)},
          {"announced_window", x.created ? json(x.announced_window) : json(nullptr)},
          {"destroys", x.destroys},
          {"lag_histogram", LagHistogram(x)},
          {"in_flight_over_time", InFlightOverTime(x.in_flight_over_time, t.first_ts_ns)}};
}

json Connection(const ConnectionTrace& c) {
  return {{"client", c.client.ToString()},
          {"server", c.server.ToString()},
          {"seconds", static_cast<double>(c.last_ts_ns - c.first_ts_ns) / 1e9},
          {"calls", c.calls},
          {"replies", c.replies},
          {"retransmissions", c.retransmissions},
          {"unmatched_replies", c.unmatched_replies},
          {"unreadable_calls", c.unreadable_calls},
          {"unreadable_replies", c.unreadable_replies},
          {"most_outstanding", c.most_outstanding},
          {"outstanding_at_end", c.outstanding_at_end},
          {"outstanding_given_up", c.outstanding_given_up},
          {"passed_over", c.passed_over},
          {"closed", c.closed},
          {"reset", c.reset},
          {"handshake_us",
           c.synack_to_ack_ns < 0
               ? json(nullptr)
               : json{{"syn_to_synack", static_cast<double>(c.syn_to_synack_ns) / 1e3},
                      {"synack_to_ack", static_cast<double>(c.synack_to_ack_ns) / 1e3}}},
          {"from_client", Direction(c.from_client, c.client_records)},
          {"from_server", Direction(c.from_server, c.server_records)}};
}

json Operation(const std::pair<std::string, std::string>& key, OperationTrace& op) {
  auto us = [&](double q) { return static_cast<double>(op.response_ns.Percentile(q)) / 1e3; };
  return {{"operation", key.first},
          {"mode", key.second},
          {"calls", op.calls},
          {"replies", op.replies},
          {"call_bytes", op.call_bytes},
          {"reply_bytes", op.reply_bytes},
          {"response_us", {{"p50", us(0.5)}, {"p99", us(0.99)}, {"p999", us(0.999)}}},
          {"response_us_quantiles", Quantiles(op.response_ns, 1e3)}};
}

// Where the capture was taken: as given, or guessed from the handshakes.
json Side(const RpcTrace& t, const TraceOptions& options) {
  const SideGuess g = GuessSide(t);
  json out = {{"handshakes", g.handshakes},
              {"syn_to_synack_us", static_cast<double>(g.syn_to_synack_ns) / 1e3},
              {"synack_to_ack_us", static_cast<double>(g.synack_to_ack_ns) / 1e3},
              {"guessed", CaptureSideName(g.side)}};
  if (options.side != CaptureSide::kUnknown) {
    out["side"] = CaptureSideName(options.side);
    out["how"] = "given (--side); " + g.how;
  } else {
    out["side"] = CaptureSideName(g.side);
    out["how"] = g.how;
  }
  return out;
}

json Session(const SessionTrace& x) {
  return {{"session", x.id},
          {"calls", x.calls},
          {"connections", x.connections.size()},
          {"slots_used", x.slots_used},
          {"highest_slot", x.highest_slot},
          {"highest_slot_stated", x.highest_stated},
          {"repeated_sequence_ids", x.repeats}};
}

std::string Hex64(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

json SmbSession(const SmbSessionTrace& x) {
  json highest = json::array();
  uint64_t low = UINT64_MAX, high = 0;
  for (const auto& [connection, id] : x.highest_message_id) {
    highest.push_back({{"connection", connection}, {"message_id", id}});
    low = std::min(low, id);
    high = std::max(high, id);
  }
  return {
      {"session", Hex64(x.id)},
      {"connections", x.connections.size()},
      {"bindings", x.bindings},
      {"messages", {{"plain", x.plain}, {"signed", x.signed_messages}, {"encrypted", x.encrypted}}},
      {"credits",
       {{"requested", x.credits_requested},
        {"granted", x.credits_granted},
        {"most_in_use", x.most_credits_in_use}}},
      {"highest_message_id", highest},
      // How far its channels' highest MessageIds lie apart.
      {"message_id_spread", highest.empty() ? 0 : high - low},
      {"nonces_reused", x.nonces_reused},
      {"nonces_not_checked", x.nonces_not_checked}};
}

json SmbConnection(const SmbConnectionTrace& c) {
  return {{"client", c.client.ToString()},
          {"server", c.server.ToString()},
          {"seconds", static_cast<double>(c.last_ts_ns - c.first_ts_ns) / 1e9},
          {"requests", c.requests},
          {"responses", c.responses},
          {"encrypted", c.encrypted},
          {"compressed", c.compressed},
          {"compounded", c.compounded},
          {"unreadable", c.unreadable},
          {"not_smb2", c.not_smb2},
          {"unmatched_responses", c.unmatched_responses},
          {"notifications", c.notifications},
          {"most_outstanding", c.most_outstanding},
          {"outstanding_at_end", c.outstanding_at_end},
          {"outstanding_given_up", c.outstanding_given_up},
          {"closed", c.closed},
          {"reset", c.reset},
          {"from_client", Direction(c.from_client, c.client_records)},
          {"from_server", Direction(c.from_server, c.server_records)}};
}

json SmbCommand(const std::pair<std::string, std::string>& key, SmbCommandTrace& x) {
  auto us = [&](double q) { return static_cast<double>(x.response_ns.Percentile(q)) / 1e3; };
  return {{"command", key.first},
          {"protection", key.second},
          {"requests", x.requests},
          {"responses", x.responses},
          {"interim_responses", x.interim},
          {"response_us", {{"p50", us(0.5)}, {"p99", us(0.99)}, {"p999", us(0.999)}}},
          {"response_us_quantiles", Quantiles(x.response_ns, 1e3)}};
}

json Smb(SmbTrace& t) {
  json out = {{"segments_over_connection_limit", t.segments_over_limit},
              {"messages_over_session_limit", t.sessions_over_limit},
              {"memberships_over_limit", t.memberships_over_limit}};
  json& connections = out["connections"] = json::array();
  for (const SmbConnectionTrace& c : t.connections) connections.push_back(SmbConnection(c));
  json& sessions = out["sessions"] = json::array();
  for (const SmbSessionTrace& x : t.sessions) sessions.push_back(SmbSession(x));
  json& commands = out["commands"] = json::array();
  for (auto& [key, x] : t.commands) commands.push_back(SmbCommand(key, x));
  return out;
}

}  // namespace

json TraceJson(RpcTrace& t, const TraceOptions& options) {
  json out = {{"capture",
               {{"frames", t.capture.frames},
                {"tcp_segments", t.capture.tcp},
                {"not_tcp", t.capture.not_tcp},
                {"ip_fragments", t.capture.fragments},
                {"truncated_headers", t.capture.truncated},
                {"malformed", t.capture.malformed},
                {"cut_at_byte", t.capture.cut_at > 0 ? json(t.capture.cut_at) : json(nullptr)},
                {"seconds", static_cast<double>(t.last_ts_ns - t.first_ts_ns) / 1e9}}},
              {"windows", options.windows},
              {"side", Side(t, options)},
              {"gss_init_calls", t.gss_init_calls},
              {"contexts_created_after", t.contexts_created_after},
              {"connections_not_rpc", t.connections_not_rpc},
              {"segments_over_connection_limit", t.segments_over_limit},
              {"contexts_over_limit", t.contexts_over_limit},
              {"sessions_over_limit", t.sessions_over_limit},
              {"memberships_over_limit", t.memberships_over_limit}};
  json& contexts = out["contexts"] = json::array();
  for (ContextTrace& x : t.contexts) contexts.push_back(Context(x, options, t));
  json& connections = out["connections"] = json::array();
  for (const ConnectionTrace& c : t.connections) connections.push_back(Connection(c));
  json& operations = out["operations"] = json::array();
  for (auto& [key, op] : t.operations) operations.push_back(Operation(key, op));
  json& sessions = out["sessions"] = json::array();
  for (const SessionTrace& x : t.sessions) sessions.push_back(Session(x));
  if (!t.smb.connections.empty()) out["smb"] = Smb(t.smb);
  return out;
}

namespace {

void SmbText(const json& smb, std::ostringstream& out) {
  out << "\nSMB connections (client -> server): requests, responses, encrypted, compounded, "
         "headers not captured\n";
  for (const json& c : smb["connections"]) {
    out << "  " << c["client"].get<std::string>() << " -> " << c["server"].get<std::string>()
        << ": " << c["requests"] << ", " << c["responses"] << ", " << c["encrypted"] << ", "
        << c["compounded"] << ", " << c["unreadable"] << "\n";
  }
  out << "\nSMB sessions: connections (binding requests), messages plain/signed/encrypted, "
         "credits requested/granted/most in use, spread of the channels' highest MessageIds, "
         "nonces reused (not checked)\n";
  for (const json& x : smb["sessions"]) {
    const json& m = x["messages"];
    const json& cr = x["credits"];
    out << "  " << x["session"].get<std::string>() << ": " << x["connections"] << " ("
        << x["bindings"] << "), " << m["plain"] << "/" << m["signed"] << "/" << m["encrypted"]
        << ", " << cr["requested"] << "/" << cr["granted"] << "/" << cr["most_in_use"] << ", "
        << x["message_id_spread"] << ", " << x["nonces_reused"] << " (" << x["nonces_not_checked"]
        << ")";
    if (x["nonces_reused"].get<uint64_t>() > 0) out << " (an error of the sender)";
    out << "\n";
  }
  const uint64_t over = smb["segments_over_connection_limit"].get<uint64_t>() +
                        smb["messages_over_session_limit"].get<uint64_t>() +
                        smb["memberships_over_limit"].get<uint64_t>();
  if (over > 0) {
    out << "  beyond the trace's bounds: " << smb["segments_over_connection_limit"]
        << " segments of connections, " << smb["messages_over_session_limit"]
        << " messages of sessions, " << smb["memberships_over_limit"]
        << " channels and MessageIds not followed\n";
  }
  out << "\nSMB commands [protection]: requests, responses, response time at the capture point "
         "p50/p99/p99.9 (us); an encrypted message's command is not visible\n";
  for (const json& x : smb["commands"]) {
    out << "  " << x["command"].get<std::string>() << " [" << x["protection"].get<std::string>()
        << "]: " << x["requests"] << ", " << x["responses"] << ", "
        << common::Fmt("%.0f", x["response_us"]["p50"].get<double>()) << "/"
        << common::Fmt("%.0f", x["response_us"]["p99"].get<double>()) << "/"
        << common::Fmt("%.0f", x["response_us"]["p999"].get<double>()) << "\n";
  }
}

}  // namespace

std::string TraceText(const json& t) {
  std::ostringstream out;
  const json& cap = t["capture"];
  out << "capture: " << cap["frames"].get<uint64_t>() << " frames, "
      << cap["tcp_segments"].get<uint64_t>() << " TCP segments over "
      << common::Fmt("%.3f", cap["seconds"].get<double>()) << " s";
  if (cap["truncated_headers"].get<uint64_t>() > 0 || cap["ip_fragments"].get<uint64_t>() > 0) {
    out << " (" << cap["truncated_headers"].get<uint64_t>() << " with headers cut short, "
        << cap["ip_fragments"].get<uint64_t>() << " IP fragments not read)";
  }
  if (cap.contains("cut_at_byte") && cap["cut_at_byte"].is_number_unsigned()) {
    out << "\nthe file ends inside frame " << cap["frames"].get<uint64_t>() + 1 << ", at byte "
        << cap["cut_at_byte"].get<uint64_t>()
        << ": that frame is not read (its writer was stopped mid-write?)";
  }
  const json& side = t["side"];
  out << "\ntaken on the " << side["side"].get<std::string>() << " side ("
      << side["how"].get<std::string>() << "): "
      << (side["side"] == "server" ? "lags are in the server's order of arrival"
          : side["side"] == "client"
              ? "lags are in the client's order of sending"
              : "lags are in the capture's order, the client's sending or the server's arrival "
                "(--side says which)");
  out << "\n\nconnections (client -> server): calls, replies, retransmitted calls, most calls "
         "outstanding, stream bytes lost from the capture / not captured\n";
  for (const json& c : t["connections"]) {
    uint64_t lost = 0, uncaptured = 0;
    for (const char* side : {"from_client", "from_server"}) {
      const json& d = c[side];
      lost += d["lost_bytes"].get<uint64_t>();
      uncaptured += d["bytes"].get<uint64_t>() - d["captured_bytes"].get<uint64_t>() -
                    d["lost_bytes"].get<uint64_t>();
    }
    out << "  " << c["client"].get<std::string>() << " -> " << c["server"].get<std::string>()
        << ": " << c["calls"] << ", " << c["replies"] << ", " << c["retransmissions"] << ", "
        << c["most_outstanding"] << ", " << lost << " / " << uncaptured << "\n";
  }
  out << "\nRPCSEC_GSS contexts: DATA calls, connections, calls in flight p50/p99/max, lag "
         "behind the highest number p50/p99/max, calls a window would have dropped below it (and "
         "as duplicates) in capture order\n";
  for (const json& x : t["contexts"]) {
    const std::string handle = x["handle"].get<std::string>();
    out << "  " << handle.substr(0, 16) << (handle.size() > 16 ? "..." : "") << " "
        << x["service"].get<std::string>() << ": " << x["calls"] << ", " << x["connections"] << ", "
        << (x["in_flight"]["upper_bound"].get<bool>() ? "at most " : "") << x["in_flight"]["p50"]
        << "/" << x["in_flight"]["p99"] << "/" << x["in_flight"]["max"] << ", " << x["lag"]["p50"]
        << "/" << x["lag"]["p99"] << "/" << x["lag"]["max"] << ",";
    for (const json& w : t["windows"]) {
      const std::string key = std::to_string(w.get<uint32_t>());
      out << " W" << key << ": " << x["below_window"][key];
      if (x["duplicates"][key].get<uint64_t>() > 0) {
        out << " (+" << x["duplicates"][key] << " duplicates)";
      }
    }
    if (x["created_in_capture"].get<bool>()) {
      out << "; made in the capture after " << x["created_after"].get<std::string>() << ", window "
          << x["announced_window"];
    }
    out << "\n";
  }
  if (!t["contexts_created_after"].empty()) {
    out << "  contexts created in the capture, by what came before their INIT:";
    for (const auto& [after, n] : t["contexts_created_after"].items()) {
      out << " " << n << " after " << after << ";";
    }
    out << "\n";
  }
  out << "\noperations [mode]: calls, replies, response time at the capture point "
         "p50/p99/p99.9 (us)\n";
  for (const json& op : t["operations"]) {
    out << "  " << op["operation"].get<std::string>() << " [" << op["mode"].get<std::string>()
        << "]: " << op["calls"] << ", " << op["replies"] << ", "
        << common::Fmt("%.0f", op["response_us"]["p50"].get<double>()) << "/"
        << common::Fmt("%.0f", op["response_us"]["p99"].get<double>()) << "/"
        << common::Fmt("%.0f", op["response_us"]["p999"].get<double>()) << "\n";
  }
  if (!t["sessions"].empty()) {
    out << "\nNFSv4.1 sessions (from SEQUENCE in clear): calls, connections, slots used, highest "
           "slot used / stated, a slot's sequence id sent again\n";
    for (const json& x : t["sessions"]) {
      out << "  " << x["session"].get<std::string>() << ": " << x["calls"] << ", "
          << x["connections"] << ", " << x["slots_used"] << ", " << x["highest_slot"] << " / "
          << x["highest_slot_stated"] << ", " << x["repeated_sequence_ids"] << "\n";
    }
  }
  if (t.contains("smb")) SmbText(t["smb"], out);
  return out.str();
}

}  // namespace secmode::trace
