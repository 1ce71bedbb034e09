#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/random.h"

namespace secmode::sim {
namespace {

ScenarioResult SimOk(const Scenario& s) {
  auto r = Simulate(s);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ScenarioResult();
}

// Slots far above the window and one lagging connection: the situation the
// shared sequence window is feared for.
Scenario Lagging(int64_t skew_ns) {
  Scenario s;
  s.nconnect = 4;
  s.slots = 256;
  s.window = 32;
  s.skew_ns = skew_ns;
  s.reaction = rpc::WindowPolicy::kDrop;
  s.retransmit_timeout_ns = 10000000;
  s.ops = 10000;
  return s;
}

TEST(SimulatorTest, RejectsInvalidScenario) {
  Scenario s;
  s.nconnect = 0;
  auto r = Simulate(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nconnect"), std::string::npos);
}

TEST(SimulatorTest, SameSeedSameResultBitForBit) {
  for (rpc::WindowPolicy reaction : {rpc::WindowPolicy::kDrop, rpc::WindowPolicy::kDropDisconnect,
                                     rpc::WindowPolicy::kDiscardContext}) {
    Scenario s = Lagging(1000000);
    s.reaction = reaction;
    s.seed = 77;
    s.jitter_dist = Dist::kLogNormal;
    ScenarioResult a = SimOk(s), b = SimOk(s);
    EXPECT_EQ(a.ToJson().dump(), b.ToJson().dump()) << rpc::WindowPolicyName(reaction);
    EXPECT_EQ(a.seed, 77u);
    EXPECT_EQ(a.ops_per_s, b.ops_per_s);  // exact, not near
    s.seed = 78;
    ScenarioResult c = SimOk(s);
    EXPECT_EQ(c.seed, 78u);
    EXPECT_NE(a.ToJson().dump(), c.ToJson().dump()) << rpc::WindowPolicyName(reaction);
    EXPECT_NE(a.p99_ns, c.p99_ns);  // random delays differ
  }
}

TEST(SimulatorTest, ConstantDelaysDoNotDependOnSeed) {
  // With no randomness in the model, the seed must not matter.
  Scenario s;
  s.jitter_dist = Dist::kConstant;
  s.service_dist = Dist::kConstant;
  s.ops = 3000;
  ScenarioResult a = SimOk(s);
  s.seed = 12345;
  ScenarioResult b = SimOk(s);
  EXPECT_EQ(a.elapsed_ns, b.elapsed_ns);
  EXPECT_EQ(a.p999_ns, b.p999_ns);
}

TEST(SimulatorTest, WindowAtLeastSlotsSharedContextNoSkewHasNoViolations) {
  for (int n : {1, 4, 16}) {
    for (int64_t io : {4096, 1 << 20}) {
      for (Op op : {Op::kRead, Op::kWrite}) {
        Scenario s;
        s.nconnect = n;
        s.io_size = io;
        s.op = op;
        s.window = 128;
        s.slots = 128;
        s.ops = 4000;
        ScenarioResult r = SimOk(s);
        EXPECT_EQ(r.violations, 0) << "nconnect " << n << " io " << io << " " << OpName(op);
        EXPECT_EQ(r.completed, 4000);
        if (n > 1) {
          EXPECT_GT(r.max_spread, 0);  // reordering happened, within the window
        }
      }
    }
  }
}

TEST(SimulatorTest, SkewedConnectionCausesViolationsGrowingWithSkew) {
  int64_t last = -1;
  for (int64_t skew : {250000, 1000000, 4000000}) {
    ScenarioResult r = SimOk(Lagging(skew));
    EXPECT_GT(r.violations, 0) << skew;
    EXPECT_GT(r.violations, last) << "skew " << skew;
    EXPECT_EQ(r.drops, r.violations);
    EXPECT_GT(r.max_spread, 32);
    last = r.violations;
  }
}

// Each call's lag as the server checked it: the calls a window of W drops
// are those W or more below, so the histogram's tail at the window is the
// count of violations, and its last lag the largest spread; in either model.
TEST(SimulatorTest, LagHistogramsHoldTheViolationsAndTheSpread) {
  for (bool threads : {false, true}) {
    Scenario s = Lagging(1000000);
    s.thread_model = threads;
    ScenarioResult r = SimOk(s);
    ASSERT_GT(r.violations, 0) << threads;
    EXPECT_EQ(CallsAtLeast(r.checked_lags, static_cast<uint32_t>(s.window)), r.violations)
        << threads;
    ASSERT_FALSE(r.checked_lags.empty());
    EXPECT_EQ(static_cast<int64_t>(r.checked_lags.size() - 1), r.max_spread) << threads;
    // The lagging connection's calls leave late: behind in the order of
    // sending too; every completed call was sent at least once.
    EXPECT_GT(CallsAtLeast(r.sent_lags, 1), 0) << threads;
    EXPECT_GE(CallsAtLeast(r.sent_lags, 0), r.completed) << threads;
  }
  // One connection sends its calls in the order they were numbered.
  Scenario one;
  one.nconnect = 1;
  one.ops = 3000;
  ScenarioResult r = SimOk(one);
  EXPECT_EQ(r.sent_lags.size(), 1u);
  EXPECT_GE(r.sent_lags[0], 3000);
}

TEST(SimulatorTest, LagQuantilesAndTailsOfAHistogram) {
  const std::vector<int64_t> lags = {5, 0, 3};  // five calls at lag 0, three at lag 2
  EXPECT_EQ(CallsAtLeast(lags, 0), 8);
  EXPECT_EQ(CallsAtLeast(lags, 1), 3);
  EXPECT_EQ(CallsAtLeast(lags, 3), 0);
  EXPECT_EQ(CallsAtLeast(lags, 100), 0);
  EXPECT_EQ(LagQuantile(lags, 0.5), 0u);
  EXPECT_EQ(LagQuantile(lags, 5.0 / 8), 0u);
  EXPECT_EQ(LagQuantile(lags, 0.7), 2u);
  EXPECT_EQ(LagQuantile(lags, 1), 2u);
  EXPECT_EQ(LagQuantile({}, 0.5), 0u);
}

TEST(SimulatorTest, PerConnectionContextsHaveNoViolations) {
  for (rpc::WindowPolicy reaction :
       {rpc::WindowPolicy::kDropDisconnect, rpc::WindowPolicy::kDiscardContext}) {
    Scenario s = Lagging(4000000);
    s.reaction = reaction;
    ScenarioResult shared = SimOk(s);
    s.per_connection_context = true;
    ScenarioResult per_conn = SimOk(s);
    EXPECT_GT(shared.violations, 0);
    EXPECT_EQ(per_conn.violations, 0);
    EXPECT_EQ(per_conn.context_recreations, 0);
    EXPECT_EQ(per_conn.disconnects, 0);
    EXPECT_GT(per_conn.ops_per_s, shared.ops_per_s);
  }
}

TEST(SimulatorTest, ReencodeAtTransmitReducesViolations) {
  Scenario s = Lagging(1000000);
  ScenarioResult off = SimOk(s);
  s.reencode = true;
  ScenarioResult on = SimOk(s);
  EXPECT_LT(on.violations, off.violations);
  EXPECT_GT(on.reencodes, 0);
  EXPECT_EQ(off.reencodes, 0);
}

TEST(SimulatorTest, ReencodeCannotSeeNetworkSkew) {
  // Skew on the wire happens after the transmit-time check: re-encode helps
  // far less than with the same skew before the socket.
  Scenario s = Lagging(1000000);
  s.reencode = true;
  ScenarioResult client = SimOk(s);
  s.skew_where = SkewWhere::kNetwork;
  ScenarioResult network = SimOk(s);
  EXPECT_GT(network.violations, 2 * client.violations);
}

TEST(SimulatorTest, DiscardContextCountsRecreations) {
  Scenario s = Lagging(1000000);
  s.reaction = rpc::WindowPolicy::kDiscardContext;
  ScenarioResult r = SimOk(s);
  EXPECT_GT(r.violations, 0);
  EXPECT_GT(r.context_recreations, 0);
  EXPECT_LE(r.context_recreations, r.violations);
  EXPECT_GT(r.error_replies, 0);
  EXPECT_GT(r.retransmissions, 0);
  EXPECT_GT(r.retransmitted_bytes, 0);
  EXPECT_EQ(r.disconnects, 0);
}

TEST(SimulatorTest, DropDisconnectCountsDisconnectsAndResends) {
  Scenario s = Lagging(1000000);
  s.reaction = rpc::WindowPolicy::kDropDisconnect;
  ScenarioResult r = SimOk(s);
  EXPECT_GT(r.violations, 0);
  EXPECT_EQ(r.disconnects, r.violations);
  EXPECT_GT(r.retransmissions, 0);
  EXPECT_EQ(r.retransmitted_bytes, r.retransmissions * s.RequestBytes());
  EXPECT_EQ(r.context_recreations, 0);
}

TEST(SimulatorTest, SpreadCapAtWindowPreventsViolations) {
  Scenario s = Lagging(4000000);
  s.spread_cap = s.window;
  ScenarioResult r = SimOk(s);
  EXPECT_EQ(r.violations, 0);
  EXPECT_LT(r.max_spread, s.window);
  EXPECT_EQ(r.completed, s.ops);
}

TEST(SimulatorTest, StalledOnlyWhenEverySlotWaitsOnRecovery) {
  Scenario s;
  s.nconnect = 2;
  s.slots = 1;
  s.window = 1;
  s.ops = 200;
  ScenarioResult r = SimOk(s);
  EXPECT_EQ(r.violations, 0);  // one call at a time cannot be out of window
  EXPECT_EQ(r.stalled_fraction, 0.0);
  // Discarded contexts: while a new one is created, nothing can be sent.
  Scenario t = Lagging(1000000);
  t.reaction = rpc::WindowPolicy::kDiscardContext;
  ScenarioResult lagging = SimOk(t);
  EXPECT_GT(lagging.stalled_fraction, 0.0);
  EXPECT_LE(lagging.stalled_fraction, 1.0);
}

TEST(SimulatorTest, RoundRobinPickupWithBacklogRestoresOrder) {
  // Numbers go to connections round-robin; a backlogged server that takes
  // calls connection by connection in turn sees them nearly in order, so
  // the lagging connection's skew is absorbed by the queue.
  Scenario s;
  s.nconnect = 4;
  s.slots = 512;
  s.window = 128;
  s.skew_ns = 2000000;
  s.server_threads = 1;
  s.cost_fixed_ns = 0;
  s.cost_ns_per_byte = 15;  // krb5p on a slow engine: the server is the bottleneck
  s.ops = 4000;
  ScenarioResult arrival = SimOk(s);
  s.server_order = ServerOrder::kRoundRobin;
  ScenarioResult rr = SimOk(s);
  EXPECT_GT(arrival.violations, 0);
  EXPECT_EQ(rr.violations, 0);
  EXPECT_LT(rr.max_spread, 16);
  EXPECT_GT(arrival.max_spread, s.window);
  // Without a backlog (a worker for every slot) a call is taken as soon as
  // it arrives: the two orders are the same, and both see the skew.
  s.server_threads = 256;
  s.cost_ns_per_byte = 1;
  s.slots = 256;
  s.window = 32;
  ScenarioResult rr_idle = SimOk(s);
  s.server_order = ServerOrder::kArrival;
  ScenarioResult arrival_idle = SimOk(s);
  EXPECT_GT(arrival_idle.violations, 0);
  EXPECT_EQ(rr_idle.violations, arrival_idle.violations);
  EXPECT_EQ(rr_idle.ops_per_s, arrival_idle.ops_per_s);
}

TEST(SimulatorTest, AFullLinkSendsItsMessagesBackToBack) {
  // Nothing but the link in the data's direction limits these runs (no
  // crypto, no service time, a worker and a window for every call): each
  // message leaves as the one ahead of it has, in either direction (a
  // connection's send queue, the server's replies), so the goodput is the
  // links' bandwidth over the message's bytes.
  for (Op op : {Op::kRead, Op::kWrite}) {
    Scenario s;
    s.nconnect = 2;
    s.io_size = 65536;
    s.op = op;
    s.cost_fixed_ns = 0;
    s.cost_ns_per_byte = 0;
    s.service_ns = 0;
    s.server_threads = 64;
    s.slots = 64;
    s.window = 4096;
    s.ops = 20000;
    const ScenarioResult r = SimOk(s);
    const double wire = static_cast<double>(std::max(s.RequestBytes(), s.ReplyBytes()));
    const double bound = s.nconnect * s.bandwidth_bytes_per_s / wire;
    EXPECT_NEAR(r.ops_per_s / bound, 1.0, 0.01) << OpName(op);
  }
}

TEST(SimulatorTest, GoodputNeverExceedsBandwidthOrServiceBound) {
  for (int n : {1, 4}) {
    for (int64_t io : {4096, 65536, 1 << 20}) {
      for (Op op : {Op::kRead, Op::kWrite}) {
        for (int threads : {1, 8}) {
          Scenario s;
          s.nconnect = n;
          s.io_size = io;
          s.op = op;
          s.server_threads = threads;
          s.service_dist = Dist::kConstant;
          s.slots = 64;
          s.ops = 3000;
          ScenarioResult r = SimOk(s);
          const double wire = static_cast<double>(std::max(s.RequestBytes(), s.ReplyBytes()));
          const double bw_bound = n * s.bandwidth_bytes_per_s / wire;
          const double per_op_ns = static_cast<double>(s.CostNs(s.RequestBytes()) + s.service_ns +
                                                       s.CostNs(s.ReplyBytes()));
          const double server_bound = threads * 1e9 / per_op_ns;
          const double bound = std::min(bw_bound, server_bound);
          EXPECT_LE(r.ops_per_s, bound * 1.0001)
              << "nconnect " << n << " io " << io << " threads " << threads;
          // And a healthy pipeline gets close to its bound.
          EXPECT_GT(r.ops_per_s, 0.5 * bound);
          EXPECT_DOUBLE_EQ(r.mb_per_s, r.ops_per_s * io / 1e6);
        }
      }
    }
  }
}

TEST(SimulatorTest, LargeWritesSerialiseOnTheirConnection) {
  // The same number of calls, 1 MiB instead of 4 KiB: the calls wait behind
  // each other's serialisation, so latency grows by at least one message time.
  Scenario s;
  s.nconnect = 1;
  s.op = Op::kWrite;
  s.slots = 16;
  s.ops = 2000;
  s.io_size = 4096;
  ScenarioResult small = SimOk(s);
  s.io_size = 1 << 20;
  ScenarioResult large = SimOk(s);
  const double one_message_ns = (1 << 20) * 1e9 / s.bandwidth_bytes_per_s;
  EXPECT_GT(static_cast<double>(large.p50_ns - small.p50_ns), one_message_ns);
}

TEST(SimulatorTest, DurationStopsTheRun) {
  Scenario s;
  s.ops = 10000000;
  s.duration_ns = 5000000;  // 5 ms
  ScenarioResult r = SimOk(s);
  EXPECT_EQ(r.elapsed_ns, 5000000);
  EXPECT_LT(r.completed, s.ops);
  EXPECT_GT(r.completed, 0);
}

TEST(SimulatorTest, ThrashingRunIsTruncatedNotEndless) {
  // Many slots, a tiny window and discard-context: every new context is
  // discarded again by its own resends. The run stops at its event budget.
  Scenario s;
  s.nconnect = 8;
  s.slots = 512;
  s.window = 4;
  s.reaction = rpc::WindowPolicy::kDiscardContext;
  s.ops = 2000;
  ScenarioResult r = SimOk(s);
  EXPECT_TRUE(r.truncated);
  EXPECT_LT(r.completed, s.ops);
  EXPECT_GT(r.context_recreations, 10);
}

}  // namespace
}  // namespace secmode::sim

namespace secmode::sim {
namespace {

// Random valid scenarios across every option: the model never deadlocks
// (Simulate fails only on a model bug), and its outputs keep their invariants.
TEST(SimulatorTest, RandomScenariosKeepInvariants) {
  Rng rng(2026);
  auto pick = [&](std::initializer_list<int64_t> v) {
    return *(v.begin() + static_cast<ptrdiff_t>(rng.Next() % v.size()));
  };
  int with_violations = 0, with_disconnects = 0, with_recreations = 0, with_reencodes = 0;
  for (int i = 0; i < 150; ++i) {
    Scenario s;
    s.nconnect = static_cast<int>(pick({1, 2, 3, 8}));
    s.slots = pick({1, 2, 7, 64, 300});
    s.window = pick({1, 2, 5, 32, 128});
    s.reaction = static_cast<rpc::WindowPolicy>(rng.Next() % 3);
    s.op = static_cast<Op>(rng.Next() % 2);
    s.io_size = pick({0, 512, 65536, 1 << 20});
    s.per_connection_context = rng.Next() % 4 == 0;
    s.reencode = rng.Next() % 2 == 0;
    s.spread_cap = pick({0, 0, 1, 16, 200});
    s.jitter_dist = static_cast<Dist>(rng.Next() % 3);
    s.service_dist = static_cast<Dist>(rng.Next() % 3);
    s.jitter_ns = pick({0, 10000, 500000});
    s.skew_conn = static_cast<int>(rng.Next() % static_cast<uint64_t>(s.nconnect));
    s.skew_ns = pick({0, 100000, 3000000});
    s.skew_where = static_cast<SkewWhere>(rng.Next() % 2);
    s.server_threads = static_cast<int>(pick({1, 4, 16}));
    s.server_order = static_cast<ServerOrder>(rng.Next() % 2);
    s.retransmit_timeout_ns = pick({1000000, 60000000000});
    s.rtt_ns = pick({0, 50000, 1000000});
    s.seed = rng.Next();
    s.ops = 300;
    ASSERT_TRUE(s.Validate().ok()) << s.ToJson().dump();
    auto r = Simulate(s);
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << s.ToJson().dump();
    const std::string where = s.ToJson().dump();
    EXPECT_TRUE(r->completed == s.ops || r->truncated) << where;
    with_violations += r->violations > 0;
    with_disconnects += r->disconnects > 0;
    with_recreations += r->context_recreations > 0;
    with_reencodes += r->reencodes > 0;
    EXPECT_LE(r->violations, r->drops) << where;
    EXPECT_EQ(r->retransmitted_bytes, r->retransmissions * s.RequestBytes()) << where;
    EXPECT_GE(r->stalled_fraction, 0.0) << where;
    EXPECT_LE(r->stalled_fraction, 1.0) << where;
    EXPECT_LE(r->p50_ns, r->p99_ns) << where;
    EXPECT_LE(r->p99_ns, r->p999_ns) << where;
    if (s.reaction != rpc::WindowPolicy::kDropDisconnect) {
      EXPECT_EQ(r->disconnects, 0) << where;
    }
    if (s.reaction != rpc::WindowPolicy::kDiscardContext) {
      EXPECT_EQ(r->context_recreations, 0) << where;
    }
    if (s.per_connection_context || (s.spread_cap > 0 && s.spread_cap <= s.window && !s.reencode)) {
      EXPECT_EQ(r->violations, 0) << where;
    }
    if (!s.reencode) {
      EXPECT_EQ(r->reencodes, 0) << where;
    }
  }
  // The random grid reached every recovery path.
  EXPECT_GT(with_violations, 10);
  EXPECT_GT(with_disconnects, 3);
  EXPECT_GT(with_recreations, 3);
  EXPECT_GT(with_reencodes, 3);
}

// The same with threads and cores and every mechanism of theirs drawn at
// random: no deadlock (a receiver parked for a reconnect or a context that
// nobody will bring), every operation done unless the run thrashes.
TEST(SimulatorTest, RandomThreadScenariosNeverDeadlock) {
  Rng rng(1202);
  auto pick = [&](std::initializer_list<int64_t> v) {
    return *(v.begin() + static_cast<ptrdiff_t>(rng.Next() % v.size()));
  };
  int with_disconnects = 0, with_recreations = 0;
  for (int i = 0; i < 400; ++i) {
    Scenario s = EveryMechanismScenario();
    s.nconnect = static_cast<int>(pick({1, 2, 4, 8}));
    s.slots = pick({1, 8, 64, 256});
    s.window = pick({4, 32, 128});
    s.reaction = static_cast<rpc::WindowPolicy>(rng.Next() % 3);
    s.per_connection_context = rng.Next() % 3 == 0;
    s.resend_any_connection = rng.Next() % 2 == 0;
    s.spread_cap = pick({0, 0, 16});
    s.cores = static_cast<int>(pick({0, 1, 2, 3}));
    s.per_core_queues = rng.Next() % 2 == 0;
    s.batching = rng.Next() % 4 != 0;
    s.read_bytes = pick({0, 4096, 65536});
    s.preempt_victim = static_cast<PreemptVictim>(rng.Next() % 2);
    s.skew_conn = static_cast<int>(rng.Next() % static_cast<uint64_t>(s.nconnect));
    s.skew_ns = pick({0, 1000000, 10000000});
    s.skew_sender_ns = pick({0, 20000});
    s.rtt_ns = pick({10000, 200000});
    s.reconnect_ns = pick({0, 100000, 300000});
    s.reconnect_cpu_ns = pick({0, 1, 1, 2}) == 0 ? 0 : s.reconnect_ns / pick({1, 1, 2});
    // The server's part of a reconnect: once found waking the server's
    // thread from inside the client receiver's run, which could preempt the
    // receiver in the middle of its item and left a core with no thread
    // (the "no events left" deadlock CI saw on a calibrated point).
    s.reconnect_server_cpu_ns = pick({0, 10000, 40000});
    s.client_read_ns = pick({0, 20000});
    s.server_read_ns = pick({0, 30000});
    s.gss_setup_ns = pick({100000, 2000000});
    s.gss_setup_cpu_ns = s.gss_setup_ns / pick({1, 2, 1000000000});
    s.pause_per_s = pick({0, 1, 2, 3}) == 0 ? 1e-9 : static_cast<double>(pick({0, 500, 5000}));
    s.retransmit_timeout_ns = pick({5000000, 1000000000});
    s.seed = rng.Next();
    s.ops = 1000;
    ASSERT_TRUE(s.Validate().ok()) << s.ToJson().dump();
    auto r = Simulate(s);
    const std::string where = s.ToJson().dump();
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << where;
    EXPECT_TRUE(r->completed == s.ops || r->truncated) << where;
    with_disconnects += r->disconnects > 0;
    with_recreations += r->context_recreations > 0;
  }
  EXPECT_GT(with_disconnects, 5);
  EXPECT_GT(with_recreations, 5);
}

}  // namespace
}  // namespace secmode::sim

namespace secmode::sim {
namespace {

// resend_any_connection (the mapping of secmode's own load generator, used
// by the validation on real sockets): after a disconnect of the lagging
// connection the lost calls leave it, so the run recovers much faster than
// when they are resent on it (Linux); and the default stays as it was.
TEST(SimulatorTest, ResendAnyConnectionMovesLostCallsOffTheLaggingConnection) {
  Scenario s;
  s.nconnect = 4;
  s.slots = 128;
  s.window = 32;
  s.reaction = rpc::WindowPolicy::kDropDisconnect;
  s.io_size = 4096;
  s.skew_conn = 0;
  s.skew_ns = 10000000;
  s.ops = 2000;
  // A CPU-bound server: two threads with a long service time.
  s.server_threads = 2;
  s.server_order = ServerOrder::kRoundRobin;
  s.service_ns = 80000;
  s.rtt_ns = 100000;
  s.cost_fixed_ns = 3000;
  s.cost_ns_per_byte = 7.6;
  ASSERT_FALSE(s.resend_any_connection);
  ScenarioResult same = SimOk(s);
  s.resend_any_connection = true;
  ScenarioResult any = SimOk(s);
  ASSERT_EQ(same.completed, 2000);
  ASSERT_EQ(any.completed, 2000);
  EXPECT_GT(same.disconnects, 0);
  EXPECT_GT(any.ops_per_s, 2 * same.ops_per_s)
      << "same connection: " << same.ToJson().dump() << "\nany: " << any.ToJson().dump();
  auto back = ScenarioFromJson(s.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->resend_any_connection);
}

}  // namespace
}  // namespace secmode::sim

namespace secmode::sim {
namespace {

// The thread model on two cores, with the costs of a slow krb5p engine: CPU
// bound, as the loopback validation is.
Scenario Threads(int64_t slots) {
  Scenario s;
  s.thread_model = true;
  s.cores = 2;
  s.slice_ns = 3000000;
  s.nconnect = 4;
  s.slots = slots;
  s.window = 32;
  s.reaction = rpc::WindowPolicy::kDropDisconnect;
  s.io_size = 4096;
  s.cost_fixed_ns = 3000;
  s.cost_ns_per_byte = 7;
  s.client_call_ns = 5000;
  s.service_ns = 9000;
  s.rtt_ns = 40000;
  s.jitter_ns = 4000;
  s.retransmit_timeout_ns = 1000000000;
  s.resend_any_connection = true;
  s.ops = 2000;
  return s;
}

// Threads(128) on two connections, connection 0 holding its calls 10 ms
// (longer than the window lasts), the server discarding the context.
Scenario HeldDiscarding() {
  Scenario s = Threads(128);
  s.nconnect = 2;
  s.reaction = rpc::WindowPolicy::kDiscardContext;
  s.skew_conn = 0;
  s.skew_ns = 10000000;
  s.skew_where = SkewWhere::kClient;
  return s;
}

// Both ends' CPU per call of `s` without violations: the four crypto legs,
// the client's and the server's own work.
double CallCpuNs(const Scenario& s) {
  return 2 * (s.CostNs(s.RequestBytes()) + s.CostNs(s.ReplyBytes())) + s.client_call_ns +
         s.service_ns;
}

// The cores' busy time in a run on `cores` cores.
double BusyNs(const ScenarioResult& r, int cores) {
  return (1 - r.idle_fraction) * cores * static_cast<double>(r.elapsed_ns);
}

TEST(ThreadModelTest, SameSeedSameResultAndEveryOperationCompletes) {
  for (int64_t slots : {8, 128}) {
    Scenario s = Threads(slots);
    s.wakeup_preempt_ns = 10000;
    ScenarioResult a = SimOk(s), b = SimOk(s);
    EXPECT_EQ(a.ToJson(), b.ToJson()) << slots;
    EXPECT_EQ(a.completed, s.ops);
    EXPECT_FALSE(a.truncated);
  }
}

TEST(ThreadModelTest, ResendsAfterADiscardedContextLeaveTheLaggingConnection) {
  // A connection that holds its calls longer than the window lasts: each of
  // its calls gets the context discarded. Resent on their own connection
  // (Linux keeps a task on its transport) they come back to it until every
  // slot is stuck there; resent round-robin (the load generator) most of
  // them complete on the others between two re-creations.
  Scenario s = HeldDiscarding();
  s.resend_any_connection = false;
  ScenarioResult same = SimOk(s);
  s.resend_any_connection = true;
  ScenarioResult any = SimOk(s);
  for (const ScenarioResult* r : {&same, &any}) {
    EXPECT_EQ(r->completed, s.ops);
    EXPECT_FALSE(r->truncated);
    EXPECT_GT(r->context_recreations, 0);
    // Each re-creation follows one discard, which follows one violation.
    EXPECT_LE(r->context_recreations, r->violations);
  }
  EXPECT_GT(any.ops_per_s, 5 * same.ops_per_s)
      << "same connection: " << same.ToJson().dump() << "\nany: " << any.ToJson().dump();
  EXPECT_LT(any.context_recreations * 5, same.context_recreations);
}

TEST(ThreadModelTest, ContextCreationCpuIsSpentOnTheCores) {
  // The re-creating receiver spends gss_setup_cpu_ns on a core before it
  // waits for the rest: the cores' busy time grows by about that much per
  // re-creation (the runs differ a little in what else they do).
  Scenario s = HeldDiscarding();
  s.ops = 20000;
  s.gss_setup_ns = 2000000;
  ScenarioResult waiting = SimOk(s);
  s.gss_setup_cpu_ns = 1500000;
  ScenarioResult working = SimOk(s);
  ASSERT_GT(working.context_recreations, 10);
  EXPECT_EQ(working.completed, s.ops);
  EXPECT_NEAR((BusyNs(working, s.cores) - BusyNs(waiting, s.cores)) /
                  (static_cast<double>(working.context_recreations) * 1.5e6),
              1.0, 0.1);
  s.gss_setup_cpu_ns = s.gss_setup_ns + 1;  // more CPU than the whole creation takes
  EXPECT_NE(s.Validate().message().find("gss-setup-cpu-ns"), std::string::npos);
}

TEST(ThreadModelTest, AReceiverStillReconnectingWhenItsConnectionClosesAgainGoesOn) {
  // Reconnect CPU on the receiver's core: the connection can come back and
  // be closed again before that CPU is spent. The receiver then reads the
  // new close next instead of waiting for a reconnect nobody will do.
  Scenario s = EveryMechanismScenario();
  s.nconnect = 4;
  s.slots = 128;
  s.window = 32;
  s.reaction = rpc::WindowPolicy::kDropDisconnect;
  s.resend_any_connection = true;
  s.retransmit_timeout_ns = 1000000000;
  s.cost_fixed_ns = 1050;
  s.cost_ns_per_byte = 1.45;
  s.client_call_ns = 9000;
  s.service_ns = 12000;
  s.io_size = 4096;
  s.rtt_ns = 13000;
  s.jitter_ns = 1300;
  s.slice_ns = 2400000;
  s.wakeup_preempt_ns = 5400;
  s.idle_wake_ns = 44000;
  s.reconnect_ns = 113000;
  s.reconnect_cpu_ns = 113000;
  s.client_read_ns = s.server_read_ns = 0;  // the calibration this case came from had none
  s.ops = 2000;
  int closes = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    s.seed = seed;
    ScenarioResult r = SimOk(s);
    EXPECT_EQ(r.completed, s.ops) << seed;
    EXPECT_FALSE(r.truncated) << seed;
    closes += static_cast<int>(r.disconnects);
  }
  EXPECT_GT(closes, 100);
}

TEST(ThreadModelTest, TheServersPartOfAReconnectIsSpentOnACore) {
  // Each reconnect puts the server's accept and thread start on the new
  // connection's server thread: with every core busy, the run holds that
  // much more CPU time for as many operations. A few slots above the window,
  // so that reconnects are few and do not cascade.
  Scenario s = Threads(40);
  s.reconnect_ns = 100000;
  const int64_t cpu = 2000000;
  int64_t busy_without = 0, busy_with = 0, disconnects = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    s.seed = seed;
    s.reconnect_server_cpu_ns = 0;
    ScenarioResult a = SimOk(s);
    s.reconnect_server_cpu_ns = cpu;
    ScenarioResult b = SimOk(s);
    EXPECT_EQ(a.completed, s.ops);
    EXPECT_EQ(b.completed, s.ops);
    disconnects += b.disconnects;
    busy_without += static_cast<int64_t>((1 - a.idle_fraction) * s.cores * a.elapsed_ns);
    busy_with += static_cast<int64_t>((1 - b.idle_fraction) * s.cores * b.elapsed_ns);
  }
  ASSERT_GT(disconnects, 10);
  // Half of it at least: the runs differ in their other reconnect work.
  EXPECT_GT(busy_with, busy_without + disconnects * cpu / 2);
  Scenario bad = s;
  bad.reconnect_server_cpu_ns = -1;
  EXPECT_FALSE(bad.Validate().ok());
}

TEST(ThreadModelTest, ReconnectAndRecreationStepsAreTimedFromTheSimulatedRun) {
  // Drop-disconnect: every close is read by its receiver (one RTT/2 at the
  // least), and its resends go out after the reconnect's RTT and time.
  Scenario s = Threads(128);
  s.reconnect_ns = 100000;
  s.idle_wake_ns = 40000;
  ScenarioResult d = SimOk(s);
  ASSERT_GT(d.disconnects, 10) << d.ToJson().dump();
  EXPECT_GT(d.close_to_eof.count, 0);
  EXPECT_LE(d.close_to_eof.count, d.disconnects);
  EXPECT_GE(d.close_to_eof.p50_ns, s.rtt_ns / 2);
  EXPECT_GE(d.close_to_eof.p90_ns, d.close_to_eof.p50_ns);
  EXPECT_GT(d.eof_to_resent.count, 0);
  EXPECT_LE(d.eof_to_resent.count, d.close_to_eof.count);
  EXPECT_GE(d.eof_to_resent.p50_ns, s.rtt_ns + s.reconnect_ns);
  EXPECT_EQ(d.recreation.count, 0);
  // Discard-context: each re-creation takes its CPU, one RTT and the rest.
  Scenario k = HeldDiscarding();
  k.gss_setup_ns = 2000000;
  k.gss_setup_cpu_ns = 500000;
  ScenarioResult r = SimOk(k);
  ASSERT_GT(r.context_recreations, 0);
  EXPECT_EQ(r.recreation.count, r.context_recreations);
  EXPECT_GE(r.recreation.p50_ns, k.rtt_ns + k.gss_setup_ns);
  EXPECT_EQ(r.close_to_eof.count, 0);
  // The steps survive results.json.
  auto back = ScenarioResultFromJson(d.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->eof_to_resent.p90_ns, d.eof_to_resent.p90_ns);
  EXPECT_EQ(back->close_to_eof.count, d.close_to_eof.count);
}

TEST(ThreadModelTest, RepliesWrittenBeforeACloseReachTheClientBeforeItsEnd) {
  // The server writes a batch's replies, then closes (drop-disconnect): TCP
  // delivers what was written before the end of the stream, so the client
  // reads those replies (and completes their operations) first. On a link
  // slow enough that a batch's replies queue (32 calls per connection), the
  // end of the stream comes many replies' transmission after the close,
  // not the one or two already on the wire.
  Scenario s = Threads(128);
  const int64_t reply_tx_ns = 50000;
  s.bandwidth_bytes_per_s = static_cast<double>(s.ReplyBytes()) * 1e9 / reply_tx_ns;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    s.seed = seed;
    ScenarioResult r = SimOk(s);
    ASSERT_GT(r.disconnects, 10) << r.ToJson().dump();
    EXPECT_EQ(r.completed, s.ops);
    EXPECT_GT(r.close_to_eof.p50_ns, 8 * reply_tx_ns + s.rtt_ns / 2) << seed;
  }
}

