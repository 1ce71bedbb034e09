// The workload model: MVA against closed forms, the legs' extra cost
// against hand-computed demands, and each limit (CPU, link, TCP window,
// slots) where it binds.
#include "sim/workload_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/scenario.h"

namespace secmode::sim {
namespace {

TEST(WorkloadModelTest, CostCurveInterpolatesAndExtends) {
  const CostCurve c = {{128, 100.0}, {4096, 500.0}, {65536, 5500.0}};
  EXPECT_DOUBLE_EQ(*CostAt(c, 0), 100.0);  // below the smallest size
  EXPECT_DOUBLE_EQ(*CostAt(c, 128), 100.0);
  EXPECT_DOUBLE_EQ(*CostAt(c, 2112), 300.0);  // half way from 128 to 4096
  EXPECT_DOUBLE_EQ(*CostAt(c, 65536), 5500.0);
  // Beyond: the slope of the last two sizes.
  const double slope = (5500.0 - 500.0) / (65536 - 4096);
  EXPECT_NEAR(*CostAt(c, 131072), 5500.0 + slope * 65536, 1e-6);
  EXPECT_FALSE(CostAt(CostCurve{}, 10).ok());
}

TEST(WorkloadModelTest, MvaMatchesClosedForms) {
  // One queue of 1 ms and a 9 ms delay: N = 1 -> X = 1/10 ms; large N ->
  // X tends to 1/D = 1000/s.
  const std::vector<Station> net = {{"cpu", 1e-3, 1, false}, {"think", 9e-3, 1, true}};
  MvaResult one = SolveClosedMva(net, 1);
  EXPECT_NEAR(one.throughput, 100.0, 1e-9);
  EXPECT_NEAR(one.response_s, 10e-3, 1e-12);
  MvaResult many = SolveClosedMva(net, 200);
  EXPECT_NEAR(many.throughput, 1000.0, 1e-6);
  EXPECT_NEAR(many.utilisation[0], 1.0, 1e-6);
  // Two customers, exact MVA by hand: R(2) = 1 ms x (1 + Q(1)) + 9 ms with
  // Q(1) = 0.1 -> R = 10.1 ms, X = 2 / 10.1 ms.
  MvaResult two = SolveClosedMva(net, 2);
  EXPECT_NEAR(two.throughput, 2 / 10.1e-3, 1e-6);
  // Four servers of 4 ms each saturate at 1000/s too.
  MvaResult multi = SolveClosedMva({{"cpu", 4e-3, 4, false}}, 500);
  EXPECT_NEAR(multi.throughput, 1000.0, 1e-3);
}

LegCosts Legs(const std::string& mode, double fixed_ns, double ns_per_byte) {
  LegCosts l;
  l.mode = mode;
  if (mode != "sys") {
    l.engine = "native";
    l.enctype = "aes256-cts-hmac-sha1-96";
  }
  for (const char* leg : {"client-seal", "server-open", "server-seal", "client-open"}) {
    for (int64_t size : {int64_t{128}, int64_t{4096}, int64_t{1} << 20}) {
      l.legs[leg][size] = fixed_ns + ns_per_byte * static_cast<double>(size);
    }
  }
  return l;
}

Environment Env(double op_ns) {
  Environment e;
  for (CostCurve* c : {&e.client.read, &e.client.write, &e.client.metadata, &e.server.read,
                       &e.server.write, &e.server.metadata}) {
    (*c)[0] = op_ns;
  }
  e.client_cores = e.server_cores = 1;
  e.tcp_window_bytes = 0;
  return e;
}

TEST(WorkloadModelTest, TheLegsExtraCostIsAddedAtEachMessagesPayload) {
  // sys legs cost 100 ns; krb5p 1100 ns + 1 ns/byte. 4 KiB randread,
  // saturated (iodepth 64, async), one core each end, 10 us per op each end.
  Workload w;
  w.rw = Rw::kRandRead;
  w.bs = 4096;
  w.iodepth = 64;
  w.engine = EngineClass::kAsync;
  const LegCosts sys = Legs("sys", 100, 0), krb5p = Legs("krb5p", 1100, 1);
  auto p = PredictWorkload(w, Env(10000), sys, {krb5p});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->size(), 2u);
  // Two balanced queues of demand D with N customers: X = N / ((N + 1) D)
  // exactly. sys: 10 us at each end.
  EXPECT_NEAR((*p)[0].iops, 64.0 / 65 * 1e5, 1e-6);
  // krb5p client: call leg at 128 B (+1128 - 100), reply leg at 4 KiB
  // (+5196 - 100): 16.124 us; server the same -> 1/16.124 us.
  const double client_us = 10 + (1228 - 100) / 1e3 + (5196 - 100) / 1e3;
  EXPECT_NEAR((*p)[1].stations[0].demand_s * 1e6, client_us, 1e-9);
  EXPECT_NEAR((*p)[1].iops, 64.0 / 65 * 1e6 / client_us, 1e-6);
  EXPECT_NEAR((*p)[1].iops_change_pct, (10 / client_us - 1) * 100, 0.2);
  EXPECT_GT((*p)[1].latency_change_ms, 0);
  EXPECT_EQ((*p)[1].mode, "krb5p:aes256-cts-hmac-sha1-96:native");
}

TEST(WorkloadModelTest, LinkAndTcpWindowBindWhereTheyShould) {
  Workload w;
  w.rw = Rw::kRead;
  w.bs = 1 << 20;
  w.iodepth = 32;
  w.engine = EngineClass::kAsync;
  const LegCosts sys = Legs("sys", 100, 0);
  Environment env = Env(1000);
  env.s2c_bytes_per_s = 125e6;  // 1 Gbit/s
  auto p = PredictWorkload(w, env, sys, {});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)[0].bottleneck, "link s->c");
  EXPECT_NEAR((*p)[0].iops, 125e6 / ((1 << 20) + kReplyOverhead), 0.5);
  // A 20 ms round trip and a 1 MiB window on one connection: 50 windows/s.
  env.s2c_bytes_per_s = 0;
  env.rtt_ns = 20000000;
  env.tcp_window_bytes = 1 << 20;
  p = PredictWorkload(w, env, sys, {});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE((*p)[0].tcp_window_limited);
  EXPECT_EQ((*p)[0].bottleneck, "tcp window");
  EXPECT_NEAR((*p)[0].iops, 50.0 * (1 << 20) / ((1 << 20) + kReplyOverhead), 1e-6);
  // Little's law over all 32 I/Os in flight.
  EXPECT_NEAR((*p)[0].mean_latency_s, 32 / (*p)[0].iops, 1e-12);
  EXPECT_GE((*p)[0].p99_latency_s, (*p)[0].mean_latency_s);
}

