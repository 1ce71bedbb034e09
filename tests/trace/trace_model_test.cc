// trace/trace_model.h on a trace made by hand: the scenario each field of
// the trace gives, the errors when it gives none, the model beside the
// trace in JSON, and that part of the report drawn from results.json alone.
#include "trace/trace_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "harness/results.h"
#include "render/report.h"

namespace secmode::trace {
namespace {

// Five connections of one integrity context over a second, four open at
// once (the first ends before the fifth begins); the fourth lags ten numbers
// behind on average, the others one; 48 calls in flight at most; its INIT's
// reply announced a window of 32; the server closed the first connection
// with two calls outstanding; WRITEs of 4096 bytes answered in 300 us at the capture point;
// three handshakes with a round trip of 100 us between SYN and SYN-ACK.
RpcTrace ModelTrace5() {
  RpcTrace t;
  for (int i = 0; i < 5; ++i) {
    ConnectionTrace& c = t.connections.emplace_back();
    c.first_ts_ns = i == 4 ? 600000000 : 0;
    c.last_ts_ns = i == 0 ? 500000000 : 1000000000;
    c.replies = 200;
    c.data_calls = 200;
    c.data_lag_total = i == 3 ? 2000 : 200;
    if (i < 3) {
      c.syn_to_synack_ns = 100000;
      c.synack_to_ack_ns = 5000;
    }
  }
  t.connections[0].closed = true;
  t.connections[0].ended_by_server = true;
  t.connections[0].outstanding_at_end = 2;
  t.connections[0].passed_over = 2;
  ContextTrace& x = t.contexts.emplace_back();
  x.handle = "00112233445566778899aabbccddeeff";
  x.service = "integrity";
  x.calls = 1000;
  x.connections = {0, 1, 2, 3, 4};
  x.most_in_flight = 48;
  x.created = true;
  x.announced_window = 32;
  x.below_window = {{16, 7}, {64, 1}};
  for (int i = 0; i < 1000; ++i) x.lag.Add(static_cast<uint64_t>(i % 20));
  x.max_lag = 19;
  OperationTrace& op = t.operations[{"NFSv4.1 SEQUENCE PUTFH WRITE", "rpcsec_gss integrity"}];
  op.calls = op.replies = 1000;
  op.call_bytes = 1000 * (4096 + sim::kRequestOverhead);
  op.reply_bytes = 1000 * sim::kReplyOverhead;
  for (int i = 0; i < 1000; ++i) op.response_ns.Add(300000);
  return t;
}

std::string ValueOf(const TraceScenario& s, const std::string& parameter) {
  for (const TraceAssumption& a : s.assumptions) {
    if (a.parameter == parameter) return a.value + ": " + a.from;
  }
  return "";
}

TEST(TraceModelTest, TheScenarioIsWhatTheTraceShowsWithEachAssumptionStated) {
  RpcTrace t = ModelTrace5();
  auto s = ScenarioFromTrace(t, CaptureSide::kClient, 0, sim::Scenario());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->context, 0u);
  EXPECT_EQ(s->scenario.nconnect, 4) << ValueOf(*s, "nconnect");
  EXPECT_FALSE(s->scenario.per_connection_context);
  EXPECT_EQ(s->scenario.slots, 48);
  EXPECT_EQ(s->scenario.rtt_ns, 105000);
  // Less the round trip on a client; an exponential time of that median.
  EXPECT_EQ(s->scenario.service_ns, std::llround((300000 - 105000) / std::log(2.0)));
  EXPECT_EQ(s->scenario.op, sim::Op::kWrite);
  EXPECT_EQ(s->scenario.io_size, 4096);
  EXPECT_EQ(s->scenario.window, 32);
  EXPECT_EQ(s->scenario.reaction, rpc::WindowPolicy::kDropDisconnect);
  // Nine numbers more behind than the others, a millisecond between calls.
  EXPECT_EQ(s->scenario.skew_ns, 9000000) << ValueOf(*s, "skew");
  EXPECT_EQ(s->scenario.skew_where, sim::SkewWhere::kClient);
  EXPECT_EQ(s->scenario.ops, 20000);
  EXPECT_DOUBLE_EQ(s->calls_per_s, 1000);
  for (const char* p : {"context", "nconnect", "slots", "rtt", "service", "io", "skew", "window",
                        "reaction", "retransmit timeout", "re-encode", "the rest", "operations"}) {
    EXPECT_NE(ValueOf(*s, p), "") << p;
  }
  EXPECT_NE(ValueOf(*s, "window").find("announced"), std::string::npos);
  EXPECT_NE(ValueOf(*s, "reaction").find("the server ended 1 of its connections"),
            std::string::npos);
  EXPECT_TRUE(s->scenario.Validate().ok());