TEST(ThreadModelTest, AContextsWaitersGoOnOneAfterAnother) {
  // Eight receivers on one context far above its window: after each
  // re-creation most of them wait for the new context. Woken one by one (a
  // mutex's waiters) they number their first calls later than when all wake
  // at once; and no waiter is ever left behind, with one context or one per
  // connection (every operation completes).
  Scenario s = Threads(256);
  s.nconnect = 8;
  s.reaction = rpc::WindowPolicy::kDiscardContext;
  s.gss_setup_ns = 1000000;
  s.gss_setup_cpu_ns = 500000;
  s.idle_wake_ns = 20000;
  s.wakeup_preempt_ns = 5000;
  int64_t together_p90 = 0, one_by_one_p90 = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    s.seed = seed;
    s.context_lock_wakes_one = false;
    const ScenarioResult together = SimOk(s);
    s.context_lock_wakes_one = true;
    const ScenarioResult one_by_one = SimOk(s);
    for (const ScenarioResult* r : {&together, &one_by_one}) {
      EXPECT_EQ(r->completed, s.ops) << seed;
      EXPECT_FALSE(r->truncated) << seed;
      ASSERT_GT(r->context_recreations, 5) << seed;
      // Each new context's waiters number under it: several per re-creation.
      EXPECT_GT(r->resume.count, r->context_recreations) << seed;
      EXPECT_GE(r->resume.p90_ns, r->resume.p50_ns) << seed;
    }
    together_p90 += together.resume.p90_ns;
    one_by_one_p90 += one_by_one.resume.p90_ns;
  }
  EXPECT_GT(one_by_one_p90, together_p90);
  Scenario per = s;
  per.per_connection_context = true;
  per.slots = 512;  // 64 calls per connection's context, above its window
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    per.seed = seed;
    const ScenarioResult r = SimOk(per);
    EXPECT_EQ(r.completed, per.ops) << seed;
    EXPECT_FALSE(r.truncated) << seed;
  }
  // The switch and the step survive results.json.
  auto back = ScenarioFromJson(s.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->context_lock_wakes_one);
  const ScenarioResult r = SimOk(s);
  auto result = ScenarioResultFromJson(r.ToJson());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->resume.count, r.resume.count);
  EXPECT_EQ(result->resume.p90_ns, r.resume.p90_ns);
}

