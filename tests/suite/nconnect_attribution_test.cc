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

// A call written on client connection `conn` at `written` us and checked
// by the server's connection `server_conn` at `checked` us.
void Call(rpc::CallTrace& trace, uint32_t seq, uint32_t conn, uint64_t written,
          uint32_t server_conn, uint64_t checked) {
  ClientCallEvent c;
  c.context = 9;
  c.seq = seq;
  c.conn = conn;
  c.numbered_ns = c.queued_ns = c.written_ns = written * 1000;
  trace.Record(c);
  ServerCallEvent s;
  s.context = 9;
  s.seq = seq;
  s.conn = server_conn;
  s.read_ns = s.checked_ns = checked * 1000;
  trace.Record(s);
}

void Conn(rpc::CallTrace& trace, rpc::SetupEventKind kind, uint32_t conn, uint64_t us) {
  trace.Record(rpc::SetupEvent{kind, conn, us * 1000});
}

const SetupStep& Step(const ReconnectTimes& r, const std::string& name) {
  for (const auto& s : r.steps) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no step " << name;
  static const SetupStep none;
  return none;
}

TEST(AttributionTest, AReconnectIsCutIntoItsStepsThroughTheCallsAtBothEnds) {
  using K = rpc::SetupEventKind;
  rpc::CallTrace trace(64);
  // Client connection 1 talks to server connection 1 until the server
  // closes it; its replacement is the server's connection 5.
  Call(trace, 1, 1, 100, 1, 110);
  Conn(trace, K::kServerClosed, 1, 200);
  Conn(trace, K::kClientEof, 1, 260);
  Conn(trace, K::kClientConnected, 1, 300);
  Conn(trace, K::kServerAccepted, 5, 350);
  Conn(trace, K::kServerStarted, 5, 420);
  Call(trace, 2, 1, 480, 5, 610);
  Conn(trace, K::kClientResent, 1, 500);
  // A connection on another client connection that never came back: it
  // counts, but has no steps beyond its end of stream.
  Call(trace, 3, 2, 150, 2, 160);
  Conn(trace, K::kClientEof, 2, 900);
  // An accept that ran before its client's connect returned.
  Conn(trace, K::kClientEof, 3, 1000);
  Conn(trace, K::kServerAccepted, 6, 1010);
  Conn(trace, K::kServerStarted, 6, 1030);
  Conn(trace, K::kClientConnected, 3, 1020);
  Call(trace, 4, 3, 1040, 6, 1050);

  const ReconnectTimes r = AttributeReconnects(trace);
  EXPECT_EQ(r.reconnects, 3);
  EXPECT_EQ(Step(r, "close -> eof").count, 1);
  EXPECT_DOUBLE_EQ(Step(r, "close -> eof").median_us, 60);
  EXPECT_EQ(Step(r, "eof -> connected").count, 2);
  EXPECT_DOUBLE_EQ(Step(r, "eof -> connected").p90_us, 40);
  const SetupStep& accepted = Step(r, "connected -> accepted");
  EXPECT_EQ(accepted.count, 2);
  EXPECT_DOUBLE_EQ(accepted.median_us, 50);
  EXPECT_DOUBLE_EQ(Step(r, "accepted -> started").median_us, 70);
  EXPECT_EQ(Step(r, "eof -> resent").count, 1);
  EXPECT_DOUBLE_EQ(Step(r, "eof -> resent").median_us, 240);
  EXPECT_EQ(Step(r, "eof -> first checked").count, 2);
  EXPECT_DOUBLE_EQ(Step(r, "eof -> first checked").p90_us, 350);
  const nlohmann::json j = r.ToJson();
  EXPECT_EQ(j["reconnects"], 3);
  EXPECT_EQ(j["steps"].size(), 6u);
}

TEST(AttributionTest, AnAcceptBeforeTheConnectReturnedIsANegativeStep) {
  using K = rpc::SetupEventKind;
  rpc::CallTrace trace(16);
  Conn(trace, K::kClientEof, 0, 1000);
  Conn(trace, K::kServerAccepted, 4, 1010);
  Conn(trace, K::kClientConnected, 0, 1020);
  Call(trace, 1, 0, 1040, 4, 1050);
  EXPECT_DOUBLE_EQ(Step(AttributeReconnects(trace), "connected -> accepted").median_us, -10);
}