  // On the server's side the response time holds no round trip.
  auto server = ScenarioFromTrace(t, CaptureSide::kServer, 0, sim::Scenario());
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(server->scenario.service_ns, std::llround(300000 / std::log(2.0)));
  // A window not announced in the capture: the one given, else 128.
  t.contexts[0].created = false;
  auto given = ScenarioFromTrace(t, CaptureSide::kClient, 64, sim::Scenario());
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->scenario.window, 64);
  auto assumed = ScenarioFromTrace(t, CaptureSide::kClient, 0, sim::Scenario());
  ASSERT_TRUE(assumed.ok());
  EXPECT_EQ(assumed->scenario.window, kAssumedWindow);
  // The client ended it: calls never answered on a connection that stayed
  // up are dropped calls.
  t.connections[0].ended_by_server = false;
  auto drops = ScenarioFromTrace(t, CaptureSide::kClient, 0, sim::Scenario());
  ASSERT_TRUE(drops.ok());
  EXPECT_EQ(drops->scenario.reaction, rpc::WindowPolicy::kDrop) << ValueOf(*drops, "reaction");
  // Calls merely in flight where the capture stops (none passed over) say
  // nothing of drops.
  t.connections[0].passed_over = 0;
  auto open = ScenarioFromTrace(t, CaptureSide::kClient, 0, sim::Scenario());
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->scenario.reaction, rpc::WindowPolicy::kDropDisconnect);
  EXPECT_NE(ValueOf(*open, "reaction").find("no call of it was dropped"), std::string::npos);
  // An NFSv4.1 session over its connections: the slots its SEQUENCEs used.
  SessionTrace& session = t.sessions.emplace_back();
  session.calls = 900;
  session.connections = {2};
  session.slots_used = 32;
  auto slotted = ScenarioFromTrace(t, CaptureSide::kClient, 0, sim::Scenario());
  ASSERT_TRUE(slotted.ok());
  EXPECT_EQ(slotted->scenario.slots, 32);
  EXPECT_NE(ValueOf(*slotted, "slots").find("session"), std::string::npos);
  // Context-problem replies: the server discards the context.
  t.contexts[0].context_problems = 3;
  auto discards = ScenarioFromTrace(t, CaptureSide::kClient, 0, sim::Scenario());
  ASSERT_TRUE(discards.ok());
  EXPECT_EQ(discards->scenario.reaction, rpc::WindowPolicy::kDiscardContext);
  // No connection behind the others: no skew.
  for (ConnectionTrace& c : t.connections) c.data_lag_total = 200;
  auto even = ScenarioFromTrace(t, CaptureSide::kClient, 0, sim::Scenario());
  ASSERT_TRUE(even.ok());
  EXPECT_EQ(even->scenario.skew_ns, 0);
}

TEST(TraceModelTest, NoDataCallOrNoReplyIsAnErrorSayingWhatIsMissing) {
  RpcTrace none;
  auto s = ScenarioFromTrace(none, CaptureSide::kUnknown, 0, sim::Scenario());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("no RPCSEC_GSS DATA call"), std::string::npos);
  RpcTrace one_way = ModelTrace5();
  one_way.operations.begin()->second.replies = 0;
  s = ScenarioFromTrace(one_way, CaptureSide::kUnknown, 0, sim::Scenario());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("capture both directions"), std::string::npos);
  RpcTrace fine = ModelTrace5();
  auto from = ScenarioFromTrace(fine, CaptureSide::kClient, 0, sim::Scenario());
  ASSERT_TRUE(from.ok());
  EXPECT_FALSE(ModelTrace(*from, 0, false).ok());  // no seed
}