TEST(ThreadModelTest, CoresBoundTheGoodput) {
  // Every call costs both ends' CPU: at most cores / (CPU per call) ops/s.
  Scenario s = Threads(8);
  const double cpu_ns = CallCpuNs(s);
  for (int cores : {1, 2, 4}) {
    s.cores = cores;
    ScenarioResult r = SimOk(s);
    EXPECT_LE(r.ops_per_s, cores * 1e9 / cpu_ns * 1.02) << cores;
    EXPECT_GE(r.ops_per_s, 0.5 * std::min(cores, 8) * 1e9 / cpu_ns) << cores;
  }
}

TEST(ThreadModelTest, ACostPerReadIsPaidOncePerBatch) {
  // Each read of a socket costs its CPU once, whatever it holds: the cores'
  // busy time is the calls' CPU plus the reads' (counted in the result), so
  // with a call or two per read a call costs far more than with dozens.
  for (int64_t slots : {4, 128}) {
    Scenario s = Threads(slots);
    s.window = 4096;  // no violation
    s.service_dist = Dist::kConstant;
    const ScenarioResult without = SimOk(s);
    s.client_read_ns = 20000;
    s.server_read_ns = 30000;
    const ScenarioResult with = SimOk(s);
    ASSERT_EQ(with.violations, 0);
    ASSERT_GT(with.client_reads, 0);
    ASSERT_GT(with.server_reads, 0);
    // At most one read per reply or call handled, at least one per batch.
    EXPECT_LE(with.client_reads, with.completed + s.slots) << slots;
    EXPECT_LE(with.server_reads, with.completed + s.slots) << slots;
    const double busy = BusyNs(with, s.cores);
    const double expected = static_cast<double>(with.completed) * CallCpuNs(s) +
                            static_cast<double>(with.client_reads) * 20000 +
                            static_cast<double>(with.server_reads) * 30000;
    EXPECT_NEAR(busy / expected, 1.0, 0.05) << slots;
    const double calls_per_read =
        static_cast<double>(with.completed) / static_cast<double>(with.client_reads);
    const double slowdown = with.ops_per_s / without.ops_per_s;
    if (slots == 4) {
      EXPECT_LT(calls_per_read, 2.5);
      EXPECT_LT(slowdown, 0.8);  // 50 us of reads per read on top of ~90 us per call
    } else {
      EXPECT_GT(calls_per_read, 4);
      EXPECT_GT(slowdown, 0.85);
    }
  }
  // Without batching every item is a read of its own.
  Scenario s = Threads(16);
  s.window = 4096;
  s.batching = false;
  const ScenarioResult r = SimOk(s);
  EXPECT_GE(r.client_reads, r.completed);
  EXPECT_GE(r.server_reads, r.completed);
}