// SMB modes are taken against smb-plain, with their own bytes on the wire,
// and never mixed with NFS's.
TEST(WorkloadModelTest, SmbModesAreTakenAgainstSmbPlainWithTheirOwnHeaders) {
  auto smb = [](const std::string& mode, double fixed_ns) {
    LegCosts l = Legs(mode, fixed_ns, 0);
    l.engine = "openssl";
    l.enctype = "";
    l.wire = {116, mode.rfind("smb-enc-", 0) == 0 ? 136 : 84};
    return l;
  };
  const LegCosts plain = smb("smb-plain", 50), sign = smb("smb-sign-aes-gmac", 550),
                 enc = smb("smb-enc-aes-128-gcm", 1050);
  EXPECT_TRUE(IsSmbMode("smb-plain"));
  EXPECT_FALSE(IsSmbMode("krb5p"));
  EXPECT_EQ(BaselineOf("smb-enc-aes-256-ccm"), "smb-plain");
  EXPECT_EQ(BaselineOf("krb5i"), "sys");
  EXPECT_EQ(Legs("sys", 100, 0).wire.call, kRequestOverhead);  // RPC's unless set
  Workload w;
  w.rw = Rw::kRead;
  w.bs = 1 << 20;
  w.iodepth = 32;
  w.engine = EngineClass::kAsync;
  Environment env = Env(1000);
  // CPU-bound first: each mode's four legs cost (fixed - 50) ns more than
  // smb-plain's, two on each end.
  auto p = PredictWorkload(w, env, plain, {sign, enc});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->size(), 3u);
  EXPECT_EQ((*p)[0].mode, "smb-plain");
  EXPECT_EQ((*p)[2].mode, "smb-enc-aes-128-gcm");
  EXPECT_NEAR((*p)[1].stations[0].demand_s * 1e9, 1000 + 2 * 500, 1e-6);
  EXPECT_NEAR((*p)[2].stations[0].demand_s * 1e9, 1000 + 2 * 1000, 1e-6);
  EXPECT_LT((*p)[2].iops_change_pct, (*p)[1].iops_change_pct);
  EXPECT_LT((*p)[1].iops_change_pct, 0);
  // Link-bound: 1 MiB responses over 1 Gbit/s, each with its own headers.
  env.s2c_bytes_per_s = 125e6;
  p = PredictWorkload(w, env, plain, {sign, enc});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)[2].bottleneck, "link s->c");
  EXPECT_NEAR((*p)[1].iops, 125e6 / ((1 << 20) + 84), 0.5);  // each mode's own wire bytes
  EXPECT_NEAR((*p)[2].iops, 125e6 / ((1 << 20) + 136), 0.5);
  // A server serving on one thread has one server CPU, whatever its cores.
  env.s2c_bytes_per_s = 0;
  env.client_cores = 4;
  env.server_cores = 2;
  Environment one = env;
  one.server_threads = 1;
  auto two_cores = PredictWorkload(w, env, plain, {enc});
  auto one_thread = PredictWorkload(w, one, plain, {enc});
  ASSERT_TRUE(two_cores.ok() && one_thread.ok());
  EXPECT_EQ((*one_thread)[1].bottleneck, "server CPU");
  // Saturated: just under 1 / 3 us, the server's demand (1 us + two legs).
  EXPECT_LT((*one_thread)[1].iops, 1e9 / 3000);
  EXPECT_GT((*one_thread)[1].iops, 0.95e9 / 3000);
  EXPECT_GT((*two_cores)[1].iops, 1.5 * (*one_thread)[1].iops);
  one.server_threads = -1;
  EXPECT_FALSE(PredictWorkload(w, one, plain, {enc}).ok());
  env.client_cores = env.server_cores = 1;
  // A protocol cost measured at one size is used at that size only.
  Environment measured_once = env;
  measured_once.client.read = measured_once.server.read = {{4096, 20000.0}};
  auto once = PredictWorkload(w, measured_once, plain, {enc});
  ASSERT_FALSE(once.ok());
  EXPECT_NE(once.status().message().find("measured at 4096 bytes only, not at 1048576"),
            std::string::npos);
  w.bs = 4096;
  EXPECT_TRUE(PredictWorkload(w, measured_once, plain, {enc}).ok());
  w.bs = 1 << 20;
  // One protocol at a time.
  auto mixed = PredictWorkload(w, env, plain, {Legs("krb5p", 1100, 1)});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("predict NFS and SMB modes apart"), std::string::npos);
  EXPECT_FALSE(PredictWorkload(w, env, Legs("sys", 100, 0), {enc}).ok());
  EXPECT_FALSE(PredictWorkload(w, env, sign, {}).ok());  // not a baseline
}

