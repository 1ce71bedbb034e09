// Attribution of window violations from a call trace: the stage whose time
// exceeds its median the most is the cause, with the thread that held the
// call there; calls seen at one end only are not matched.
#include "suite/nconnect_attribution.h"

#include <gtest/gtest.h>

namespace secmode::suite {
namespace {

using rpc::ClientCallEvent;
using rpc::SeqVerdict;
using rpc::ServerCallEvent;
using rpc::TraceThread;

// A call numbered at `t` (us) that spends the given microseconds in each stage.
void Add(rpc::CallTrace& trace, uint32_t seq, uint64_t t, uint64_t encode, uint64_t hold,
         uint64_t socket, uint64_t check, SeqVerdict verdict, uint32_t highest,
         TraceThread writer = TraceThread::kReceiver) {
  ClientCallEvent c;
  c.context = 7;
  c.seq = seq;
  c.conn = seq % 4;
  c.numbered_by = TraceThread::kReceiver;
  c.written_by = writer;
  c.numbered_ns = t * 1000;
  c.queued_ns = c.numbered_ns + encode * 1000;
  c.written_ns = c.queued_ns + hold * 1000;
  trace.Record(c);
  ServerCallEvent s;
  s.context = 7;
  s.seq = seq;
  s.conn = c.conn;
  s.read_ns = c.written_ns + socket * 1000;
  s.checked_ns = s.read_ns + check * 1000;
  s.verdict = verdict;
  s.highest = highest;
  trace.Record(s);
}

TEST(AttributionTest, TheStageWithTheLargestExcessIsTheCause) {
  rpc::CallTrace trace(1024);
  for (uint32_t i = 1; i <= 100; ++i) Add(trace, i, i * 10, 5, 20, 30, 10, SeqVerdict::kAccept, i);
  // Held 2 ms in the client sender (the skew delay line), 40 below.
  Add(trace, 101, 2000, 5, 2000, 30, 10, SeqVerdict::kBelowWindow, 141, TraceThread::kSender);
  // Waited 1 ms in the socket.
  Add(trace, 102, 2100, 5, 20, 1030, 10, SeqVerdict::kBelowWindow, 150);
  Add(trace, 103, 2200, 5, 20, 1530, 10, SeqVerdict::kBelowWindow, 150);
  // Seen by the server only (its client record is missing).
  ServerCallEvent orphan;
  orphan.context = 7;
  orphan.seq = 999;
  orphan.verdict = SeqVerdict::kBelowWindow;
  trace.Record(orphan);

  Attribution a = AttributeViolations(trace);
  EXPECT_EQ(a.calls, 104);
  EXPECT_EQ(a.violations, 4);
  EXPECT_EQ(a.matched, 3);
  EXPECT_DOUBLE_EQ(a.stage_median_us[1], 20);
  ASSERT_EQ(a.causes.size(), 2u);
  EXPECT_EQ(a.causes[0].stage, "socket");
  EXPECT_EQ(a.causes[0].thread, "server connection thread");
  EXPECT_EQ(a.causes[0].count, 2);
  EXPECT_DOUBLE_EQ(a.causes[0].max_excess_us, 1500);
  EXPECT_EQ(a.causes[1].stage, "hold");
  EXPECT_EQ(a.causes[1].thread, "client sender");
  EXPECT_DOUBLE_EQ(a.causes[1].median_excess_us, 1980);
  EXPECT_DOUBLE_EQ(a.causes[1].median_lag, 40);
  EXPECT_EQ(a.ToJson()["causes"].size(), 2u);
}

TEST(AttributionTest, AFullTraceCountsWhatItCouldNotKeep) {
  rpc::CallTrace trace(2);
  for (uint32_t i = 1; i <= 5; ++i) Add(trace, i, i, 1, 1, 1, 1, SeqVerdict::kAccept, i);
  EXPECT_EQ(trace.client_events().size(), 2u);
  EXPECT_EQ(trace.dropped(), 6u);
  EXPECT_EQ(AttributeViolations(trace).dropped_events, 6u);
}

}  // namespace
}  // namespace secmode::suite