TEST(ThreadModelTest, ThreadsCountTheirSleepsRunsAndWaitsForACore) {
  // The counts the validation sets beside the real threads' context switches
  // and schedstat: with a core per thread nobody waits for one; on one core
  // the same load waits, and longer per run than on two.
  Scenario s = Threads(16);
  s.window = 4096;  // no violation
  s.cores = 0;
  const ScenarioResult free_cores = SimOk(s);
  EXPECT_GT(free_cores.client_sleeps, 0);
  EXPECT_GT(free_cores.server_sleeps, 0);
  EXPECT_GT(free_cores.client_runs, 0);
  EXPECT_GT(free_cores.server_runs, 0);
  EXPECT_EQ(free_cores.client_wait_ns, 0);
  EXPECT_EQ(free_cores.server_wait_ns, 0);
  // A thread runs after every sleep but its last, and reads at least once a run.
  EXPECT_GE(free_cores.client_runs + s.nconnect, free_cores.client_sleeps);
  EXPECT_GE(free_cores.client_reads, free_cores.client_runs - s.nconnect);
  auto wait_per_run = [](const ScenarioResult& r) {
    return static_cast<double>(r.client_wait_ns + r.server_wait_ns) /
           static_cast<double>(r.client_runs + r.server_runs);
  };
  s.cores = 2;
  const ScenarioResult two = SimOk(s);
  s.cores = 1;
  const ScenarioResult one = SimOk(s);
  EXPECT_GT(two.client_wait_ns + two.server_wait_ns, 0);
  EXPECT_GT(wait_per_run(one), wait_per_run(two));
  // The JSON carries them.
  auto back = ScenarioResultFromJson(one.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->client_sleeps, one.client_sleeps);
  EXPECT_EQ(back->server_runs, one.server_runs);
  EXPECT_EQ(back->client_wait_ns, one.client_wait_ns);
  EXPECT_EQ(back->server_wait_ns, one.server_wait_ns);
}

