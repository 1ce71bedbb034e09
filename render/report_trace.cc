// Report part of section "trace" (`secmode trace FILE --out DIR`): what a
// capture of ONC RPC traffic did, from the trace's JSON as results.json holds
// it (trace/rpc_trace.h): the side it was taken on, each RPCSEC_GSS context's
// calls in flight, lag and would-be drops per window, the operations with
// their response times, the NFSv4.1 sessions' slots, the connections, and
// the SMB2/3 sessions, commands and connections.
// Every string is results.json's and goes through MdText; a table of more
// than kTraceMaxRows rows shows its first rows and says how many more
// results.json holds.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "common/format.h"
#include "render/markdown.h"
#include "render/report_sections.h"
#include "render/report_trace_plots.h"

namespace secmode::render {

namespace {

using nlohmann::json;

constexpr size_t kTraceMaxRows = 64;

// "p50 / p99 / max" of an object of those keys.
std::string TraceSpread(const json& j, const char* last = "max") {
  if (!j.is_object()) return "-";
  return std::to_string(j.value("p50", uint64_t{0})) + " / " +
         std::to_string(j.value("p99", uint64_t{0})) + " / " +
         std::to_string(j.value(last, uint64_t{0}));
}

// A context's calls in flight: "at most" where some of its replies were
// not captured (they stay in flight).
std::string InFlightCell(const json& j) {
  const bool at_most =
      j.is_object() && j.value("upper_bound", json()).is_boolean() && j["upper_bound"].get<bool>();
  std::string cell = at_most ? "at most " : "";
  cell += TraceSpread(j);
  return cell;
}

// The rows beyond kTraceMaxRows, said under a table.
void TraceMore(std::ostringstream& md, size_t rows) {
  if (rows > kTraceMaxRows) {
    md << "\n" << rows - kTraceMaxRows << " more rows are in results.json.\n";
  }
  md << "\n";
}

void TraceContexts(const json& section, std::ostringstream& md) {
  const json windows = section.value("windows", json::array());
  md << "### RPCSEC_GSS contexts\n\n"
        "Per context over every connection that carries it: its DATA calls; the calls of it in "
        "flight as each was sent (the slots it really used; \"at most\" where some of its replies "
        "were not captured, as a snap length hides the replies after the first in a frame: their "
        "calls stay in flight); each call's lag behind the highest "
        "number sent before it, in the capture's order; and the calls a server window of W "
        "would have dropped below it (RFC 2203 5.3.3.1), with those a window would have taken "
        "for duplicates after the plus. A context made in the capture (its INIT's reply seen) "
        "shows the window its server announced and what came before its INIT: a reply saying "
        "a context was gone, the end of a connection that carried DATA calls, or nothing.\n\n"
        "| context | service | made in the capture | DATA calls | connections | in flight p50 / "
        "p99 / max | lag p50 / p99 / max |";
  for (const json& w : windows) md << " W" << w.get<uint32_t>() << " |";
  md << "\n|---|---|---|---:|---:|---:|---:|";
  for (size_t i = 0; i < windows.size(); ++i) md << "---:|";
  md << "\n";
  const json contexts = section.value("contexts", json::array());
  for (size_t i = 0; i < contexts.size() && i < kTraceMaxRows; ++i) {
    const json& x = contexts[i];
    std::string made = "-";
    if (x.value("created_in_capture", false)) {
      made = "after ";
      made += MdText(x.value("created_after", ""));
      made += ", window ";
      made += std::to_string(x.value("announced_window", uint64_t{0}));
    }
    md << "| " << MdCodeCell(x.value("handle", "")) << " | " << MdText(x.value("service", ""))
       << " | " << made << " | " << x.value("calls", uint64_t{0}) << " | "
       << x.value("connections", uint64_t{0}) << " | " << InFlightCell(x.value("in_flight", json()))
       << " | " << TraceSpread(x.value("lag", json())) << " |";
    const json below = x.value("below_window", json::object());
    const json dups = x.value("duplicates", json::object());
    for (const json& w : windows) {
      const std::string key = std::to_string(w.get<uint32_t>());
      md << " " << below.value(key, uint64_t{0});
      if (dups.value(key, uint64_t{0}) > 0) md << " +" << dups.value(key, uint64_t{0});
      md << " |";
    }
    md << "\n";
  }
  TraceMore(md, contexts.size());
}

void TraceOperations(const json& section, std::ostringstream& md) {
  md << "### Operations\n\n"
        "An NFSv4 COMPOUND is named by its minor version and operations where its arguments are "
        "in clear (AUTH_SYS, krb5, krb5i); under krb5p it is sealed. The mode is the call's "
        "credential. Response time from a call's last byte to its reply's last byte at the "
        "capture point.\n\n"
        "| operation | mode | calls | replies | call bytes | reply bytes | response us p50 / p99 "
        "/ p99.9 |\n|---|---|---:|---:|---:|---:|---:|\n";
  const json ops = section.value("operations", json::array());
  for (size_t i = 0; i < ops.size() && i < kTraceMaxRows; ++i) {
    const json& op = ops[i];
    const json us = op.value("response_us", json::object());
    md << "| " << MdText(op.value("operation", "")) << " | " << MdText(op.value("mode", ""))
       << " | " << op.value("calls", uint64_t{0}) << " | " << op.value("replies", uint64_t{0})
       << " | " << op.value("call_bytes", uint64_t{0}) << " | "
       << op.value("reply_bytes", uint64_t{0}) << " | " << common::Fmt("%.0f", us.value("p50", 0.0))
       << " / " << common::Fmt("%.0f", us.value("p99", 0.0)) << " / "
       << common::Fmt("%.0f", us.value("p999", 0.0)) << " |\n";
  }
  TraceMore(md, ops.size());
}

void TraceSessions(const json& section, std::ostringstream& md) {
  const json sessions = section.value("sessions", json::array());
  if (sessions.empty()) return;
  md << "### NFSv4.1 sessions\n\n"
        "From the SEQUENCE that begins each COMPOUND in clear: the slots the client used, the "
        "highest it used and the highest it said it might use, and how often it sent a slot's "
        "sequence id again (a retry the server answers from its reply cache).\n\n"
        "| session | calls | connections | slots used | highest slot used / stated | sequence "
        "ids sent again |\n|---|---:|---:|---:|---:|---:|\n";
  for (size_t i = 0; i < sessions.size() && i < kTraceMaxRows; ++i) {
    const json& x = sessions[i];
    md << "| " << MdCodeCell(x.value("session", "")) << " | " << x.value("calls", uint64_t{0})
       << " | " << x.value("connections", uint64_t{0}) << " | "
       << x.value("slots_used", uint64_t{0}) << " | " << x.value("highest_slot", uint64_t{0})
       << " / " << x.value("highest_slot_stated", uint64_t{0}) << " | "
       << x.value("repeated_sequence_ids", uint64_t{0}) << " |\n";
  }
  TraceMore(md, sessions.size());
}

// A number of results.json as text: `format`, or %g when it is too large
// for it.
std::string TraceFmt(const char* format, double d) {
  return std::fabs(d) < 1e15 ? common::Fmt(format, d) : common::Fmt("%g", d);
}

// A member of results.json that may be missing or of another type: the
// number as text ("-" when it is none), the string ("" when none), the
// object (empty when none).
std::string TraceNumber(const json& j, const char* key, const char* format = "%.0f") {
  const json v = j.is_object() ? j.value(key, json()) : json();
  return v.is_number() ? TraceFmt(format, v.get<double>()) : std::string("-");
}
std::string TraceString(const json& j, const char* key) {
  const json v = j.is_object() ? j.value(key, json()) : json();
  return v.is_string() ? v.get<std::string>() : std::string();
}
json TraceObject(const json& j, const char* key) {
  const json v = j.is_object() ? j.value(key, json()) : json();
  return v.is_object() ? v : json::object();
}

// Over a connection's two directions: the stream bytes the capture lost,
// and those it saw go by but did not keep (a snap length), "lost / not
// captured".
std::string StreamLoss(const json& connection) {
  double lost = 0, not_captured = 0;
  for (const char* side : {"from_client", "from_server"}) {
    const json d = TraceObject(connection, side);
    auto number = [&d](const char* key) {
      const json v = d.value(key, json());
      return v.is_number() ? v.get<double>() : 0.0;
    };
    const double bytes = number("bytes"), captured = number("captured_bytes");
    const double gone = number("lost_bytes");
    lost += gone;
    not_captured += std::max(0.0, bytes - captured - gone);
  }
  return TraceFmt("%.0f", lost) + " / " + TraceFmt("%.0f", not_captured);
}

void TraceConnections(const json& section, std::ostringstream& md) {
  md << "### Connections\n\n"
        "| client | server | calls | replies | retransmitted calls | most calls outstanding | "
        "ended | stream bytes lost / not captured |\n|---|---|---:|---:|---:|---:|---|---:|\n";
  const json conns = section.value("connections", json::array());
  for (size_t i = 0; i < conns.size() && i < kTraceMaxRows; ++i) {
    const json& c = conns[i];
    const std::string ended = c.value("reset", false)    ? "reset"
                              : c.value("closed", false) ? "closed"
                                                         : "open";
    md << "| " << MdText(c.value("client", "")) << " | " << MdText(c.value("server", "")) << " | "
       << c.value("calls", uint64_t{0}) << " | " << c.value("replies", uint64_t{0}) << " | "
       << c.value("retransmissions", uint64_t{0}) << " | "
       << c.value("most_outstanding", uint64_t{0}) << " | " << ended << " | " << StreamLoss(c)
       << " |\n";
  }
  TraceMore(md, conns.size());
}

// "lowest-highest" of a [lowest, highest] pair (the model over its seeds).
std::string TraceRange(const json& r) {
  if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number()) return "-";
  const double lo = r[0].get<double>(), hi = r[1].get<double>();
  return lo == hi ? TraceFmt("%.0f", lo) : TraceFmt("%.0f", lo) + "-" + TraceFmt("%.0f", hi);
}

std::string TraceLagRanges(const json& l) {
  if (!l.is_object()) return "-";
  return TraceRange(l.value("p50", json())) + " / " + TraceRange(l.value("p99", json())) + " / " +
         TraceRange(l.value("max", json()));
}

// `secmode trace --simulate`: the model of the busiest context beside it.
void TraceModel(const json& model, std::ostringstream& md) {
  if (!model.is_object()) return;
  md << "### The model beside the capture (--simulate)\n\n"
     << "The nconnect model (secmode nconnect) run on the scenario the capture gives for context "
     << MdCode(TraceString(model, "context")) << " (" << TraceNumber(model, "calls")
     << " DATA calls), " << TraceNumber(model, "seeds")
     << " seeds; the model's figures are the lowest and highest over the seeds, its counts "
        "scaled to the context's calls. Its lags as sent are in the client's order of sending "
        "(a server's capture has the order of arrival, which the network's jitter may change); "
        "as the server checked them they include its threads' reordering after arrival, which no "
        "capture shows.\n\n| parameter | value | from |\n|---|---|---|\n";
  const json assumptions = model.value("assumptions", json::array());
  for (size_t i = 0; assumptions.is_array() && i < assumptions.size(); ++i) {
    const json& a = assumptions[i];
    md << "| " << MdText(TraceString(a, "parameter")) << " | " << MdText(TraceString(a, "value"))
       << " | " << MdText(TraceString(a, "from")) << " |\n";
  }
  const json lag = TraceObject(model, "lag");
  md << "\n| | lag p50 / p99 / max |\n|---|---:|\n| capture | "
     << TraceNumber(TraceObject(lag, "capture"), "p50") << " / "
     << TraceNumber(TraceObject(lag, "capture"), "p99") << " / "
     << TraceNumber(TraceObject(lag, "capture"), "max") << " |\n| model, as sent | "
     << TraceLagRanges(lag.value("model_sent", json())) << " |\n| model, as the server checked | "
     << TraceLagRanges(lag.value("model_checked", json()))
     << " |\n\n| window | capture | model, as sent | model, as the server checked |\n"
        "|---:|---:|---:|---:|\n";
  const json below = model.value("below_window", json::array());
  for (size_t i = 0; below.is_array() && i < below.size() && i < kTraceMaxRows; ++i) {
    const json& b = below[i];
    md << "| " << TraceNumber(b, "window") << " | " << TraceNumber(b, "capture") << " | "
       << TraceRange(b.is_object() ? b.value("model_sent", json()) : json()) << " | "
       << TraceRange(b.is_object() ? b.value("model_checked", json()) : json()) << " |\n";
  }
  const json server = TraceObject(model, "server");
  const json rate = TraceObject(model, "rate");
  md << "\nAt the server's window of " << TraceNumber(server, "window") << " (reaction "
     << MdText(TraceString(server, "reaction")) << ") the model estimates "
     << TraceRange(server.value("model_drops", json()))
     << " calls below it where the server checks them: an estimate, not a measurement. The "
        "capture ran at "
     << TraceNumber(rate, "capture_calls_per_s")
     << " calls/s over its connections' time (idle included), the model at "
     << TraceRange(rate.value("model_calls_per_s", json()))
     << " over its run (timeouts included).\n\n";
  const json rec = model.value("recommendation", json());
  if (!rec.is_object()) return;
  md << "Recommended: at most " << TraceNumber(rec, "max_safe_slots")
     << " slots with no call below the window in any seed (the next candidate, "
     << TraceNumber(rec, "first_unsafe_slots")
     << ", had some; 0: none did).\n\n| alternative | slots | worst calls below the window | "
        "worst ops/s |\n|---|---:|---:|---:|\n";
  const json alternatives = rec.value("alternatives", json::array());
  for (size_t i = 0; alternatives.is_array() && i < alternatives.size(); ++i) {
    const json& alt = alternatives[i];
    md << "| " << MdText(TraceString(alt, "name")) << " | " << TraceNumber(alt, "slots") << " | "
       << TraceNumber(alt, "worst_violations") << " | " << TraceNumber(alt, "worst_ops_per_s")
       << " |\n";
  }
  md << "\n";
}

// An array member of results.json (empty when it is none).
json TraceArray(const json& j, const char* key) {
  const json v = j.is_object() ? j.value(key, json()) : json();
  return v.is_array() ? v : json::array();
}

// The SMB2/3 part (trace/smb_trace.h): sessions over their channels, the
// commands, the connections.
void TraceSmb(const json& smb, std::ostringstream& md) {
  if (!smb.is_object()) return;
  md << "### SMB sessions\n\n"
        "Per session over every connection that carries it (its channels; a connection bound "
        "to it by a SESSION_SETUP with the binding flag counts as a binding): its messages in "
        "clear, signed and encrypted (an encrypted message hides its header: only its session "
        "shows), the credits its requests asked for and were granted and the most its "
        "requests held at once, how far its channels' highest MessageIds lie apart, and the "
        "TRANSFORM_HEADER nonces its sender used twice, an error of that sender.\n\n"
        "| session | connections | binding requests | plain / signed / encrypted | credits asked "
        "/ granted / most in use | MessageId spread | nonces reused / not checked |\n"
        "|---|---:|---:|---:|---:|---:|---:|\n";
  const json sessions = TraceArray(smb, "sessions");
  for (size_t i = 0; i < sessions.size() && i < kTraceMaxRows; ++i) {
    const json& x = sessions[i];
    const json m = TraceObject(x, "messages"), c = TraceObject(x, "credits");
    md << "| " << MdCodeCell(TraceString(x, "session")) << " | " << TraceNumber(x, "connections")
       << " | " << TraceNumber(x, "bindings") << " | " << TraceNumber(m, "plain") << " / "
       << TraceNumber(m, "signed") << " / " << TraceNumber(m, "encrypted") << " | "
       << TraceNumber(c, "requested") << " / " << TraceNumber(c, "granted") << " / "
       << TraceNumber(c, "most_in_use") << " | " << TraceNumber(x, "message_id_spread") << " | "
       << TraceNumber(x, "nonces_reused") << " / " << TraceNumber(x, "nonces_not_checked")
       << " |\n";
  }
  TraceMore(md, sessions.size());
  const std::string over[][2] = {
      {TraceNumber(smb, "segments_over_connection_limit"), "segments of connections"},
      {TraceNumber(smb, "messages_over_session_limit"), "messages of sessions"},
      {TraceNumber(smb, "memberships_over_limit"), "channels and MessageIds not followed"}};
  std::string beyond;
  for (const auto& [n, what] : over) {
    if (n == "0" || n == "-") continue;
    if (!beyond.empty()) beyond.append(", ");
    beyond.append(n).append(" ").append(what);
  }
  if (!beyond.empty()) md << "Beyond the trace's bounds: " << beyond << ".\n\n";
  md << "### SMB commands\n\n"
        "Requests in clear by command and protection, and their responses (the interim "
        "STATUS_PENDING ones apart); response time from a request's last byte to its final "
        "response's last byte at the capture point.\n\n"
        "| command | protection | requests | responses | interim | response us p50 / p99 / "
        "p99.9 |\n|---|---|---:|---:|---:|---:|\n";
  const json commands = TraceArray(smb, "commands");
  for (size_t i = 0; i < commands.size() && i < kTraceMaxRows; ++i) {
    const json& x = commands[i];
    const json us = TraceObject(x, "response_us");
    md << "| " << MdText(TraceString(x, "command")) << " | " << MdText(TraceString(x, "protection"))
       << " | " << TraceNumber(x, "requests") << " | " << TraceNumber(x, "responses") << " | "
       << TraceNumber(x, "interim_responses") << " | " << TraceNumber(us, "p50") << " / "
       << TraceNumber(us, "p99") << " / " << TraceNumber(us, "p999") << " |\n";
  }
  TraceMore(md, commands.size());
  md << "### SMB connections\n\n"
        "| client | server | requests | responses | encrypted | compounded | headers not "
        "captured | stream bytes lost / not captured |\n|---|---|---:|---:|---:|---:|---:|---:|\n";
  const json conns = TraceArray(smb, "connections");
  for (size_t i = 0; i < conns.size() && i < kTraceMaxRows; ++i) {
    const json& c = conns[i];
    md << "| " << MdText(TraceString(c, "client")) << " | " << MdText(TraceString(c, "server"))
       << " | " << TraceNumber(c, "requests") << " | " << TraceNumber(c, "responses") << " | "
       << TraceNumber(c, "encrypted") << " | " << TraceNumber(c, "compounded") << " | "
       << TraceNumber(c, "unreadable") << " | " << StreamLoss(c) << " |\n";
  }
  TraceMore(md, conns.size());
}

}  // namespace