TEST(TraceModelTest, TheModelStandsBesideTheTraceInJsonAndInTheReport) {
  RpcTrace t = ModelTrace5();
  auto s = ScenarioFromTrace(t, CaptureSide::kClient, 0, sim::Scenario());
  ASSERT_TRUE(s.ok());
  auto m = ModelTrace(*s, 2, false);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->runs.size(), 2u);
  EXPECT_EQ(m->runs[0].seed, 1u);
  EXPECT_EQ(m->runs[1].seed, 2u);
  const nlohmann::json j = TraceModelJson(t, *m, {16, 64});
  EXPECT_EQ(j["context"], "00112233445566778899aabbccddeeff");
  EXPECT_EQ(j["seeds"], 2);
  EXPECT_EQ(j["lag"]["capture"]["max"], 19);
  // The capture's counts per window; the server's 32 is modelled, not traced.
  ASSERT_EQ(j["below_window"].size(), 3u);
  EXPECT_EQ(j["below_window"][0]["window"], 16);
  EXPECT_EQ(j["below_window"][0]["capture"], 7);
  EXPECT_EQ(j["below_window"][1]["window"], 32);
  EXPECT_TRUE(j["below_window"][1]["capture"].is_null());
  EXPECT_EQ(j["below_window"][2]["capture"], 1);
  EXPECT_EQ(j["server"]["window"], 32);
  EXPECT_EQ(j["server"]["model_drops"], j["below_window"][1]["model_checked"]);
  // The model's drops scaled to the context's 1000 calls: the violations of
  // the run over the calls it checked.
  const sim::ScenarioResult& r = m->runs[0];
  int64_t checked = 0;
  for (int64_t n : r.checked_lags) checked += n;
  ASSERT_GT(checked, 0);
  const double expected = std::round(static_cast<double>(r.violations) * 1000 / checked);
  const double lo = j["server"]["model_drops"][0], hi = j["server"]["model_drops"][1];
  EXPECT_LE(lo, expected);
  EXPECT_GE(hi, expected);
  EXPECT_GT(j["rate"]["model_calls_per_s"][0].get<double>(), 0);
  EXPECT_NE(TraceModelText(j).find("the server's window 32 (drop-disconnect)"), std::string::npos)
      << TraceModelText(j);

  // The report draws it from results.json; a crafted string stays text.
  harness::RunResults written;
  written.command = "secmode trace test.pcap --simulate --out DIR";
  written.sections[render::kTraceSection] = TraceJson(t, TraceOptions());
  written.sections[render::kTraceSection]["model"] = j;
  auto read = harness::ReadResultsJson(harness::ToJson(written).dump());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  auto drawn = render::RenderRun(*read);
  ASSERT_TRUE(drawn.ok()) << drawn.status().ToString();
  const std::string& md = drawn->report_md;
  EXPECT_NE(md.find("### The model beside the capture (--simulate)"), std::string::npos) << md;
  EXPECT_NE(md.find("| slots | 48 | the most of its calls in flight as one was sent (no SEQUENCE "
                    "in clear; a call never answered counts until its connection ends) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 16 | 7 | "), std::string::npos) << md;
  EXPECT_NE(md.find("| 32 | - | "), std::string::npos) << md;
  read->sections[render::kTraceSection]["model"]["assumptions"][0]["from"] = "a|b<img src=x>";
  read->sections[render::kTraceSection]["model"]["below_window"][0]["model_sent"] = "x";
  auto crafted = render::RenderRun(*read);
  ASSERT_TRUE(crafted.ok()) << crafted.status().ToString();
  EXPECT_NE(crafted->report_md.find("a\\|b\\<img src=x\\> |"), std::string::npos)
      << crafted->report_md;
  EXPECT_NE(crafted->report_md.find("| 16 | 7 | - | "), std::string::npos) << crafted->report_md;
}

}  // namespace
}  // namespace secmode::trace