TEST(ThreadModelTest, AReadsCpuComesAfterItsItemsAndBeforeItsWrites) {
  // One call per connection, so every batch holds one item: a read's CPU
  // spent before the batch's writes holds the calls the receiver numbered
  // (hold: queued -> written) and the replies, while the server checks a
  // call as soon as its read returned it (check: read -> checked).
  Scenario s = Threads(4);
  s.cores = 0;  // a core per thread: no queueing for a core
  s.window = 4096;
  s.service_dist = Dist::kConstant;
  s.client_read_ns = 200000;
  s.server_read_ns = 300000;
  const ScenarioResult r = SimOk(s);
  ASSERT_EQ(r.violations, 0);
  EXPECT_LT(r.stage_p50_ns[3], 20000);   // check
  EXPECT_GE(r.stage_p50_ns[1], 200000);  // hold
  // Each call's round trip pays both reads once.
  EXPECT_GE(r.p50_ns, s.rtt_ns + 200000 + 300000);
}

TEST(ThreadModelTest, StageTimesOverTwoSecondsAreKeptWhole) {
  // Half the calls held 3 s before they are written (a skew on one of two
  // connections): the hold stage's p99 is over 2^31 ns, which the stage
  // samples keep apart from those that fit in 32 bits, and its median
  // (the other connection's calls) is short.
  Scenario s = Threads(16);
  s.nconnect = 2;
  s.window = 4096;
  s.skew_conn = 0;
  s.skew_ns = 3000000000;
  s.skew_where = SkewWhere::kClient;
  s.ops = 400;
  const ScenarioResult r = SimOk(s);
  ASSERT_EQ(r.violations, 0);
  EXPECT_GE(r.stage_p99_ns[1], s.skew_ns);
  EXPECT_LT(r.stage_p99_ns[1], s.skew_ns + 100000000);
  EXPECT_LT(r.stage_p50_ns[1], 100000000);
}