void RenderTraceSection(const harness::RunResults& r, const json& section, Rendered& out) {
  (void)r;
  std::ostringstream md;
  const json capture = section.value("capture", json::object());
  const json side = section.value("side", json::object());
  md << "## What a capture's ONC RPC traffic did (secmode trace)\n\n"
     << capture.value("frames", uint64_t{0}) << " frames, "
     << capture.value("tcp_segments", uint64_t{0}) << " TCP segments over "
     << common::Fmt("%.3f", capture.value("seconds", 0.0)) << " s; "
     << capture.value("truncated_headers", uint64_t{0}) << " frames with headers cut short, "
     << capture.value("ip_fragments", uint64_t{0}) << " IP fragments not read. ";
  if (capture.contains("cut_at_byte") && capture["cut_at_byte"].is_number_unsigned()) {
    md << "The file ends inside frame " << capture.value("frames", uint64_t{0}) + 1 << ", at byte "
       << capture["cut_at_byte"].get<uint64_t>()
       << ": that frame is not read (its writer was stopped mid-write?). ";
  }
  md << "Taken on the " << MdText(side.value("side", "unknown")) << " side ("
     << MdText(side.value("how", ""))
     << "): a lag is in that side's order, a client's of sending or a server's of arrival; a "
        "server whose threads reorder calls after they arrive drops more than that order "
        "shows.\n\n";
  TraceContexts(section, md);
  TraceModel(section.value("model", json()), md);
  TraceOperations(section, md);
  TraceSessions(section, md);
  TraceConnections(section, md);
  TraceSmb(section.value("smb", json()), md);
  md << TracePlots(section, out);
  out.report_md += md.str();
}

}  // namespace secmode::render
