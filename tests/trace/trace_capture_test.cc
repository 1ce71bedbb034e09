// `secmode trace` on real traffic: tcpdump captures `secmode load` (one
// RPCSEC_GSS context shared by 4 connections of 64 slots) against `secmode
// serve` with a window of 16 on loopback, and what the trace says of each
// context (its DATA calls, their lag behind the highest number before them,
// and the calls each window would have dropped in capture order) must be
// exactly what tshark's own fields of the same file give. The same capture
// cut to a snap length of 200 bytes by editcap is still read, and what it
// hides is said.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/files.h"
#include "common/subprocess.h"
#include "common/throwaway.h"
#include "tests/rpc/serve_process.h"
#include "tests/support/processes.h"
#include "tests/support/shared_realm.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tshark.h"

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

nlohmann::json Trace(const std::string& pcap, const std::string& port, const std::string& log) {
  common::Command c;
  c.argv = {SECMODE_BIN, "trace", pcap, "--rpc-port", port, "--json"};
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
  ASSERT_EQ(trace["contexts"].size(), numbers.size());
  for (const auto& x : trace["contexts"]) {
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

TEST(TraceCaptureTest, ASharedContextsLagAndWouldBeDropsAreExactlyTsharks) {
  if (geteuid() != 0) GTEST_SKIP() << "capturing on the loopback needs root";
  const std::string tcpdump = common::FindProgram("tcpdump");
  ASSERT_FALSE(tcpdump.empty()) << "tcpdump is not installed (make deps)";
  ASSERT_FALSE(common::FindProgram("tshark").empty()) << "tshark is not installed (make deps)";
  gss::Realm* realm = testing::SharedRealm();
  TempDir dir("secmode-trace-test");
  rpc::proc::ServeProcess serve;
  serve.Start(SECMODE_BIN, {"--seconds", "60", "--keytab", realm->service_keytab(), "--window",
                            "16", "--reaction", "drop"});
  ASSERT_NE(serve.port(), 0);
  const std::string port = std::to_string(serve.port());
  const std::string pcap = dir.path + "/load.pcap";
  common::Command capture;
  capture.argv = {tcpdump, "-i", "lo", "-n", "-U", "-B",
                  "16384", "-s", "0",  "-w", pcap, "tcp port " + port};
  capture.log_path = dir.path + "/tcpdump.log";
  // tcpdump dies with this test, also when it is killed (common/throwaway.h).
  auto reaper = common::Reaper::Start(dir.path, "tcpdump.pid", "secmode-trace-test-reaper");
  ASSERT_TRUE(reaper.ok()) << reaper.status().ToString();
  auto capturing = common::Spawn(capture);
  ASSERT_TRUE(capturing.ok()) << capturing.status().ToString();
  ASSERT_TRUE(
      common::WriteFileAtomically(dir.path + "/tcpdump.pid", std::to_string(*capturing)).ok());
  ASSERT_TRUE(testing::WaitUntil(
      [&] { return TextOf(capture.log_path).find("listening on") != std::string::npos; }, 10000))
      << TextOf(capture.log_path);
  common::Command load;
  load.argv = {SECMODE_BIN, "load", "--port",        port, "--mode",  "krb5i",
               "--seconds", "1",    "--connections", "4",  "--slots", "64"};
  load.env = realm->Environment();
  load.log_path = dir.path + "/load.log";
  auto rc = common::RunAndWait(load, 120000);
  ASSERT_TRUE(rc.ok());
  // The last packets reach tcpdump's file before it stops.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  common::Terminate(*capturing, 5000);
  (void)std::remove((dir.path + "/tcpdump.pid").c_str());
  // The comparison is exact, so it needs every packet: tcpdump says on exit
  // how many the kernel dropped (its buffer, -B, is 16 MiB for a load of a
  // few MB).
  const std::string said = TextOf(capture.log_path);
  ASSERT_NE(said.find("\n0 packets dropped by kernel"), std::string::npos) << said;
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
}

}  // namespace
}  // namespace secmode