TEST(ThreadModelTest, IdleShareIsWhatTheCallsLeaveOfTheCores) {
  // Without violations every call costs its fixed CPU once: the cores' busy
  // time is the calls' CPU, and the rest is idle.
  Scenario s = Threads(8);
  s.service_dist = Dist::kConstant;
  const double cpu_ns = CallCpuNs(s);
  for (int cores : {1, 2, 4}) {
    s.cores = cores;
    ScenarioResult r = SimOk(s);
    ASSERT_EQ(r.violations, 0);
    ASSERT_GE(r.idle_fraction, 0);
    ASSERT_LE(r.idle_fraction, 1);
    const double busy = BusyNs(r, cores);
    EXPECT_NEAR(busy / (static_cast<double>(r.completed) * cpu_ns), 1.0, 0.03) << cores;
  }
  s.thread_model = false;
  EXPECT_EQ(SimOk(s).idle_fraction, -1);  // no cores in that model
}

TEST(ThreadModelTest, DelayLineThreadSpendsItsCpuOnTheCores) {
  // A skew held by a delay-line thread: each call of the held connection
  // costs that thread skew_sender_ns on the cores, on top of the calls' own
  // CPU, and with the cores saturated the goodput falls.
  Scenario s = Threads(64);
  s.window = 4096;  // no call can fall out of it
  s.service_dist = Dist::kConstant;
  s.skew_conn = 0;
  s.skew_ns = 1000000;
  s.skew_where = SkewWhere::kClient;
  const double cpu_ns = CallCpuNs(s);
  ScenarioResult free_line = SimOk(s);
  s.skew_sender_ns = 20000;
  ScenarioResult threaded = SimOk(s);
  ASSERT_EQ(threaded.violations, 0);
  // Both runs keep the cores busy, so the goodput falls by the delay line's
  // share of the CPU per call (one call in nconnect passes through it).
  ASSERT_LT(free_line.idle_fraction, 0.01);
  ASSERT_LT(threaded.idle_fraction, 0.01);
  const double line_ns = static_cast<double>(s.skew_sender_ns) / s.nconnect;
  EXPECT_NEAR(threaded.ops_per_s / free_line.ops_per_s, cpu_ns / (cpu_ns + line_ns), 0.015)
      << "free: " << free_line.ops_per_s << " threaded: " << threaded.ops_per_s;
  // Busy time = the calls' CPU + the delay line's, for the calls it wrote
  // (about one in nconnect; the last ones may still be held at the end).
  const double busy = BusyNs(threaded, s.cores);
  const double calls = static_cast<double>(threaded.completed);
  EXPECT_NEAR(busy / (calls * cpu_ns + calls / s.nconnect * s.skew_sender_ns), 1.0, 0.05);
}