TEST(WorkloadModelTest, CallsBeyondTheSlotsWaitInTheClient) {
  Workload w;
  w.rw = Rw::kMetadata;
  w.iodepth = 256;
  w.engine = EngineClass::kAsync;
  Environment env = Env(1000);
  env.rtt_ns = 1000000;  // 1 ms: the round trip bounds the rate
  env.slots = 16;
  auto p = PredictWorkload(w, env, Legs("sys", 100, 0), {});
  ASSERT_TRUE(p.ok());
  // 16 on the wire over ~1.002 ms -> ~15.97 k/s; latency over all 256.
  EXPECT_NEAR((*p)[0].iops, 16 / 1.002e-3, 20);
  EXPECT_NEAR((*p)[0].mean_latency_s, 256 / (*p)[0].iops, 1e-12);
  EXPECT_EQ((*p)[0].bottleneck, "latency");
}

TEST(WorkloadModelTest, BadInputIsNamed) {
  Workload w;
  Environment env = Env(1000);
  env.rtt_ns = -1;
  auto p = PredictWorkload(w, env, Legs("sys", 100, 0), {});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("rtt"), std::string::npos);
  env = Env(1000);
  w.bs = 0;
  p = PredictWorkload(w, env, Legs("sys", 100, 0), {});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("bs"), std::string::npos);
  // A mode without a leg's costs names the mode and the leg.
  w = Workload();
  LegCosts broken = Legs("krb5i", 500, 0);
  broken.legs.erase("server-seal");
  p = PredictWorkload(w, env, Legs("sys", 100, 0), {broken});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().ToString().find("server-seal"), std::string::npos) << p.status().ToString();
  EXPECT_NE(p.status().ToString().find("krb5i"), std::string::npos);
  // No protocol cost for the op.
  env.client.read.clear();
  p = PredictWorkload(w, env, Legs("sys", 100, 0), {});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().ToString().find("client protocol cost of read"), std::string::npos);
}

}  // namespace
}  // namespace secmode::sim
