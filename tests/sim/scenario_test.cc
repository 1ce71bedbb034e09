#include "sim/scenario.h"

#include <gtest/gtest.h>

#include <functional>

namespace secmode::sim {
namespace {

// Applies `change` to a default scenario and expects Validate to refuse it
// with a message that names `param`.
void ExpectRejected(const char* param, const std::function<void(Scenario&)>& change) {
  Scenario s;
  change(s);
  common::Status st = s.Validate();
  EXPECT_FALSE(st.ok()) << param;
  EXPECT_EQ(st.code(), common::Code::kInvalidArgument) << param;
  EXPECT_NE(st.message().find(param), std::string::npos) << param << ": " << st.message();
}

TEST(ScenarioTest, DefaultIsValid) { EXPECT_TRUE(Scenario().Validate().ok()); }

TEST(ScenarioTest, RejectsInvalidParametersNamingThem) {
  ExpectRejected("nconnect", [](Scenario& s) { s.nconnect = 0; });
  ExpectRejected("nconnect", [](Scenario& s) { s.nconnect = -3; });
  ExpectRejected("nconnect", [](Scenario& s) { s.nconnect = kMaxConnections + 1; });
  ExpectRejected("window", [](Scenario& s) { s.window = 0; });
  ExpectRejected("window", [](Scenario& s) { s.window = kMaxWindow + 1; });
  ExpectRejected("slots", [](Scenario& s) { s.slots = 0; });
  ExpectRejected("slots", [](Scenario& s) { s.slots = kMaxSlots + 1; });
  // Within the slot limit but more buffer memory than allowed: 1 MiB I/O x 8192.
  ExpectRejected("slots", [](Scenario& s) {
    s.slots = 8192;
    s.io_size = 1 << 20;
  });
  ExpectRejected("rtt-ns", [](Scenario& s) { s.rtt_ns = -1; });
  ExpectRejected("jitter-ns", [](Scenario& s) { s.jitter_ns = -5; });
  ExpectRejected("skew-ns", [](Scenario& s) { s.skew_ns = -1000; });
  ExpectRejected("service-ns", [](Scenario& s) { s.service_ns = -1; });
  ExpectRejected("gss-setup-ns", [](Scenario& s) { s.gss_setup_ns = -1; });
  ExpectRejected("reconnect-ns", [](Scenario& s) { s.reconnect_ns = -1; });
  ExpectRejected("retransmit-timeout-ns", [](Scenario& s) { s.retransmit_timeout_ns = 0; });
  ExpectRejected("skew-conn", [](Scenario& s) { s.skew_conn = 4; });  // nconnect is 4
  ExpectRejected("io-size", [](Scenario& s) { s.io_size = -1; });
  ExpectRejected("bandwidth", [](Scenario& s) { s.bandwidth_bytes_per_s = 0; });
  ExpectRejected("cost-ns-per-byte", [](Scenario& s) { s.cost_ns_per_byte = -0.5; });
  ExpectRejected("cost-fixed-ns", [](Scenario& s) { s.cost_fixed_ns = std::nan(""); });
  ExpectRejected("server-threads", [](Scenario& s) { s.server_threads = 0; });
  ExpectRejected("spread-cap", [](Scenario& s) { s.spread_cap = -1; });
  ExpectRejected("ops", [](Scenario& s) { s.ops = 0; });
  ExpectRejected("duration-ns", [](Scenario& s) { s.duration_ns = -1; });
}

TEST(ScenarioTest, NegativeDelayMessageSaysNegative) {
  Scenario s;
  s.rtt_ns = -7;
  EXPECT_EQ(s.Validate().message(), "rtt-ns: -7, must not be negative");
}

TEST(ScenarioTest, ParsesNamesAndRejectsUnknown) {
  EXPECT_EQ(*rpc::ParseWindowPolicy("drop"), rpc::WindowPolicy::kDrop);
  EXPECT_EQ(*rpc::ParseWindowPolicy("drop-disconnect"), rpc::WindowPolicy::kDropDisconnect);
  EXPECT_EQ(*rpc::ParseWindowPolicy("discard-context"), rpc::WindowPolicy::kDiscardContext);
  auto bad = rpc::ParseWindowPolicy("reset");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("reaction: unknown value 'reset'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("discard-context"), std::string::npos);
  EXPECT_FALSE(ParseOp("delete").ok());
  EXPECT_FALSE(ParseDist("gaussian").ok());
  EXPECT_FALSE(ParseSkewWhere("server").ok());
  EXPECT_EQ(*ParseServerOrder("round-robin"), ServerOrder::kRoundRobin);
  auto order = ParseServerOrder("lifo");
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("server-order: unknown value 'lifo'"), std::string::npos);
  EXPECT_EQ(*ParseDist("lognormal"), Dist::kLogNormal);
}

TEST(ScenarioTest, JsonRoundTrip) {
  Scenario s;
  s.nconnect = 8;
  s.slots = 300;
  s.reaction = rpc::WindowPolicy::kDiscardContext;
  s.op = Op::kWrite;
  s.skew_where = SkewWhere::kNetwork;
  s.skew_conn = 7;
  s.jitter_dist = Dist::kLogNormal;
  s.seed = 0xdeadbeefcafeULL;
  s.reencode = true;
  s.server_order = ServerOrder::kRoundRobin;
  auto back = ScenarioFromJson(s.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), s.ToJson());
  auto bad = ScenarioFromJson({{"window", 0}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("window"), std::string::npos);
  auto wrong_type = ScenarioFromJson({{"reaction", 3}});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.status().message().find("reaction"), std::string::npos);
}

TEST(ScenarioTest, ResultJsonRoundTrip) {
  ScenarioResult r;
  r.seed = 9;
  r.completed = 100;
  r.violations = 3;
  r.ops_per_s = 1234.5;
  r.stalled_fraction = 0.25;
  r.truncated = true;
  auto back = ScenarioResultFromJson(r.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->ToJson(), r.ToJson());
}

TEST(ScenarioTest, MessageBytesFollowOp) {
  Scenario s;
  s.io_size = 4096;
  s.op = Op::kRead;
  EXPECT_EQ(s.RequestBytes(), kRequestOverhead);
  EXPECT_EQ(s.ReplyBytes(), kReplyOverhead + 4096);
  s.op = Op::kWrite;
  EXPECT_EQ(s.RequestBytes(), kRequestOverhead + 4096);
  EXPECT_EQ(s.ReplyBytes(), kReplyOverhead);
}

}  // namespace
}  // namespace secmode::sim