TEST(ThreadModelTest, CorePausesStopTheThreadOnTheCoreForTheirLength) {
  // A pause lands on a core that runs a thread at pause_per_s per second of
  // that thread's run and keeps the thread there, stopped, for its length:
  // the cores' busy time is the calls' CPU times (1 + rate x length).
  Scenario s = Threads(8);
  s.service_dist = Dist::kConstant;
  const double cpu_ns = CallCpuNs(s);
  ScenarioResult smooth = SimOk(s);
  s.pause_per_s = 1000;
  s.pause_ns.assign(kPauseQuantiles, 100000);  // every pause 100 us
  for (int cores : {1, 2}) {
    s.cores = cores;
    ScenarioResult r = SimOk(s);
    ASSERT_EQ(r.violations, 0);
    const double busy = BusyNs(r, cores);
    EXPECT_NEAR(busy / (static_cast<double>(r.completed) * cpu_ns), 1.1, 0.03) << cores;
  }
  EXPECT_LT(SimOk(s).ops_per_s, smooth.ops_per_s);
  // Durations between quantiles are drawn linearly: the tail stretches a
  // call's path, the median hardly moves.
  s.pause_ns = {5000, 10000, 20000, 40000, 60000, 80000, 100000, 400000, 2000000, 4000000};
  ScenarioResult tailed = SimOk(s);
  s.pause_per_s = 0;
  ScenarioResult none = SimOk(s);
  EXPECT_GT(tailed.p99_ns, none.p99_ns);
}

TEST(ThreadModelTest, PauseParametersAreChecked) {
  Scenario s = Threads(8);
  s.pause_per_s = 100;
  EXPECT_NE(s.Validate().message().find("pause-ns"), std::string::npos);
  s.pause_ns = {1, 2, 3};
  EXPECT_NE(s.Validate().message().find("quantiles"), std::string::npos);
  s.pause_ns.assign(kPauseQuantiles, 1000);
  EXPECT_TRUE(s.Validate().ok());
  s.pause_ns[4] = 10;
  EXPECT_NE(s.Validate().message().find("decrease"), std::string::npos);
  s.pause_ns.assign(kPauseQuantiles, 1000);
  s.pause_per_s = -1;
  EXPECT_NE(s.Validate().message().find("pause-per-s"), std::string::npos);
}

TEST(ThreadModelTest, BatchesHoldCallsAndSlotsBelowTheWindowStaySafe) {
  // Fewer numbers in flight than the window: no reordering can cost a call.
  Scenario s = Threads(16);
  s.wakeup_preempt_ns = 10000;
  ScenarioResult r = SimOk(s);
  EXPECT_EQ(r.violations, 0);
  // The receivers' batches hold calls; without batching nothing is held.
  EXPECT_GT(r.stage_p99_ns[1], 0);
  s.batching = false;
  EXPECT_EQ(SimOk(s).stage_p99_ns[1], 0);
}

TEST(ThreadModelTest, WakeupPreemptionMakesManySlotsLoseCalls) {
  // 128 slots over a window of 32 on two busy cores: a thread preempted
  // while it holds newly numbered calls lets the others run far ahead.
  Scenario s = Threads(128);
  Scenario wide = s;
  wide.window = 4096;  // the same load with no violation possible
  const ScenarioResult free_run = SimOk(wide);
  EXPECT_EQ(free_run.violations, 0);
  s.wakeup_preempt_ns = 10000;
  const ScenarioResult r = SimOk(s);
  EXPECT_GT(r.preemptions, 0);
  EXPECT_GE(r.violations, 100);
  // Each disconnect costs its reconnect and its resends: goodput falls. (How
  // deep it falls depends on what a disconnect costs against a call; the
  // validation sets the model's fall beside the real runs'.)
  EXPECT_LT(r.ops_per_s, free_run.ops_per_s) << r.ops_per_s << " vs " << free_run.ops_per_s;
  // Each violation is charged to one stage of its path (all but the few
  // calls numbered outside the threads, which have no path).
  const int64_t charged =
      r.violation_stage[0] + r.violation_stage[1] + r.violation_stage[2] + r.violation_stage[3];
  EXPECT_LE(charged, r.violations);
  EXPECT_GE(charged, r.violations * 9 / 10);
  // Without wakeup preemption the same load loses fewer calls.
  s.wakeup_preempt_ns = 0;
  EXPECT_LT(SimOk(s).violations, r.violations);
}

TEST(ThreadModelTest, OneReadPerWakeupBoundsTheBatch) {
  // 4 KiB READ replies: a 16 KiB read takes 3 of them per wakeup, so a
  // receiver holds the calls it numbers for a shorter batch than when it
  // takes everything its socket holds.
  Scenario s = Threads(128);
  s.window = 4096;
  const ScenarioResult whole = SimOk(s);
  s.read_bytes = 16384;
  const ScenarioResult bounded = SimOk(s);
  EXPECT_EQ(bounded.completed, s.ops);
  EXPECT_LT(bounded.stage_p99_ns[1], whole.stage_p99_ns[1]);
  // A read smaller than one message still takes one.
  s.read_bytes = 1;
  const ScenarioResult one = SimOk(s);
  EXPECT_EQ(one.completed, s.ops);
  s.read_bytes = -1;
  EXPECT_NE(s.Validate().message().find("read-bytes"), std::string::npos);
}

TEST(ThreadModelTest, TheWakerAsVictimPreemptsOnlyWriters) {
  // With the waker as the victim a wakeup can only take the core of the
  // thread that wrote: fewer preemptions than taking the longest runner's.
  Scenario s = Threads(128);
  s.wakeup_preempt_ns = 10000;
  const ScenarioResult longest = SimOk(s);
  s.preempt_victim = PreemptVictim::kWaker;
  const ScenarioResult waker = SimOk(s);
  EXPECT_EQ(waker.completed, s.ops);
  EXPECT_LT(waker.preemptions, longest.preemptions);
  EXPECT_EQ(SimOk(s).ToJson(), waker.ToJson());  // deterministic
  EXPECT_TRUE(ParsePreemptVictim("waker").ok());
  EXPECT_NE(ParsePreemptVictim("oldest").status().message().find("preempt-victim"),
            std::string::npos);
}

