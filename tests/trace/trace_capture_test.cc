// `secmode trace` on real traffic: tcpdump captures `secmode load` (one
// RPCSEC_GSS context shared by 4 connections of 64 slots) against `secmode
// serve` with a window of 16 on loopback, and what the trace says of each
// context (its DATA calls, their lag behind the highest number before them,
// and the calls each window would have dropped in capture order) must be
// exactly what tshark's own fields of the same file give; so must its
// COMPOUNDs' operations and the session's slots (krb5i: the arguments are in
// clear). The same capture
// cut to a snap length of 200 bytes by editcap is still read, and what it
// hides is said.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "common/files.h"
#include "common/subprocess.h"
#include "common/throwaway.h"
#include "rpc/ganesha.h"
#include "rpc/load.h"
#include "rpc/nfs.h"
#include "rpc/nfs4_ops.h"
#include "tests/rpc/serve_process.h"
#include "tests/support/processes.h"
#include "tests/support/shared_realm.h"
#include "tests/support/tcpdump.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tshark.h"
#include "trace/rpc_trace.h"

namespace secmode {
namespace {

using testing::TempDir;
using testing::TextOf;

// What a window of `w` makes of one context's numbers in order (RFC 2203
// 5.3.3.1), computed here apart from rpc::SequenceWindow: a number `w` or
// more below the highest accepted is below the window; one accepted before
// is a duplicate; any other is accepted.
struct Expected {
  uint64_t calls = 0, lagging = 0;
  std::vector<uint64_t> lags;
  std::map<uint32_t, uint64_t> below, duplicates;
};

Expected FromNumbers(const std::vector<uint32_t>& seqs, const std::vector<uint32_t>& windows) {
  Expected e;
  e.calls = seqs.size();
  uint32_t highest = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const uint32_t lag = i > 0 && seqs[i] < highest ? highest - seqs[i] : 0;
    e.lags.push_back(lag);
    if (lag > 0) ++e.lagging;
    highest = i == 0 ? seqs[i] : std::max(highest, seqs[i]);
  }
  for (uint32_t w : windows) {
    std::set<uint32_t> accepted;
    uint32_t top = 0;
    for (uint32_t s : seqs) {
      if (!accepted.empty() && s < top && top - s >= w) {
        ++e.below[w];
      } else if (accepted.count(s)) {
        ++e.duplicates[w];
      } else {
        accepted.insert(s);
        top = std::max(top, s);
      }
    }
  }
  return e;
}

// Nearest rank, as common::LatencySamples gives it.
uint64_t Rank(std::vector<uint64_t> v, double q) {
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::max<size_t>(rank, 1) - 1];
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const size_t comma = s.find(',', at);
    out.push_back(s.substr(at, comma - at));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

// Every RPCSEC_GSS DATA call in the capture, by context, in frame order, as
// tshark dissects them.
std::map<std::string, std::vector<uint32_t>> TsharkNumbers(const std::string& pcap,
                                                           const std::string& port,
                                                           const std::string& log) {
  const auto rows = testing::RunTshark(
      pcap,
      {"-d", "tcp.port==" + port + ",rpc", "-Y", "rpc.msgtyp == 0 && rpc.auth.flavor == 6", "-T",
       "fields", "-e", "frame.number", "-e", "rpc.msgtyp", "-e", "rpc.authgss.procedure", "-e",
       "rpc.authgss.service", "-e", "rpc.authgss.context", "-e", "rpc.authgss.seqnum"},
      log);
  std::map<std::string, std::vector<uint32_t>> by_context;
  for (const auto& row : rows) {
    EXPECT_EQ(row.size(), 6u);
    if (row.size() != 6) continue;
    // Several calls in one frame: a value per call, comma-separated; a
    // number per call, and a second one after it in a krb5i call's body
    // (rpc_gss_integ_data, RFC 2203 5.3.2.2), which must be the same.
    const auto types = Split(row[1]), procs = Split(row[2]), services = Split(row[3]),
               contexts = Split(row[4]), seqs = Split(row[5]);
    if (procs.size() != types.size() || services.size() != procs.size() ||
        contexts.size() != procs.size()) {
      ADD_FAILURE() << "frame " << row[0] << ": fields do not line up";
      continue;
    }
    size_t at = 0;  // into seqs
    for (size_t i = 0; i < procs.size() && at < seqs.size(); ++i) {
      const bool data = types[i] == "0" && procs[i] == "0";
      const bool in_body = data && services[i] == "2";
      if (data) {
        std::string ctx = contexts[i];
        ctx.erase(std::remove(ctx.begin(), ctx.end(), ':'), ctx.end());
        by_context[ctx].push_back(static_cast<uint32_t>(std::stoul(seqs[at])));
        if (in_body && at + 1 < seqs.size()) {
          EXPECT_EQ(seqs[at + 1], seqs[at]) << "frame " << row[0];
        }
      }
      at += in_body ? 2 : 1;
    }
    EXPECT_EQ(at, seqs.size()) << "frame " << row[0] << ": numbers left over";
  }
  return by_context;
}

// What tshark dissects of the NFSv4.1 COMPOUNDs in the capture's calls: how
// many of each list of operations, and the slot ids their SEQUENCEs name.
// tshark lists the operations of all the calls in a frame as one list; it is
// split before each operation RFC 8881 allows only first in a COMPOUND
// (SEQUENCE, and the few that stand alone), with which every 4.1 COMPOUND
// begins.
struct TsharkCompounds {
  std::map<std::string, uint64_t> by_ops;  // "SEQUENCE PUTFH READ" -> calls
  std::set<uint32_t> slots;
  // Per session id (hex), the slots its SEQUENCEs used.
  std::map<std::string, std::set<uint32_t>> session_slots;
  size_t frames_unpaired = 0;  // frames whose operations, sessions and slots do not pair
};

TsharkCompounds TsharkOps(const std::string& pcap, const std::string& port,
                          const std::string& log) {
  const auto rows = testing::RunTshark(
      pcap,
      {"-d", "tcp.port==" + port + ",rpc", "-Y", "rpc.msgtyp == 0 && nfs.opcode", "-T", "fields",
       "-e", "frame.number", "-e", "nfs.opcode", "-e", "nfs.slotid", "-e", "nfs.session_id4"},
      log);
  TsharkCompounds out;
  for (auto row : rows) {
    // A frame with no SEQUENCE has no slot id or session: its row may end
    // before them.
    while (row.size() < 4) row.emplace_back();
    if (row.size() != 4) {
      ADD_FAILURE() << "a row of " << row.size() << " fields";
      continue;
    }
    std::vector<std::string> compound;
    auto flush = [&] {
      if (compound.empty()) return;
      std::string names;
      for (const std::string& op : compound) {
        names +=
            (names.empty() ? "" : " ") + rpc::Nfs4OpName(static_cast<uint32_t>(std::stoul(op)));
      }
      ++out.by_ops[names];
      compound.clear();
    };
    for (const std::string& op : Split(row[1])) {
      if (op.empty()) continue;
      static const std::set<std::string> kFirst = {"SEQUENCE",         "EXCHANGE_ID",
                                                   "CREATE_SESSION",   "DESTROY_SESSION",
                                                   "DESTROY_CLIENTID", "BIND_CONN_TO_SESSION"};
      if (kFirst.count(rpc::Nfs4OpName(static_cast<uint32_t>(std::stoul(op))))) flush();
      compound.push_back(op);
    }
    flush();
    std::vector<uint32_t> slots;
    for (const std::string& slot : Split(row[2])) {
      if (!slot.empty()) slots.push_back(static_cast<uint32_t>(std::stoul(slot)));
    }
    out.slots.insert(slots.begin(), slots.end());
    std::vector<std::string> sessions;
    for (std::string id : Split(row[3])) {
      id.erase(std::remove(id.begin(), id.end(), ':'), id.end());
      if (!id.empty()) sessions.push_back(id);
    }
    // In the frame's order each SEQUENCE has a session and a slot,
    // DESTROY_SESSION and BIND_CONN_TO_SESSION a session alone.
    size_t next_session = 0, next_slot = 0;
    bool paired = true;
    for (const std::string& op : Split(row[1])) {
      if (op.empty()) continue;
      const std::string name = rpc::Nfs4OpName(static_cast<uint32_t>(std::stoul(op)));
      if (name == "SEQUENCE") {
        if (next_session >= sessions.size() || next_slot >= slots.size()) {
          paired = false;
          break;
        }
        out.session_slots[sessions[next_session++]].insert(slots[next_slot++]);
      } else if (name == "DESTROY_SESSION" || name == "BIND_CONN_TO_SESSION") {
        ++next_session;
      }
    }
    if (!paired || next_session != sessions.size() || next_slot != slots.size()) {
      ++out.frames_unpaired;
    }
  }
  return out;
}

nlohmann::json Trace(const std::string& pcap, const std::string& port, const std::string& log,
                     const std::vector<std::string>& more = {}) {
  common::Command c;
  c.argv = {SECMODE_BIN, "trace", pcap, "--rpc-port", port, "--json"};
  c.argv.insert(c.argv.end(), more.begin(), more.end());
  c.log_path = log;
  auto rc = common::RunAndWait(c, 120000);
  EXPECT_TRUE(rc.ok() && *rc == 0) << TextOf(log);
  const std::string out = TextOf(log);
  const size_t a = out.find('{');
  return a == std::string::npos ? nlohmann::json()
                                : nlohmann::json::parse(out.substr(a), nullptr, false);
}

void ExpectTraceIsTsharks(const nlohmann::json& trace,
                          const std::map<std::string, std::vector<uint32_t>>& numbers) {
  ASSERT_TRUE(trace.is_object());
  std::vector<uint32_t> windows = trace["windows"].get<std::vector<uint32_t>>();
  // Contexts with DATA calls (one made in the capture and never used has none).
  size_t used = 0;
  for (const auto& x : trace["contexts"]) used += x["calls"].get<uint64_t>() > 0;
  ASSERT_EQ(used, numbers.size());
  for (const auto& x : trace["contexts"]) {
    if (x["calls"].get<uint64_t>() == 0) continue;
    const std::string handle = x["handle"];
    SCOPED_TRACE(handle);
    auto it = numbers.find(handle);
    ASSERT_NE(it, numbers.end());
    const Expected e = FromNumbers(it->second, windows);
    EXPECT_EQ(x["calls"].get<uint64_t>(), e.calls);
    EXPECT_EQ(x["lagging_calls"].get<uint64_t>(), e.lagging);
    EXPECT_EQ(x["lag"]["p50"].get<uint64_t>(), Rank(e.lags, 0.5));
    EXPECT_EQ(x["lag"]["p99"].get<uint64_t>(), Rank(e.lags, 0.99));
    EXPECT_EQ(x["lag"]["max"].get<uint64_t>(), Rank(e.lags, 1.0));
    // The lag histogram: tshark's lags, bin by bin.
    std::vector<uint64_t> bins(secmode::trace::kLagBins, 0);
    for (uint64_t lag : e.lags) ++bins[secmode::trace::LagBin(static_cast<uint32_t>(lag))];
    ASSERT_EQ(x["lag_histogram"].size(), secmode::trace::kLagBins);
    for (size_t b = 0; b < secmode::trace::kLagBins; ++b) {
      EXPECT_EQ(x["lag_histogram"][b]["calls"].get<uint64_t>(), bins[b]) << "lag bin " << b;
    }
    for (uint32_t w : windows) {
      const std::string key = std::to_string(w);
      EXPECT_EQ(x["below_window"][key].get<uint64_t>(), e.below.count(w) ? e.below.at(w) : 0)
          << "window " << w;
      EXPECT_EQ(x["duplicates"][key].get<uint64_t>(),
                e.duplicates.count(w) ? e.duplicates.at(w) : 0)
          << "window " << w;
    }
  }
}

using testing::ExpectNoDrop;
using testing::Tcpdump;

TEST(TraceCaptureTest, ASharedContextsLagAndWouldBeDropsAreExactlyTsharks) {
  if (geteuid() != 0) GTEST_SKIP() << "capturing on the loopback needs root";
  ASSERT_FALSE(common::FindProgram("tshark").empty()) << "tshark is not installed (make deps)";
  gss::Realm* realm = testing::SharedRealm();
  TempDir dir("secmode-trace-test");
  rpc::proc::ServeProcess serve;
  serve.Start(SECMODE_BIN, {"--seconds", "60", "--keytab", realm->service_keytab(), "--window",
                            "16", "--reaction", "drop"});
  ASSERT_NE(serve.port(), 0);
  const std::string port = std::to_string(serve.port());
  const std::string pcap = dir.path + "/load.pcap";
  Tcpdump capture("tcp port " + port, pcap);
  ASSERT_EQ(capture.error(), "");
  common::Command load;
  load.argv = {SECMODE_BIN, "load", "--port",        port, "--mode",  "krb5i",
               "--seconds", "1",    "--connections", "4",  "--slots", "64"};
  load.env = realm->Environment();
  load.log_path = dir.path + "/load.log";
  auto rc = common::RunAndWait(load, 120000);
  ASSERT_TRUE(rc.ok());
  ExpectNoDrop(capture.Stop());
  ASSERT_EQ(*rc, 0) << TextOf(load.log_path);

  const auto numbers = TsharkNumbers(pcap, port, dir.path + "/tshark.log");
  ASSERT_EQ(numbers.size(), 1u) << "one shared context";
  const nlohmann::json trace = Trace(pcap, port, dir.path + "/trace.log");
  ExpectTraceIsTsharks(trace, numbers);
  // The load did reorder its numbers over the connections: the comparison
  // above held lags, not only calls in order.
  ASSERT_TRUE(trace.is_object());
  EXPECT_GT(trace["contexts"][0]["lagging_calls"].get<uint64_t>(), 0u);
  EXPECT_EQ(trace["contexts"][0]["connections"].get<size_t>(), 4u);
  // Its INIT was captured: made in the capture, with the window serve
  // announced, after nothing.
  EXPECT_EQ(trace["contexts"][0]["created_in_capture"], true);
  EXPECT_EQ(trace["contexts"][0]["announced_window"], 16);
  EXPECT_EQ(trace["contexts"][0]["created_after"], "nothing");
  // krb5i leaves the arguments in clear: each COMPOUND is named by its
  // operations as tshark dissects them, and the session's slots are the ones
  // tshark reads in their SEQUENCEs.
  const TsharkCompounds ops = TsharkOps(pcap, port, dir.path + "/tshark-ops.log");
  ASSERT_FALSE(ops.by_ops.empty());
  std::map<std::string, uint64_t> traced;
  for (const auto& op : trace["operations"]) {
    const std::string name = op["operation"];
    if (name.rfind("NFSv4.1 ", 0) == 0) traced[name.substr(8)] += op["calls"].get<uint64_t>();
  }
  EXPECT_EQ(traced, ops.by_ops);
  ASSERT_EQ(trace["sessions"].size(), 1u);
  EXPECT_EQ(trace["sessions"][0]["slots_used"].get<size_t>(), ops.slots.size());
  ASSERT_FALSE(ops.slots.empty());
  EXPECT_EQ(trace["sessions"][0]["highest_slot"].get<uint32_t>(), *ops.slots.rbegin());
  // Every connection's handshake was captured (the side it guesses from
  // them on loopback is not asserted: both gaps are microseconds).
  EXPECT_GE(trace["side"]["handshakes"].get<size_t>(), 4u) << trace["side"].dump();
  // --out: a run directory whose results.json holds the same trace and whose
  // report draws it.
  common::Command out;
  out.argv = {SECMODE_BIN, "trace", pcap, "--rpc-port", port, "--out", dir.path + "/run"};
  out.log_path = dir.path + "/trace-out.log";
  auto wrote = common::RunAndWait(out, 120000);
  ASSERT_TRUE(wrote.ok() && *wrote == 0) << TextOf(out.log_path);
  const nlohmann::json saved =
      nlohmann::json::parse(TextOf(dir.path + "/run/results.json"), nullptr, false);
  ASSERT_TRUE(saved.is_object());
  EXPECT_EQ(saved["sections"]["trace"]["contexts"], trace["contexts"]);
  EXPECT_NE(TextOf(dir.path + "/run/report.md").find("secmode trace"), std::string::npos);
  EXPECT_NE(TextOf(dir.path + "/run/report.html")
                .find(trace["contexts"][0]["handle"].get<std::string>().substr(0, 8)),
            std::string::npos);

  // --simulate: the model of this load beside its trace, with the capture's
  // figures as they are, and its estimate of the calls the server's own
  // check found below the window (its threads reorder calls after they
  // arrive: more than the wire order shows), set beside the server's count.
  const nlohmann::json modelled =
      Trace(pcap, port, dir.path + "/trace-simulate.log", {"--simulate"});
  ASSERT_TRUE(modelled.is_object() && modelled.contains("model"))
      << TextOf(dir.path + "/trace-simulate.log");
  const nlohmann::json& model = modelled["model"];
  const nlohmann::json& context = trace["contexts"][0];
  EXPECT_EQ(model["context"], context["handle"]);
  EXPECT_EQ(model["calls"], context["calls"]);
  EXPECT_EQ(model["server"]["window"], 16);  // announced in the INIT's reply
  EXPECT_EQ(model["scenario"]["nconnect"], 4);
  // The slots its session's SEQUENCEs used, at most the load's 64.
  EXPECT_EQ(model["scenario"]["slots"], trace["sessions"][0]["slots_used"]);
  EXPECT_LE(model["scenario"]["slots"].get<int64_t>(), 64);
  EXPECT_EQ(model["lag"]["capture"], context["lag"]);
  size_t counted = 0;
  for (const auto& b : model["below_window"]) {
    if (b["capture"].is_null()) continue;
    EXPECT_EQ(b["capture"], context["below_window"][std::to_string(b["window"].get<uint32_t>())]);
    ++counted;
  }
  EXPECT_EQ(counted, trace["windows"].size());
  ASSERT_EQ(serve.Stop(), 0) << serve.Log();
  std::smatch said;
  const std::string served = serve.Log();
  ASSERT_TRUE(std::regex_search(served, said, std::regex("below window ([0-9]+)"))) << served;
  const nlohmann::json& estimate = model["server"]["model_drops"];
  ASSERT_TRUE(estimate.is_array() && estimate.size() == 2) << model.dump();
  EXPECT_LE(estimate[0].get<double>(), estimate[1].get<double>());
  EXPECT_LE(estimate[1].get<double>(), context["calls"].get<double>());
  RecordProperty("server_below_window_16", said[1].str());
  RecordProperty("capture_below_window_16", context["below_window"]["16"].dump());
  RecordProperty("model_sent_below_window_16", model["below_window"][0]["model_sent"].dump());
  RecordProperty("model_checked_below_window_16", estimate.dump());
  std::cout << "below a window of 16: the server counted " << said[1].str() << ", the capture "
            << context["below_window"]["16"].dump() << " in wire order, the model "
            << model["below_window"][0]["model_sent"].dump() << " as sent and " << estimate.dump()
            << " as the server checked\n";

  // Cut to 200 bytes a frame: a segment's first call keeps its header, the
  // calls after it in the same segment lose theirs. The trace still runs,
  // finds its place again after each, and says what it could not see.
  const std::string editcap = common::FindProgram("editcap");
  ASSERT_FALSE(editcap.empty())
      << "editcap is not installed (make deps: tshark's wireshark-common)";
  const std::string cut = dir.path + "/cut.pcap";
  common::Command snap;
  snap.argv = {editcap, "-s", "200", pcap, cut};
  snap.log_path = dir.path + "/editcap.log";
  auto snapped = common::RunAndWait(snap, 60000);
  ASSERT_TRUE(snapped.ok() && *snapped == 0) << TextOf(snap.log_path);
  const nlohmann::json cut_trace = Trace(cut, port, dir.path + "/trace-cut.log");
  ASSERT_TRUE(cut_trace.is_object());
  ASSERT_EQ(cut_trace["contexts"].size(), 1u);
  const nlohmann::json& whole = trace["contexts"][0];
  const nlohmann::json& part = cut_trace["contexts"][0];
  EXPECT_EQ(part["handle"], whole["handle"]);
  EXPECT_GT(part["calls"].get<uint64_t>(), 0u);
  EXPECT_LE(part["calls"].get<uint64_t>(), whole["calls"].get<uint64_t>());
  uint64_t lost_place = 0, uncaptured = 0;
  for (const auto& c : cut_trace["connections"]) {
    const auto& d = c["from_client"];
    lost_place += d["lost_place"].get<uint64_t>();
    uncaptured += d["bytes"].get<uint64_t>() - d["captured_bytes"].get<uint64_t>();
  }
  EXPECT_GT(uncaptured, 0u);
  if (part["calls"] != whole["calls"]) {
    EXPECT_GT(lost_place, 0u) << "calls went unseen, and the trace does not say it lost its place";
  }

  // Frames the capture lost: 20 in the middle of the load deleted. Where
  // nothing was retransmitted (the loopback, unless a busy machine's
  // backlog overflowed), what the trace says it lost is exactly their TCP
  // payload as tshark reads it; the rest is still read.
  auto sum = [](const nlohmann::json& t, const char* key) {
    uint64_t n = 0;
    for (const auto& c : t["connections"]) {
      n += c["from_client"][key].get<uint64_t>() + c["from_server"][key].get<uint64_t>();
    }
    return n;
  };
  const bool clean = sum(trace, "retransmitted_segments") == 0 && sum(trace, "lost_bytes") == 0;
  auto edit = [&](const std::string& tool, std::vector<std::string> args, const std::string& name) {
    common::Command c;
    c.argv = {common::FindProgram(tool)};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.log_path = dir.path + "/" + name + ".log";
    auto done = common::RunAndWait(c, 60000);
    EXPECT_TRUE(done.ok() && *done == 0) << c.ToString() << "\n" << TextOf(c.log_path);
  };
  const std::string frames = "301-320";
  // (A hole is known as one when bytes after it come: the frames are from
  // the middle of the load, none opens or ends a connection.)
  const auto removed = testing::RunTshark(
      pcap,
      {"-Y", "frame.number >= 301 && frame.number <= 320", "-T", "fields", "-e", "frame.number",
       "-e", "tcp.len", "-e", "tcp.flags.syn", "-e", "tcp.flags.fin"},
      dir.path + "/tshark-removed.log");
  ASSERT_EQ(removed.size(), 20u);
  uint64_t removed_bytes = 0, removed_with_data = 0;
  auto set = [](const std::string& flag) { return flag == "1" || flag == "True"; };
  for (const auto& row : removed) {
    ASSERT_EQ(row.size(), 4u);
    ASSERT_FALSE(set(row[2]) || set(row[3])) << "frame " << row[0] << " opens or ends a connection";
    removed_bytes += std::stoull(row[1]);
    removed_with_data += row[1] != "0";
  }
  ASSERT_GT(removed_bytes, 0u);
  const std::string dropped = dir.path + "/dropped.pcap";
  edit("editcap", {pcap, dropped, frames}, "editcap-drop");
  const nlohmann::json dropped_trace = Trace(dropped, port, dir.path + "/trace-dropped.log");
  ASSERT_TRUE(dropped_trace.is_object());
  ASSERT_EQ(dropped_trace["contexts"].size(), 1u);
  if (clean) {
    EXPECT_EQ(sum(dropped_trace, "lost_bytes"), removed_bytes);
  } else {
    EXPECT_GT(sum(dropped_trace, "lost_bytes"), sum(trace, "lost_bytes"));
  }
  EXPECT_GT(dropped_trace["contexts"][0]["calls"].get<uint64_t>(), 0u);
  EXPECT_LE(dropped_trace["contexts"][0]["calls"], whole["calls"]);

  // The same frames twice, each copy right after the last of them (the
  // capture's frames 1-320, 301-320 again, then the rest, concatenated in
  // that order whatever their time stamps): each copy is a segment seen
  // before, and the trace is the whole capture's.
  const std::string upto = dir.path + "/upto.pcap", again = dir.path + "/again.pcap",
                    rest = dir.path + "/rest.pcap", doubled = dir.path + "/doubled.pcap";
  const uint64_t all = trace["capture"]["frames"].get<uint64_t>();
  ASSERT_GT(all, 320u);
  edit("editcap", {"-r", pcap, upto, "1-320"}, "editcap-upto");
  edit("editcap", {"-r", pcap, again, frames}, "editcap-again");
  edit("editcap", {"-r", pcap, rest, "321-" + std::to_string(all)}, "editcap-rest");
  edit("mergecap", {"-a", "-w", doubled, upto, again, rest}, "mergecap");
  const nlohmann::json doubled_trace = Trace(doubled, port, dir.path + "/trace-doubled.log");
  ASSERT_TRUE(doubled_trace.is_object());
  EXPECT_EQ(doubled_trace["contexts"], trace["contexts"]);
  EXPECT_EQ(doubled_trace["operations"], trace["operations"]);
  EXPECT_EQ(doubled_trace["sessions"], trace["sessions"]);
  EXPECT_EQ(sum(doubled_trace, "lost_bytes"), sum(trace, "lost_bytes"));
  if (clean) {
    EXPECT_EQ(sum(doubled_trace, "retransmitted_segments"), removed_with_data);
  } else {
    EXPECT_GT(sum(doubled_trace, "retransmitted_segments"), sum(trace, "retransmitted_segments"));
  }

  // Stopped half-way (the first half of its frames kept): the trace reads
  // what there is, with the calls then in flight left outstanding, and it
  // is tshark's reading of the same half.
  const uint64_t half = trace["capture"]["frames"].get<uint64_t>() / 2;
  const std::string head = dir.path + "/head.pcap";
  edit("editcap", {"-r", pcap, head, "1-" + std::to_string(half)}, "editcap-head");
  const nlohmann::json head_trace = Trace(head, port, dir.path + "/trace-head.log");
  ASSERT_TRUE(head_trace.is_object());
  EXPECT_EQ(head_trace["capture"]["frames"].get<uint64_t>(), half);
  ASSERT_EQ(head_trace["contexts"].size(), 1u);
  EXPECT_GT(head_trace["contexts"][0]["calls"].get<uint64_t>(), 0u);
  EXPECT_LT(head_trace["contexts"][0]["calls"].get<uint64_t>(), whole["calls"].get<uint64_t>());
  ExpectTraceIsTsharks(head_trace, TsharkNumbers(head, port, dir.path + "/tshark-head.log"));
}

// A real server's traffic: secmode's NFSv4.1 client against the throwaway
// nfs-ganesha, in krb5, krb5i and krb5p, captured by tcpdump. Each context's
// numbers, lags and would-be drops are tshark's; under krb5 and krb5i every
// COMPOUND, the set-up's (EXCHANGE_ID, CREATE_SESSION, OPEN ...) and the
// load's, is named by the operations tshark dissects, and the load's
// session's slots are the ones tshark reads; under krb5p every COMPOUND is
// counted sealed and no session is seen.
TEST(TraceCaptureTest, AGaneshaSessionInEachModeIsWhatTsharkDissects) {
  if (geteuid() != 0) GTEST_SKIP() << "capturing on the loopback needs root";
  const common::Status why = rpc::Ganesha::Available();
  if (!why.ok()) GTEST_SKIP() << why.message();
  ASSERT_FALSE(common::FindProgram("tshark").empty()) << "tshark is not installed (make deps)";
  gss::Realm* realm = testing::SharedRealm();
  rpc::GaneshaOptions go;
  go.keytab = realm->service_keytab();
  go.env = realm->Environment();
  go.principals = {realm->user_principal()};
  auto ganesha = rpc::Ganesha::Start(go);
  ASSERT_TRUE(ganesha.ok()) << ganesha.status().ToString();
  rpc::Ganesha& g = **ganesha;
  const common::ByteView pattern = rpc::ReadPattern(0, rpc::kNfsFileSize);
  ASSERT_TRUE(common::WriteFileAtomically(
                  g.export_dir() + "/read",
                  std::string_view(reinterpret_cast<const char*>(pattern.data()), pattern.size()))
                  .ok());
  ASSERT_TRUE(common::WriteFileAtomically(g.export_dir() + "/write", "").ok());
  ASSERT_EQ(chmod((g.export_dir() + "/read").c_str(), 0644), 0);
  ASSERT_EQ(chmod((g.export_dir() + "/write").c_str(), 0666), 0);
  TempDir dir("secmode-trace-ganesha");
  const std::string port = std::to_string(g.port());
  for (rpc::Security mode : {rpc::Security::kKrb5, rpc::Security::kKrb5i, rpc::Security::kKrb5p}) {
    const std::string name = rpc::SecurityName(mode);
    SCOPED_TRACE(name);
    const std::string pcap = dir.path + "/" + name + ".pcap";
    Tcpdump capture("tcp port " + port, pcap);
    ASSERT_EQ(capture.error(), "");
    rpc::LoadOptions o;
    o.port = g.port();
    o.security = mode;
    o.ccache = realm->ccache();
    o.nfs41 = true;
    o.nfs41_options.read_file_has_pattern = true;
    o.op = rpc::NfsOp::kRead;
    o.size = 4096;
    o.connections = 2;
    o.slots = 8;
    o.seconds = 0.3;
    o.warmup_seconds = 0.1;
    auto r = rpc::RunLoad(o);
    ExpectNoDrop(capture.Stop());
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << g.Describe();
    ASSERT_GT(r->ops, 0u);

    const auto numbers = TsharkNumbers(pcap, port, pcap + ".tshark.log");
    ASSERT_FALSE(numbers.empty());
    const nlohmann::json trace = Trace(pcap, port, pcap + ".trace.log");
    ExpectTraceIsTsharks(trace, numbers);
    ASSERT_TRUE(trace.is_object());
    uint64_t compounds = 0, sealed = 0;
    std::map<std::string, uint64_t> traced;
    for (const auto& op : trace["operations"]) {
      const std::string op_name = op["operation"];
      if (op_name.rfind("NFSv4.1 ", 0) == 0)
        traced[op_name.substr(8)] += op["calls"].get<uint64_t>();
      if (op_name == "NFSv4 COMPOUND (sealed)") sealed += op["calls"].get<uint64_t>();
      if (op_name.rfind("NFSv4", 0) == 0 && op_name != "NFSv4 NULL") {
        compounds += op["calls"].get<uint64_t>();
      }
    }
    if (mode == rpc::Security::kKrb5p) {
      EXPECT_TRUE(traced.empty()) << trace["operations"].dump();
      EXPECT_GT(sealed, 0u);
      EXPECT_EQ(sealed, compounds);
      EXPECT_TRUE(trace["sessions"].empty());
      continue;
    }
    const TsharkCompounds ops = TsharkOps(pcap, port, pcap + ".tshark-ops.log");
    EXPECT_EQ(traced, ops.by_ops);
    EXPECT_EQ(sealed, 0u);
    EXPECT_GE(traced["EXCHANGE_ID"], 1u);
    EXPECT_GT(traced["SEQUENCE PUTFH READ"], 0u);
    // The set-up's session of one slot and the load's, each with the slots
    // tshark reads in its SEQUENCEs.
    ASSERT_EQ(trace["sessions"].size(), 2u);
    EXPECT_EQ(ops.frames_unpaired, 0u);
    ASSERT_EQ(ops.session_slots.size(), 2u);
    for (const auto& x : trace["sessions"]) {
      const std::string id = x["session"];
      ASSERT_TRUE(ops.session_slots.count(id)) << "session " << id << " is not tshark's";
      const std::set<uint32_t>& slots = ops.session_slots.at(id);
      EXPECT_EQ(x["slots_used"].get<size_t>(), slots.size()) << id;
      EXPECT_EQ(x["highest_slot"].get<uint32_t>(), *slots.rbegin()) << id;
    }
  }
}

}  // namespace
}  // namespace secmode