TEST(AttributionTest, AnEndWithNoCallWrittenSinceItsConnectHasNoClose) {
  using K = rpc::SetupEventKind;
  rpc::CallTrace trace(16);
  // Client connection 0's first connection ends; the calls for its
  // replacement are all still held (a skew's delay line) when the server
  // closes that one too: the second end is not timed from the first close.
  Call(trace, 1, 0, 100, 1, 110);
  Conn(trace, K::kServerClosed, 1, 200);
  Conn(trace, K::kClientEof, 0, 260);
  Conn(trace, K::kClientConnected, 0, 300);
  Conn(trace, K::kServerAccepted, 7, 310);
  Conn(trace, K::kServerClosed, 7, 10250);
  Conn(trace, K::kClientEof, 0, 10300);
  const ReconnectTimes r = AttributeReconnects(trace);
  EXPECT_EQ(r.reconnects, 2);
  EXPECT_EQ(Step(r, "close -> eof").count, 1);
  EXPECT_DOUBLE_EQ(Step(r, "close -> eof").p90_us, 60);
}

TEST(AttributionTest, AReCreationTakesFromItsBeginningToItsNewContext) {
  using K = rpc::SetupEventKind;
  rpc::CallTrace trace(16);
  Conn(trace, K::kClientRecreateBegan, 0, 100);
  Conn(trace, K::kClientRecreateDone, 0, 2100);
  Conn(trace, K::kClientRecreateBegan, 1, 3000);
  Conn(trace, K::kClientRecreateDone, 1, 6000);
  Conn(trace, K::kClientRecreateBegan, 0, 7000);  // the run stopped before it was done
  const SetupStep r = AttributeRecreations(trace);
  EXPECT_EQ(r.name, "began -> done");
  EXPECT_EQ(r.count, 2);
  EXPECT_DOUBLE_EQ(r.median_us, 3000);
  EXPECT_EQ(r.ToJson()["count"], 2);
  EXPECT_EQ(AttributeRecreations(rpc::CallTrace(4)).count, 0);
}

TEST(AttributionTest, AfterANewContextEachReceiversFirstCallIsTimed) {
  using K = rpc::SetupEventKind;
  rpc::CallTrace trace(64);
  // A call numbered by receiver `by` at `us`.
  const auto numbered = [&trace](uint32_t by, uint64_t us, TraceThread who) {
    ClientCallEvent c;
    c.context = 3;
    c.numbered_by = who;
    c.numbered_by_index = by;
    c.numbered_ns = us * 1000;
    trace.Record(c);
  };
  Conn(trace, K::kClientRecreateBegan, 0, 1000);
  Conn(trace, K::kClientRecreateDone, 0, 3000);
  numbered(0, 2000, TraceThread::kReceiver);  // before the new context: not counted
  numbered(0, 3040, TraceThread::kReceiver);
  numbered(0, 3050, TraceThread::kReceiver);  // its second: not counted
  numbered(1, 3200, TraceThread::kReceiver);
  numbered(2, 3500, TraceThread::kMonitor);  // not a receiver
  Conn(trace, K::kClientRecreateBegan, 1, 4000);
  numbered(2, 4100, TraceThread::kReceiver);  // after the next re-creation began
  Conn(trace, K::kClientRecreateDone, 1, 6000);
  numbered(2, 6400, TraceThread::kReceiver);
  const SetupStep r = AttributeResumes(trace);
  EXPECT_EQ(r.name, "done -> each receiver's first call");
  // First: receivers 0 and 1 (40 and 200 us); second: 0 none, 1 none, 2 at 400 us.
  EXPECT_EQ(r.count, 3);
  EXPECT_DOUBLE_EQ(r.median_us, 200);
  EXPECT_DOUBLE_EQ(r.p90_us, 400);
  EXPECT_EQ(AttributeResumes(rpc::CallTrace(4)).count, 0);
}

TEST(AttributionTest, ATraceWithoutReconnectsHasNone) {
  rpc::CallTrace trace(16);
  Call(trace, 1, 0, 10, 0, 20);
  const ReconnectTimes r = AttributeReconnects(trace);
  EXPECT_EQ(r.reconnects, 0);
  for (const auto& s : r.steps) EXPECT_EQ(s.count, 0) << s.name;
}

}  // namespace
}  // namespace secmode::suite