TEST(ThreadModelTest, PerCoreQueuesDoLessThanOneQueueForAll) {
  // With one queue per core a core can idle while a thread waits on the
  // other (one queue for all never idles a core while a thread waits), so
  // the cores do less in the same time. Every operation completes, with
  // and without the cache-hot rule, deterministically.
  // Few slots, so a thread often wakes while both cores are busy and
  // queues on its own; with 128 slots the cores never run short of work
  // and the two differ by less than one seed from the next.
  Scenario s = Threads(8);
  s.window = 4096;  // no violations: the cores' throughput alone
  s.wakeup_preempt_ns = 10000;
  const ScenarioResult global = SimOk(s);
  s.per_core_queues = true;
  const ScenarioResult hot = SimOk(s);
  EXPECT_EQ(hot.completed, s.ops);
  EXPECT_EQ(SimOk(s).ToJson(), hot.ToJson());
  // The idle core is the mechanism, the lower goodput its effect.
  EXPECT_GT(hot.idle_fraction, global.idle_fraction + 0.005);
  EXPECT_LT(hot.ops_per_s, global.ops_per_s);
  // A cache that cools at once lets an idle core take the waiting thread.
  s.migrate_ns = 0;
  const ScenarioResult cold = SimOk(s);
  EXPECT_EQ(cold.completed, s.ops);
  EXPECT_LT(cold.idle_fraction, hot.idle_fraction);
  s.migrate_ns = -1;
  EXPECT_NE(s.Validate().message().find("migrate-ns"), std::string::npos);
}

TEST(ThreadModelTest, ABusyCoresWakeupPreemptsItLater) {
  // A wakeup's preemption of a busy core lands busy_wake_ns after it: the
  // victims that leave their cores first are not preempted, so the later it
  // lands the fewer preemptions, and none lands when it comes after every
  // victim has left (only time slices then deschedule, as with no wakeup
  // preemption at all). Every operation completes, deterministically.
  Scenario s = Threads(128);
  s.window = 4096;  // no violations: the scheduling alone
  s.per_core_queues = true;
  s.wakeup_preempt_ns = 10000;
  const ScenarioResult at_once = SimOk(s);
  s.busy_wake_ns.assign(kPauseQuantiles, 50000);
  const ScenarioResult later = SimOk(s);
  EXPECT_EQ(later.completed, s.ops);
  EXPECT_EQ(SimOk(s).ToJson(), later.ToJson());
  EXPECT_LT(later.preemptions, at_once.preemptions);
  s.busy_wake_ns.assign(kPauseQuantiles, 10000000000);  // 10 s: after everything
  const ScenarioResult never = SimOk(s);
  EXPECT_LT(never.preemptions, later.preemptions);
  s.busy_wake_ns.clear();
  s.wakeup_preempt_ns = 0;
  EXPECT_EQ(never.preemptions, SimOk(s).preemptions);
  s.busy_wake_ns = {1, 2, 3};
  EXPECT_NE(s.Validate().message().find("busy-wake-ns"), std::string::npos);
  s.busy_wake_ns.assign(kPauseQuantiles, 1000);
  s.busy_wake_ns[0] = 2000;
  EXPECT_NE(s.Validate().message().find("decrease"), std::string::npos);
}

TEST(ThreadModelTest, AnIdleCoresWakeupFollowsItsCurveByIdleTime) {
  // A flat curve is the constant wakeup, bit for bit; a curve that wakes
  // briefly idle cores sooner lies between no wakeup cost and the long-idle
  // cost for all.
  Scenario s = Threads(8);
  s.per_core_queues = true;
  s.wakeup_preempt_ns = 10000;
  s.idle_wake_ns = 200000;
  const ScenarioResult constant = SimOk(s);
  s.idle_wake_after_ns = {1000, 50000, 100000};
  s.idle_wake_curve_ns = {200000, 200000, 200000};
  EXPECT_EQ(SimOk(s).ToJson(), constant.ToJson());
  s.idle_wake_curve_ns = {10000, 10000, 200000};
  const ScenarioResult curve = SimOk(s);
  EXPECT_EQ(curve.completed, s.ops);
  s.idle_wake_ns = 0;
  s.idle_wake_after_ns.clear();
  s.idle_wake_curve_ns.clear();
  const ScenarioResult at_once = SimOk(s);
  EXPECT_LT(curve.p50_ns, constant.p50_ns);
  EXPECT_GT(curve.p50_ns, at_once.p50_ns);
  s.idle_wake_after_ns = {1000, 500};
  s.idle_wake_curve_ns = {1, 2};
  EXPECT_NE(s.Validate().message().find("rise"), std::string::npos);
  s.idle_wake_curve_ns = {1};
  EXPECT_NE(s.Validate().message().find("as many"), std::string::npos);
}

TEST(ThreadModelTest, WokenThreadsAheadOfPreemptedOnesKeepThoseOffLonger) {
  // A thread preempted by a wakeup waits behind every thread that wakes
  // meanwhile: the receivers preempted while they hold freshly numbered
  // calls hold them longer (the hold stage's tail). One run queue for both
  // cores and a window nothing falls out of, so that only the scheduling
  // differs; summed over seeds, each run deterministic. 20000 calls a run:
  // at 2000 the p99 is a handful of calls, and five seeds' sum can go
  // either way.
  Scenario s = Threads(128);
  s.window = 4096;
  s.wakeup_preempt_ns = 10000;
  s.ops = 20000;
  int64_t in_order = 0, woken_first = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    s.seed = seed;
    s.woken_first_share = 0;
    in_order += SimOk(s).stage_p99_ns[1];
    s.woken_first_share = 1;
    const ScenarioResult r = SimOk(s);
    EXPECT_EQ(r.completed, s.ops);
    EXPECT_EQ(SimOk(s).ToJson(), r.ToJson());
    woken_first += r.stage_p99_ns[1];
  }
  EXPECT_GT(woken_first, in_order);
  s.woken_first_share = 0.5;
  EXPECT_EQ(SimOk(s).completed, s.ops);
  s.woken_first_share = 1.5;
  EXPECT_NE(s.Validate().message().find("woken-first-share"), std::string::npos);
}

TEST(ThreadModelTest, ScenarioJsonRoundTripsTheThreadFields) {
  Scenario s = Threads(64);
  s.wakeup_preempt_ns = 1234;
  s.batching = false;
  s.read_bytes = 65536;
  s.preempt_victim = PreemptVictim::kWaker;
  s.per_core_queues = true;
  s.migrate_ns = 123456;
  s.pause_per_s = 321.5;
  s.pause_ns = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  s.busy_wake_ns = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  s.idle_wake_after_ns = {100, 200};
  s.idle_wake_curve_ns = {7, 9};
  s.woken_first_share = 0.25;
  auto back = ScenarioFromJson(s.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), s.ToJson());
  s.slice_ns = 5;
  EXPECT_NE(s.Validate().message().find("slice-ns"), std::string::npos);
}

TEST(ThreadModelTest, ACallWhoseTimerRanOutAtTheServerIsResentWhenDroppedNotBackInTime) {
  // A timeout shorter than the server's queue: calls wait at the server
  // past their client's timer and are then dropped below the window. The
  // timer is scheduled at the drop (simulator.cc ScheduleTimeout); one due
  // before that must not take the run back in time (the event loop refuses
  // an event in the past as a model bug). Every seed completes.
  Scenario s = EveryMechanismScenario();
  s.nconnect = 5;
  s.window = 16;
  s.reaction = rpc::WindowPolicy::kDrop;
  s.retransmit_timeout_ns = 5000000;
  s.op = Op::kWrite;
  s.io_size = 8192;
  s.pause_per_s = 20000;
  s.ops = 5000;
  int64_t drops = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    s.seed = seed;
    const auto r = Simulate(s);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.status().ToString();
    EXPECT_EQ(r->completed, s.ops) << seed;
    EXPECT_GT(r->p50_ns, 0) << seed;
    drops += r->drops;
  }
  EXPECT_GT(drops, 0);
}

}  // namespace
}  // namespace secmode::sim
