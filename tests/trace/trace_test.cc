// trace/: frames of every link type down to TCP, a direction's stream put
// back in order across retransmissions, holes and a snap length, RPC records
// found again after lost bytes, and the analysis of calls, replies and
// RPCSEC_GSS sequence numbers over a capture written by secmode's own pcap
// writer (common/pcap.h) and read back through libpcap.
#include <gtest/gtest.h>
#include <pcap/dlt.h>

#include <deque>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/hex.h"
#include "common/pcap.h"
#include "common/subprocess.h"
#include "harness/results.h"
#include "render/report.h"
#include "rpc/nfs.h"
#include "rpc/record.h"
#include "rpc/rpc_msg.h"
#include "rpc/xdr.h"
#include "tests/support/temp_dir.h"
#include "tests/trace/segment.h"
#include "trace/capture.h"
#include "trace/rpc_records.h"
#include "trace/rpc_trace.h"
#include "trace/tcp_stream.h"

namespace secmode::trace {
namespace {

using common::Bytes;
using common::ByteView;

void Put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}
void Put32(Bytes& b, uint32_t v) {
  Put16(b, static_cast<uint16_t>(v >> 16));
  Put16(b, static_cast<uint16_t>(v));
}

// A TCP header (20 bytes, no options) and `payload`.
Bytes Tcp(uint16_t sport, uint16_t dport, uint32_t seq, uint8_t flags, const Bytes& payload) {
  Bytes b;
  Put16(b, sport);
  Put16(b, dport);
  Put32(b, seq);
  Put32(b, 77);  // ack
  b.push_back(5 << 4);
  b.push_back(flags);
  Put16(b, 65535);
  Put32(b, 0);  // checksum, urgent pointer
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

Bytes Ipv4(const Bytes& tcp, uint16_t frag = 0) {
  Bytes b = {0x45, 0};
  Put16(b, static_cast<uint16_t>(20 + tcp.size()));
  Put16(b, 1);
  Put16(b, frag);
  b.insert(b.end(), {64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2});
  b.insert(b.end(), tcp.begin(), tcp.end());
  return b;
}

// IPv6 with a destination-options header of 8 bytes before the TCP header.
Bytes Ipv6(const Bytes& tcp) {
  Bytes b = {0x60, 0, 0, 0};
  Put16(b, static_cast<uint16_t>(8 + tcp.size()));
  b.push_back(60);  // next: destination options
  b.push_back(64);
  for (int i = 0; i < 16; ++i) b.push_back(i == 15 ? 1 : 0);  // ::1
  for (int i = 0; i < 16; ++i) b.push_back(i == 15 ? 2 : 0);  // ::2
  b.insert(b.end(), {6, 0, 1, 4, 0, 0, 0, 0});                // next TCP, 8 bytes, PadN
  b.insert(b.end(), tcp.begin(), tcp.end());
  return b;
}

Bytes Cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void ExpectSegment(const TcpSegment& s, const Bytes& payload) {
  EXPECT_EQ(s.src.port, 700);
  EXPECT_EQ(s.dst.port, 2049);
  EXPECT_EQ(s.seq, 1000u);
  EXPECT_EQ(s.ack, 77u);
  EXPECT_EQ(s.flags, kTcpAck);
  EXPECT_EQ(s.payload_len, payload.size());
  EXPECT_EQ(Bytes(s.payload.begin(), s.payload.end()), payload);
}

TEST(CaptureTest, EveryLinkTypeDecodesToTheSameSegment) {
  const Bytes payload = {1, 2, 3, 4, 5};
  const Bytes ip = Ipv4(Tcp(700, 2049, 1000, kTcpAck, payload));
  const Bytes mac = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  struct Case {
    const char* name;
    int linktype;
    Bytes frame;
  };
  const std::vector<Case> cases = {
      {"ethernet", DLT_EN10MB, Cat(Cat(mac, {0x08, 0x00}), ip)},
      {"802.1Q in 802.1ad", DLT_EN10MB,
       Cat(Cat(mac, {0x88, 0xa8, 0, 5, 0x81, 0x00, 0, 7, 0x08, 0x00}), ip)},
      {"sll", DLT_LINUX_SLL, Cat({0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x08, 0x00}, ip)},
      {"sll2", DLT_LINUX_SLL2,
       Cat({0x08, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0}, ip)},
      {"raw", DLT_RAW, ip},
      {"null little-endian", DLT_NULL, Cat({2, 0, 0, 0}, ip)},
      {"null big-endian", DLT_NULL, Cat({0, 0, 0, 2}, ip)},
      {"loop", DLT_LOOP, Cat({0, 0, 0, 2}, ip)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TcpSegment s;
    ASSERT_EQ(DecodeFrame(c.linktype, c.frame, static_cast<uint32_t>(c.frame.size()), &s),
              FrameKind::kTcp);
    ExpectSegment(s, payload);
    EXPECT_EQ(s.src.ToString(), "10.0.0.1:700");
    EXPECT_EQ(s.dst.ToString(), "10.0.0.2:2049");
  }
  TcpSegment s;
  const Bytes v6 = Ipv6(Tcp(700, 2049, 1000, kTcpAck, payload));
  ASSERT_EQ(DecodeFrame(DLT_RAW, v6, static_cast<uint32_t>(v6.size()), &s), FrameKind::kTcp);
  ExpectSegment(s, payload);
  EXPECT_EQ(s.src.ToString(), "[::1]:700");
}

TEST(CaptureTest, CutFragmentedAndForeignFramesAreCountedNotRead) {
  const Bytes payload(100, 9);
  const Bytes ip = Ipv4(Tcp(700, 2049, 1000, kTcpAck, payload));
  TcpSegment s;
  // A snap length that keeps the headers and 10 bytes of the payload: the
  // payload is known to be 100 bytes long.
  const ByteView cut(ip.data(), 20 + 20 + 10);
  ASSERT_EQ(DecodeFrame(DLT_RAW, cut, static_cast<uint32_t>(ip.size()), &s), FrameKind::kTcp);
  EXPECT_EQ(s.payload_len, 100u);
  EXPECT_EQ(s.payload.size(), 10u);
  // Every cut inside the headers.
  for (size_t n = 0; n < 40; ++n) {
    EXPECT_EQ(DecodeFrame(DLT_RAW, ByteView(ip.data(), n), static_cast<uint32_t>(ip.size()), &s),
              FrameKind::kTruncated)
        << n;
  }
  const Bytes frag = Ipv4(Tcp(700, 2049, 1000, kTcpAck, payload), 0x2000);
  EXPECT_EQ(DecodeFrame(DLT_RAW, frag, static_cast<uint32_t>(frag.size()), &s),
            FrameKind::kFragment);
  Bytes udp = ip;
  udp[9] = 17;
  EXPECT_EQ(DecodeFrame(DLT_RAW, udp, static_cast<uint32_t>(udp.size()), &s), FrameKind::kNotTcp);
  Bytes bad = ip;
  bad[0] = 0x43;  // a header length of 12 bytes
  EXPECT_EQ(DecodeFrame(DLT_RAW, bad, static_cast<uint32_t>(bad.size()), &s),
            FrameKind::kMalformed);
  EXPECT_FALSE(LinkTypeKnown(DLT_IEEE802_11));
  // A VLAN tag cut short.
  const Bytes tag = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x81, 0x00, 0, 7};
  EXPECT_EQ(DecodeFrame(DLT_EN10MB, tag, 100, &s), FrameKind::kTruncated);
}

// IPv6 with a hop-by-hop header and a fragment header of an unfragmented
// packet before TCP; a fragment further on is counted, not read.
TEST(CaptureTest, Ipv6ExtensionHeadersAreWalkedToTcp) {
  const Bytes payload = {7, 7, 7};
  const Bytes tcp = Tcp(700, 2049, 1000, kTcpAck, payload);
  auto packet = [&](uint16_t frag_field) {
    Bytes b = {0x60, 0, 0, 0};
    Put16(b, static_cast<uint16_t>(8 + 8 + tcp.size()));
    b.push_back(0);  // hop-by-hop
    b.push_back(64);
    for (int i = 0; i < 32; ++i) b.push_back(static_cast<uint8_t>(i));
    b.insert(b.end(), {44, 0, 1, 4, 0, 0, 0, 0});  // next: fragment; PadN
    b.insert(b.end(), {6, 0});                     // next: TCP
    Put16(b, frag_field);
    Put32(b, 99);  // identification
    b.insert(b.end(), tcp.begin(), tcp.end());
    return b;
  };
  TcpSegment s;
  const Bytes whole = packet(0);
  ASSERT_EQ(DecodeFrame(DLT_IPV6, whole, static_cast<uint32_t>(whole.size()), &s), FrameKind::kTcp);
  ExpectSegment(s, payload);
  const Bytes later = packet(8 << 3);  // offset 8 x 8 bytes
  EXPECT_EQ(DecodeFrame(DLT_IPV6, later, static_cast<uint32_t>(later.size()), &s),
            FrameKind::kFragment);
  const Bytes first = packet(1);  // more fragments follow
  EXPECT_EQ(DecodeFrame(DLT_IPV6, first, static_cast<uint32_t>(first.size()), &s),
            FrameKind::kFragment);
  for (size_t n = 40; n < 56; ++n) {  // cut inside the extension headers
    EXPECT_EQ(
        DecodeFrame(DLT_IPV6, ByteView(whole.data(), n), static_cast<uint32_t>(whole.size()), &s),
        FrameKind::kTruncated)
        << n;
  }
}

// What a sink was handed: the stream with '?' for every byte not captured.
struct StreamText : StreamSink {
  void Bytes(int64_t, ByteView data, uint64_t len) override {
    text.append(data.begin(), data.end());
    text.append(len - data.size(), '?');
  }
  std::string text;
};

TcpSegment Seg(uint32_t seq, const std::string& data, uint32_t wire_len = 0, uint8_t flags = 0) {
  static std::deque<std::string> keep;  // the segments' bytes outlive them
  keep.push_back(data);
  TcpSegment s;
  s.seq = seq;
  s.flags = flags | kTcpAck;
  s.payload = common::AsBytes(keep.back());
  s.payload_len = wire_len ? wire_len : static_cast<uint32_t>(data.size());
  return s;
}

TEST(TcpStreamTest, RetransmittedOverlappingAndLateSegmentsMakeOneStream) {
  TcpDirection d;
  StreamText out;
  d.Add(Seg(99, "", 0, kTcpSyn), out);
  d.Add(Seg(100, "abcd"), out);
  d.Add(Seg(100, "abcd"), out);  // retransmitted
  d.Add(Seg(102, "cdef"), out);  // overlaps
  d.Add(Seg(110, "klmn"), out);  // after a hole
  d.Add(Seg(106, "ghij"), out);  // the hole, late
  d.Add(Seg(108, "ij"), out);    // inside what came
  EXPECT_EQ(out.text, "abcdefghijklmn");
  EXPECT_EQ(d.counts().retransmitted, 2u);
  EXPECT_EQ(d.counts().out_of_order, 1u);
  EXPECT_EQ(d.counts().lost, 0u);
}

TEST(TcpStreamTest, AHoleIsLostWhenTheReceiverAcknowledgedPastItOrTheCaptureEnds) {
  TcpDirection d;
  StreamText out;
  d.Add(Seg(0, "ab"), out);  // begun mid-connection
  d.Add(Seg(5, "fg"), out);
  EXPECT_EQ(out.text, "ab");
  d.Acked(3, 0, out);  // the receiver had byte 2: lost from the capture
  EXPECT_EQ(out.text, "ab?");
  d.Acked(4, 0, out);  // and byte 3
  EXPECT_EQ(out.text, "ab??");
  d.Acked(7, 0, out);
  EXPECT_EQ(out.text, "ab???fg");
  d.Add(Seg(9, "jk"), out);
  d.Finish(out);
  EXPECT_EQ(out.text, "ab???fg??jk");
  EXPECT_EQ(d.counts().lost, 5u);
  EXPECT_EQ(d.counts().bytes, 11u);
  EXPECT_EQ(d.counts().captured, 6u);
}

TEST(TcpStreamTest, ASnapLengthKeepsThePlaceAndSequenceNumbersWrap) {
  TcpDirection d;
  StreamText out;
  d.Add(Seg(0xfffffffd, "abc", 6), out);  // 6 on the wire, 3 kept; wraps
  d.Add(Seg(3, "gh"), out);
  EXPECT_EQ(out.text, "abc???gh");
  EXPECT_EQ(d.counts().lost, 0u);
  EXPECT_EQ(d.counts().captured, 5u);
}

TEST(TcpStreamTest, WhatWaitsBehindAHoleIsBounded) {
  TcpDirection d(2 * (TcpDirection::kEntryCost + 4));
  StreamText out;
  d.Add(Seg(0, "a"), out);
  d.Add(Seg(2, "cdef"), out);
  d.Add(Seg(6, "ghij"), out);  // two segments of 4 bytes wait: at the bound
  EXPECT_EQ(out.text, "a");
  d.Add(Seg(10, "k"), out);  // beyond it: the hole is given up
  EXPECT_EQ(out.text, "a?cdefghijk");
}

// An RPC record: its mark and `message`.
Bytes Framed(const Bytes& message) {
  Bytes wire;
  rpc::FrameRecord(message, &wire);
  return wire;
}

// An NFSv4 COMPOUND call with AUTH_SYS and `body` (by default 4 bytes that
// are no COMPOUND4args).
Bytes SysCall(uint32_t xid, const Bytes& body = {0xab, 0xcd, 0xef, 0x01}) {
  Bytes m;
  rpc::AuthSysParms p;
  p.machine = "client";
  Bytes cred;
  rpc::EncodeAuthSys(p, &cred);
  rpc::EncodeCallPrefix(xid, 100003, 4, 1, rpc::kAuthSys, cred, &m);
  rpc::XdrEncoder e(&m);
  e.PutU32(rpc::kAuthNone);
  e.PutU32(0);
  e.PutRaw(body);
  return m;
}

struct Records : RecordSink {
  void Record(const RecordSeen& r) override {
    rpc::CallHeader h;
    xids.push_back(rpc::DecodeCallHeader(r.head, &h).ok() ? static_cast<int64_t>(h.xid) : -1);
    lengths.push_back(r.length);
    resynced.push_back(r.resynced);
  }
  std::vector<int64_t> xids;
  std::vector<uint64_t> lengths;
  std::vector<bool> resynced;
};

TEST(RpcRecordsTest, RecordsAcrossSegmentsFragmentsAndUncapturedBodies) {
  Records got;
  RecordWalker w(got);
  const Bytes a = Framed(SysCall(1)), b = Framed(SysCall(2));
  Bytes stream = Cat(a, b);
  // Fed a byte at a time.
  for (uint8_t byte : stream) w.Bytes(0, ByteView(&byte, 1), 1);
  // A record in two fragments.
  const Bytes m = SysCall(3);
  Bytes two;
  Put32(two, 10);
  two.insert(two.end(), m.begin(), m.begin() + 10);
  Put32(two, rpc::kLastFragment | static_cast<uint32_t>(m.size() - 10));
  two.insert(two.end(), m.begin() + 10, m.end());
  w.Bytes(0, two, two.size());
  // A record whose header was captured and whose body of 100000 bytes was
  // not: the next record is still found where its mark says.
  Bytes big = SysCall(4);
  Bytes head;
  Put32(head, rpc::kLastFragment | static_cast<uint32_t>(big.size() + 100000));
  head.insert(head.end(), big.begin(), big.end());
  w.Bytes(0, head, head.size() + 100000);
  const Bytes c = Framed(SysCall(5));
  w.Bytes(0, c, c.size());
  EXPECT_EQ(got.xids, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(got.lengths[3], big.size() + 100000);
  EXPECT_EQ(w.counts().lost_place, 0u);
}

TEST(RpcRecordsTest, AfterALostMarkTheNextCallIsFoundAndTheBytesPassedOverCounted) {
  Records got;
  RecordWalker w(got);
  const Bytes a = Framed(SysCall(1));
  w.Bytes(0, a, a.size());
  // Lost: the rest of the next record and 6 bytes beyond its end.
  const Bytes b = Framed(SysCall(2));
  w.Bytes(0, ByteView(b.data(), 10), 10);
  w.Bytes(0, {}, b.size() - 10 + 6);
  EXPECT_TRUE(w.searching());
  // Junk, then a record that starts in the middle of what comes.
  const Bytes junk = {0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7};
  const Bytes c = Cat(junk, Cat(Framed(SysCall(3)), Framed(SysCall(4))));
  // In two pieces, cut inside the header of call 3.
  w.Bytes(0, ByteView(c.data(), junk.size() + 20), junk.size() + 20);
  w.Bytes(0, ByteView(c).subspan(junk.size() + 20), c.size() - junk.size() - 20);
  // Call 2 ends where its mark said, its header not captured (-1).
  EXPECT_EQ(got.xids, (std::vector<int64_t>{1, -1, 3, 4}));
  EXPECT_EQ(got.resynced, (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(w.counts().lost_place, 1u);
  EXPECT_EQ(w.counts().records_cut, 0u);
  EXPECT_EQ(w.counts().passed_over, 6 + junk.size());
  // A mark that announces more than the largest record loses the place.
  Bytes huge;
  Put32(huge, rpc::kLastFragment | 0x7fffffff);
  w.Bytes(0, huge, huge.size());
  EXPECT_TRUE(w.searching());
}

// An RPCSEC_GSS DATA call on context `handle` with sequence number `seq`.
Bytes GssCall(uint32_t xid, uint8_t handle, uint32_t seq) {
  rpc::GssCred cred;
  cred.proc = rpc::kGssData;
  cred.seq = seq;
  cred.service = rpc::kGssSvcIntegrity;
  const uint8_t h[4] = {0xc0, 0, 0, handle};
  cred.handle = ByteView(h, 4);
  Bytes body, m;
  rpc::EncodeGssCred(cred, &body);
  rpc::EncodeCallPrefix(xid, 100003, 4, 1, rpc::kRpcsecGss, body, &m);
  rpc::XdrEncoder e(&m);
  e.PutU32(rpc::kRpcsecGss);
  e.PutOpaque(Bytes(28, 7));  // the verifier (a MIC)
  return m;
}

Bytes Reply(uint32_t xid, uint32_t auth_stat = rpc::kAuthOk) {
  Bytes m;
  if (auth_stat == rpc::kAuthOk) {
    rpc::EncodeAcceptedReply(xid, rpc::kAuthNone, {}, rpc::kSuccess, &m);
  } else {
    rpc::EncodeAuthErrorReply(xid, auth_stat, &m);
  }
  return m;
}

RpcTrace TraceOf(const Bytes& capture, const TraceOptions& o) {
  auto reader = CaptureReader::FromBytes(capture, "test.pcap");
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  RpcTraceBuilder b(o);
  TcpSegment s;
  while (reader.ok()) {
    auto more = (*reader)->Next(&s);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    b.Add(s);
  }
  return b.Finish(reader.ok() ? (*reader)->counts() : CaptureCounts{});
}

RpcTrace TraceOf(const common::PcapTcpWriter& w, const TraceOptions& o) {
  return TraceOf(w.bytes(), o);
}

TEST(RpcTraceTest, SequenceNumbersInCaptureOrderGiveTheLagAndTheWouldBeDrops) {
  common::PcapTcpWriter w(800, 2049);
  w.Begin();
  // Context 1: 1..40, then 5 (35 below the highest), then 41, 20 (21
  // below), 41 again, each answered; context 2: 7. A number seen before and
  // still inside a window is a duplicate there (RFC 2203 5.3.3.1).
  std::vector<uint32_t> seqs;
  for (uint32_t s = 1; s <= 40; ++s) seqs.push_back(s);
  seqs.insert(seqs.end(), {5, 41, 20, 41});
  uint32_t xid = 100;
  for (uint32_t seq : seqs) {
    w.Add(true, Framed(GssCall(xid, 1, seq)));
    w.Add(false, Framed(Reply(xid)));
    ++xid;
  }
  w.Add(true, Framed(GssCall(xid, 2, 7)));
  w.Add(false, Framed(Reply(xid, rpc::kRpcsecGssCtxProblem)));
  w.Add(true, Framed(SysCall(900)));  // never answered
  TraceOptions o;
  o.windows = {16, 32, 64};
  RpcTrace t = TraceOf(w, o);
  ASSERT_EQ(t.contexts.size(), 2u);
  ContextTrace& one = t.contexts[0];
  EXPECT_EQ(one.handle, "c0000001");
  EXPECT_EQ(one.service, "integrity");
  EXPECT_EQ(one.calls, 44u);
  EXPECT_EQ(one.lagging, 2u);
  EXPECT_EQ(one.lag.Percentile(1.0), 35u);
  EXPECT_EQ(one.below_window[16], 2u);  // 5 and 20
  EXPECT_EQ(one.below_window[32], 1u);  // 5
  EXPECT_EQ(one.below_window[64], 0u);
  EXPECT_EQ(one.duplicates[16], 1u);  // 41 again
  EXPECT_EQ(one.duplicates[32], 2u);  // 20, 41
  EXPECT_EQ(one.duplicates[64], 3u);  // 5, 20, 41
  EXPECT_EQ(t.contexts[1].context_problems, 1u);
  ASSERT_EQ(t.connections.size(), 1u);
  const ConnectionTrace& c = t.connections[0];
  EXPECT_EQ(c.calls, 46u);
  EXPECT_EQ(c.replies, 45u);
  EXPECT_EQ(c.outstanding_at_end, 1u);
  EXPECT_EQ(c.client.port, 800);
  EXPECT_EQ(c.server.port, 2049);
  // These calls, captured whole, hold no COMPOUND4args: an empty body
  // (integrity), 4 bytes (sys).
  ASSERT_EQ(t.operations.size(), 2u);
  EXPECT_EQ(t.operations.at({"NFSv4 COMPOUND (arguments not read)", "rpcsec_gss integrity"}).calls,
            45u);
  EXPECT_EQ(t.operations.at({"NFSv4 COMPOUND (arguments not read)", "sys"}).calls, 1u);
  // The JSON holds every window of the options, and the table says them.
  const nlohmann::json j = TraceJson(t, o);
  EXPECT_EQ(j["contexts"][0]["below_window"]["16"], 2);
  EXPECT_EQ(j["contexts"][0]["lag"]["max"], 35);
  // The lag histogram holds every DATA call, and a window of 2^k's drops
  // are the calls of its bins from k + 1 on.
  const nlohmann::json& bins = j["contexts"][0]["lag_histogram"];
  ASSERT_EQ(bins.size(), kLagBins);
  EXPECT_EQ(bins[0]["from"], 0);
  EXPECT_EQ(bins[5]["from"], 16);
  EXPECT_EQ(bins[5]["to"], 31);
  EXPECT_TRUE(bins[kLagBins - 1]["to"].is_null());
  EXPECT_EQ(bins[kLagBins - 1]["from"], kMaxWindow);
  uint64_t all = 0, from16 = 0, from32 = 0;
  for (size_t b = 0; b < kLagBins; ++b) {
    const uint64_t n = bins[b]["calls"].get<uint64_t>();
    all += n;
    if (b >= 5) from16 += n;
    if (b >= 6) from32 += n;
  }
  EXPECT_EQ(all, one.calls);
  EXPECT_EQ(bins[0]["calls"], one.calls - one.lagging);
  EXPECT_EQ(from16, 2u);
  EXPECT_EQ(from32, 1u);
  const std::string text = TraceText(j);
  EXPECT_NE(text.find("W16: 2 (+1 duplicates) W32: 1 (+2 duplicates) W64: 0 (+3 duplicates)"),
            std::string::npos)
      << text;
}

TEST(MostOverTimeTest, TheMostInEachBinAndTheBinsWidenedAsTheCaptureGoesOn) {
  MostOverTime m;
  EXPECT_TRUE(m.empty());
  const int64_t t0 = 5'000'000'000;
  const int64_t ms = MostOverTime::kFirstWidthNs;
  m.Add(t0, 3);
  m.Add(t0 + ms / 2, 7);
  m.Add(t0 + 2 * ms, 1);
  m.Add(t0 - ms, 9);  // stamped before the first: the first bin
  std::vector<uint32_t> b = m.bins();
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0], 9u);
  EXPECT_EQ(b[1], MostOverTime::kNone);  // nothing fell in it
  EXPECT_EQ(b[2], 1u);
  EXPECT_EQ(m.start_ns(), t0);
  EXPECT_EQ(m.width_ns(), ms);
  // A value later than the last bin can hold: the width doubles (twice
  // here) and neighbours merge, keeping each pair's most.
  m.Add(t0 + static_cast<int64_t>(MostOverTime::kBins) * ms * 3, 4);
  b = m.bins();
  EXPECT_EQ(m.width_ns(), 4 * ms);
  ASSERT_LE(b.size(), MostOverTime::kBins);
  EXPECT_EQ(b[0], 9u);  // bins 0-3 of 1 ms: 9, none, 1, none
  EXPECT_EQ(b.back(), 4u);
  EXPECT_EQ(b.size(), MostOverTime::kBins * 3 / 4 + 1);
  // However long the capture, kBins values.
  for (int64_t i = 0; i < 100000; ++i) m.Add(t0 + i * 1'000'000'000, static_cast<uint32_t>(i));
  EXPECT_LE(m.bins().size(), MostOverTime::kBins);
  EXPECT_EQ(m.bins().back(), 99999u);
}

// A context's calls in flight are counted over all its connections as each
// is sent (itself included), and a connection that goes takes its calls out.
TEST(RpcTraceTest, ContextCallsInFlightAreCountedOverItsConnections) {
  common::PcapTcpWriter a(803, 2049), b(804, 2049);
  a.Begin();
  b.Begin();
  a.Add(true, Framed(GssCall(1, 1, 1)));
  a.Add(true, Framed(GssCall(2, 1, 2)));
  a.Add(true, Framed(GssCall(3, 1, 3)));
  a.Add(false, Framed(Reply(1)));
  a.Add(false, Framed(Reply(2)));
  a.Add(false, Framed(Reply(3)));
  b.Add(true, Framed(GssCall(4, 1, 4)));
  b.Add(false, Framed(Reply(4)));
  b.Add(true, Framed(GssCall(5, 1, 5)));
  // Each segment with a copy of its payload (the reader's view lasts until
  // its next segment).
  struct Held {
    TcpSegment seg;
    Bytes payload;
  };
  auto segments = [](const common::PcapTcpWriter& w) {
    std::vector<Held> out;
    auto reader = CaptureReader::FromBytes(w.bytes(), "test.pcap");
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    TcpSegment seg;
    while (reader.ok()) {
      auto more = (*reader)->Next(&seg);
      EXPECT_TRUE(more.ok()) << more.status().ToString();
      if (!more.ok() || !*more) break;
      out.push_back({seg, Bytes(seg.payload.begin(), seg.payload.end())});
    }
    return out;
  };
  const std::vector<Held> sa = segments(a), sb = segments(b);
  ASSERT_EQ(sa.size(), 9u);  // handshake, 3 calls, 3 replies
  ASSERT_EQ(sb.size(), 6u);  // handshake, call, reply, call
  // Both handshakes; calls 1-3 on a and 4 on b (1, 2, 3, 4 in flight); the
  // replies; call 5 (1 in flight).
  const std::pair<char, size_t> order[] = {{'a', 0}, {'a', 1}, {'a', 2}, {'b', 0}, {'b', 1},
                                           {'b', 2}, {'a', 3}, {'a', 4}, {'a', 5}, {'b', 3},
                                           {'b', 4}, {'a', 6}, {'a', 7}, {'a', 8}, {'b', 5}};
  RpcTraceBuilder builder{TraceOptions{}};
  for (const auto& [which, i] : order) {
    const Held& h = which == 'a' ? sa[i] : sb[i];
    TcpSegment seg = h.seg;
    seg.payload = h.payload;
    builder.Add(seg);
  }
  RpcTrace t = builder.Finish(CaptureCounts{});
  ASSERT_EQ(t.contexts.size(), 1u);
  ContextTrace& x = t.contexts[0];
  EXPECT_EQ(x.calls, 5u);
  EXPECT_EQ(x.connections.size(), 2u);
  EXPECT_EQ(x.most_in_flight, 4u);
  EXPECT_EQ(x.in_flight.Percentile(1.0), 4u);
  EXPECT_EQ(x.in_flight.Percentile(0.0), 1u);
  const nlohmann::json j = TraceJson(t, TraceOptions{});
  EXPECT_EQ(j["contexts"][0]["in_flight"]["max"], 4);
}

// An RPCSEC_GSS INIT call (RFC 2203 5.2.2) and its accepted reply making
// context c00000<handle> with the window `window` (5.2.3.1).
Bytes InitCall(uint32_t xid) {
  rpc::GssCred cred;
  cred.proc = rpc::kGssInit;
  Bytes body, m;
  rpc::EncodeGssCred(cred, &body);
  rpc::EncodeCallPrefix(xid, 100003, 4, 0, rpc::kRpcsecGss, body, &m);
  rpc::XdrEncoder e(&m);
  e.PutU32(rpc::kAuthNone);
  e.PutU32(0);
  e.PutOpaque(Bytes(120, 0x60));  // the AP-REQ
  return m;
}
Bytes InitReply(uint32_t xid, uint8_t handle, uint32_t window) {
  Bytes m;
  rpc::EncodeAcceptedReply(xid, rpc::kAuthNone, {}, rpc::kSuccess, &m);
  rpc::XdrEncoder e(&m);
  e.PutOpaque(Bytes{0xc0, 0, 0, handle});
  e.PutU32(0);  // GSS_S_COMPLETE
  e.PutU32(0);
  e.PutU32(window);
  e.PutOpaque(Bytes(100, 0x6f));  // the AP-REP
  return m;
}

// A context whose INIT the capture holds is made in it, with the window its
// server announced and what came before its INIT: nothing, then (the next
// one) a reply saying the first was gone, then a connection's end.
TEST(RpcTraceTest, ContextsMadeInTheCaptureSayWhatCameBeforeTheirInit) {
  common::PcapTcpWriter w(806, 2049);
  w.Begin();
  w.Add(true, Framed(InitCall(1)));
  w.Add(false, Framed(InitReply(1, 1, 64)));
  w.Add(true, Framed(GssCall(2, 1, 1)));
  w.Add(false, Framed(Reply(2, rpc::kRpcsecGssCtxProblem)));
  w.Add(true, Framed(InitCall(3)));
  w.Add(false, Framed(InitReply(3, 2, 32)));
  w.Add(true, Framed(GssCall(4, 2, 1)));
  w.Add(false, Framed(Reply(4)));
  RpcTrace t = TraceOf(w, TraceOptions{});
  ASSERT_EQ(t.contexts.size(), 2u);
  EXPECT_TRUE(t.contexts[0].created);
  EXPECT_EQ(t.contexts[0].announced_window, 64u);
  EXPECT_EQ(t.contexts[0].created_after, "nothing");
  EXPECT_EQ(t.contexts[0].context_problems, 1u);
  EXPECT_TRUE(t.contexts[1].created);
  EXPECT_EQ(t.contexts[1].announced_window, 32u);
  EXPECT_EQ(t.contexts[1].created_after, "a context problem reply");
  EXPECT_EQ(t.gss_init_calls, 2u);
  EXPECT_EQ(t.contexts_created_after.at("nothing"), 1u);
  const nlohmann::json j = TraceJson(t, TraceOptions{});
  EXPECT_EQ(j["contexts"][1]["created_after"], "a context problem reply");
  EXPECT_EQ(j["contexts"][1]["announced_window"], 32);
  EXPECT_NE(TraceText(j).find("1 after a context problem reply;"), std::string::npos)
      << TraceText(j);
  // The builder fed on: a connection's end, then an INIT on a new one.
  common::PcapTcpWriter next(807, 2049);
  next.Begin();
  next.Add(true, Framed(InitCall(5)));
  next.Add(false, Framed(InitReply(5, 3, 16)));
  RpcTraceBuilder b{TraceOptions{}};
  auto feed = [&](const common::PcapTcpWriter& from) {
    auto reader = CaptureReader::FromBytes(from.bytes(), "test.pcap");
    ASSERT_TRUE(reader.ok());
    TcpSegment seg;
    for (;;) {
      auto more = (*reader)->Next(&seg);
      ASSERT_TRUE(more.ok());
      if (!*more) break;
      b.Add(seg);
    }
  };
  feed(w);
  TcpSegment fin;  // the first connection's client says FIN
  fin.src = t.connections[0].client;
  fin.dst = t.connections[0].server;
  fin.flags = kTcpFin | kTcpAck;
  b.Add(fin);
  feed(next);
  // That INIT's own short connection (no DATA call on it, as secmode's load
  // makes each context) ends: no disconnect for the INIT after it.
  TcpSegment fin_short = fin;
  fin_short.src.port = 807;
  b.Add(fin_short);
  common::PcapTcpWriter third(809, 2049);
  third.Begin();
  third.Add(true, Framed(InitCall(6)));
  third.Add(false, Framed(InitReply(6, 4, 16)));
  feed(third);
  RpcTrace after = b.Finish(CaptureCounts{});
  ASSERT_EQ(after.contexts.size(), 4u);
  EXPECT_EQ(after.contexts[2].created_after, "a disconnect");
  EXPECT_EQ(after.contexts[2].calls, 0u);  // made, not used
  EXPECT_EQ(after.contexts[3].created_after, "nothing");
}

// An NFSv4 call carrying COMPOUND4args `args` with AUTH_SYS (service 0) or
// on RPCSEC_GSS context c0000001 with the service's body (RFC 2203 5.3.2.2;
// privacy: an opaque of the wrapped size).
Bytes CompoundCall(uint32_t xid, uint32_t service, uint32_t seq, const Bytes& args) {
  if (service == 0) return SysCall(xid, args);
  Bytes m;
  rpc::GssCred cred;
  cred.proc = rpc::kGssData;
  cred.seq = seq;
  cred.service = service;
  const uint8_t h[4] = {0xc0, 0, 0, 1};
  cred.handle = ByteView(h, 4);
  Bytes body;
  rpc::EncodeGssCred(cred, &body);
  rpc::EncodeCallPrefix(xid, 100003, 4, 1, rpc::kRpcsecGss, body, &m);
  rpc::XdrEncoder e(&m);
  e.PutU32(rpc::kRpcsecGss);
  e.PutOpaque(Bytes(28, 7));
  if (service == rpc::kGssSvcNone) {
    e.PutRaw(args);
  } else if (service == rpc::kGssSvcIntegrity) {
    Bytes integ;
    rpc::XdrEncoder i(&integ);
    i.PutU32(seq);
    i.PutRaw(args);
    e.PutOpaque(integ);
    e.PutOpaque(Bytes(28, 5));  // the checksum
  } else {
    e.PutOpaque(Bytes(args.size() + 60, 0x33));
  }
  return m;
}

Bytes LoadCompound(rpc::NfsOp op, uint32_t slot, uint32_t sequence) {
  rpc::NfsRequest r;
  r.op = op;
  r.count = 100;
  r.slot = slot;
  r.sequence = sequence;
  Bytes args;
  rpc::EncodeCompoundArgs(r, &args);
  return args;
}

// COMPOUNDs are named by their operations where their arguments are in
// clear (AUTH_SYS, krb5, krb5i) and counted as sealed under krb5p; the
// session's slots come from SEQUENCE, and a slot's sequence id sent again is
// a repeat.
TEST(RpcTraceTest, CompoundsAreNamedByTheirOperationsAndSessionsByTheirSlots) {
  common::PcapTcpWriter w(801, 2049);
  w.Begin();
  const struct {
    uint32_t service;
    rpc::NfsOp op;
    uint32_t slot, sequence;
  } calls[] = {{0, rpc::NfsOp::kRead, 0, 1},
               {rpc::kGssSvcNone, rpc::NfsOp::kGetattr, 1, 1},
               {rpc::kGssSvcIntegrity, rpc::NfsOp::kWrite, 0, 2},
               {rpc::kGssSvcPrivacy, rpc::NfsOp::kRead, 2, 1},
               {rpc::kGssSvcNone, rpc::NfsOp::kGetattr, 1, 1}};  // slot 1's again
  uint32_t xid = 10;
  for (const auto& c : calls) {
    w.Add(true, Framed(CompoundCall(xid, c.service, xid, LoadCompound(c.op, c.slot, c.sequence))));
    w.Add(false, Framed(Reply(xid)));
    ++xid;
  }
  RpcTrace t = TraceOf(w, TraceOptions{});
  ASSERT_EQ(t.operations.size(), 4u);
  EXPECT_EQ(t.operations.at({"NFSv4.1 SEQUENCE PUTFH READ", "sys"}).calls, 1u);
  const OperationTrace& getattr =
      t.operations.at({"NFSv4.1 SEQUENCE PUTFH GETATTR", "rpcsec_gss none"});
  EXPECT_EQ(getattr.calls, 2u);
  EXPECT_EQ(getattr.replies, 2u);
  EXPECT_EQ(t.operations.at({"NFSv4.1 SEQUENCE PUTFH WRITE", "rpcsec_gss integrity"}).calls, 1u);
  EXPECT_EQ(t.operations.at({"NFSv4 COMPOUND (sealed)", "rpcsec_gss privacy"}).calls, 1u);
  // The sealed call's slot 2 is not seen.
  ASSERT_EQ(t.sessions.size(), 1u);
  const SessionTrace& s = t.sessions[0];
  EXPECT_EQ(s.id, common::ToHex(rpc::OwnServerTarget().session_id));
  EXPECT_EQ(s.calls, 4u);
  EXPECT_EQ(s.slots_used, 2u);
  EXPECT_EQ(s.highest_slot, 1u);
  EXPECT_EQ(s.highest_stated, rpc::OwnServerTarget().highest_slot);
  EXPECT_EQ(s.repeats, 1u);
  EXPECT_EQ(s.connections.size(), 1u);
  const nlohmann::json j = TraceJson(t, TraceOptions{});
  EXPECT_EQ(j["sessions"][0]["slots_used"], 2);
  EXPECT_EQ(j["sessions"][0]["repeated_sequence_ids"], 1);
  const std::string text = TraceText(j);
  EXPECT_NE(text.find("NFSv4.1 SEQUENCE PUTFH WRITE [rpcsec_gss integrity]: 1, 1, "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(s.id + ": 4, 1, 2, 1 / " + std::to_string(s.highest_stated) + ", 1"),
            std::string::npos)
      << text;
}

// A client's capture has the round trip between SYN and SYN-ACK, a
// server's between SYN-ACK and ACK; alike gaps (loopback) guess nothing; a
// side given is stated, beside the guess.
TEST(RpcTraceTest, TheSideIsGuessedFromWhereTheHandshakesRoundTripFalls) {
  const struct {
    uint32_t synack_after_us, ack_after_us;
    CaptureSide want;
  } cases[] = {{5000, 0, CaptureSide::kClient},
               {0, 5000, CaptureSide::kServer},
               {0, 0, CaptureSide::kUnknown},
               {50, 0, CaptureSide::kUnknown}};  // 150 vs 100 us: not twice
  for (const auto& c : cases) {
    common::PcapTcpWriter w(802, 2049);
    w.Begin(c.synack_after_us, c.ack_after_us);
    w.Add(true, Framed(SysCall(1)));
    w.Add(false, Framed(Reply(1)));
    RpcTrace t = TraceOf(w, TraceOptions{});
    ASSERT_EQ(t.connections.size(), 1u);
    // Each segment is 100 us after the one before, plus the delay asked.
    EXPECT_EQ(t.connections[0].syn_to_synack_ns,
              static_cast<int64_t>(100 + c.synack_after_us) * 1000);
    EXPECT_EQ(t.connections[0].synack_to_ack_ns, static_cast<int64_t>(100 + c.ack_after_us) * 1000);
    const SideGuess g = GuessSide(t);
    EXPECT_EQ(g.side, c.want) << g.how;
    EXPECT_EQ(g.handshakes, 1u);
    EXPECT_NE(g.how.find("1 handshake"), std::string::npos) << g.how;
    TraceOptions given;
    given.side = CaptureSide::kServer;
    const nlohmann::json j = TraceJson(t, given);
    EXPECT_EQ(j["side"]["side"], "server");
    EXPECT_EQ(j["side"]["guessed"], CaptureSideName(c.want));
    EXPECT_EQ(j["side"]["how"].get<std::string>().rfind("given (--side)", 0), 0u);
    EXPECT_NE(TraceText(j).find("taken on the server side"), std::string::npos);
  }
  // No handshake captured: unknown, and why.
  RpcTrace none;
  EXPECT_EQ(GuessSide(none).side, CaptureSide::kUnknown);
  EXPECT_NE(GuessSide(none).how.find("no connection's handshake"), std::string::npos);
}

// A long file's progress: reported while it is read (here at every check,
// every 1024 segments) and once at the end with all of it read.
TEST(TraceCaptureFileTest, ProgressIsReportedWhileReadingAndAtTheEnd) {
  common::PcapTcpWriter w(808, 2049);
  w.Begin();
  for (uint32_t xid = 1; xid <= 1500; ++xid) w.Add(true, Framed(SysCall(xid)));
  testing::TempDir dir("secmode-trace-progress");
  const std::string path = dir.path + "/calls.pcap";
  ASSERT_TRUE(w.Save(path).ok());
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  TraceProgress progress;
  progress.every_s = 0;
  progress.report = [&](uint64_t read, uint64_t size) { seen.emplace_back(read, size); };
  auto t = TraceCapture(path, TraceOptions{}, progress);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->connections.at(0).calls, 1500u);
  ASSERT_EQ(seen.size(), 2u);  // at segment 1024, and at the end
  EXPECT_EQ(seen[1].first, w.bytes().size());
  EXPECT_EQ(seen[1].second, w.bytes().size());
  EXPECT_GT(seen[0].first, 0u);
  EXPECT_LT(seen[0].first, seen[1].first);
}

// `secmode trace --out`'s report is drawn from results.json alone: the
// trace's contexts, operations and sessions, and no table of legs; the
// file's strings reach report.md escaped, each in its cell.
TEST(TraceReportTest, TheTraceSectionIsDrawnFromResultsJsonAlone) {
  common::PcapTcpWriter w(805, 2049);
  w.Begin();
  w.Add(true,
        Framed(CompoundCall(1, rpc::kGssSvcIntegrity, 1, LoadCompound(rpc::NfsOp::kWrite, 3, 1))));
  w.Add(false, Framed(Reply(1)));
  w.Add(true, Framed(CompoundCall(2, 0, 0, LoadCompound(rpc::NfsOp::kRead, 4, 1))));
  const TraceOptions o;
  RpcTrace t = TraceOf(w, o);
  harness::RunResults written;
  written.command = "secmode trace test.pcap --out DIR";
  written.sections[render::kTraceSection] = TraceJson(t, o);
  auto read = harness::ReadResultsJson(harness::ToJson(written).dump());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  auto drawn = render::RenderRun(*read);
  ASSERT_TRUE(drawn.ok()) << drawn.status().ToString();
  const std::string& md = drawn->report_md;
  EXPECT_NE(md.find("## What a capture's ONC RPC traffic did (secmode trace)"), std::string::npos)
      << md;
  EXPECT_EQ(md.find("Per-operation cost of each leg"), std::string::npos) << md;
  EXPECT_NE(md.find("| `c0000001` |"), std::string::npos) << md;  // the context, a code cell
  EXPECT_NE(md.find("| NFSv4.1 SEQUENCE PUTFH WRITE | rpcsec\\_gss integrity | 1 | 1 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| NFSv4.1 SEQUENCE PUTFH READ | sys | 1 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("### NFSv4.1 sessions"), std::string::npos) << md;
  EXPECT_EQ(md.find("ends inside frame"), std::string::npos) << md;
  const bool gnuplot = !common::FindProgram("gnuplot").empty();
  for (const std::string& w : drawn->warnings) {  // without gnuplot, the plots' only
    EXPECT_TRUE(!gnuplot && w.rfind("plot trace-", 0) == 0) << w;
  }
  EXPECT_EQ(md.find("| at most "), std::string::npos) << md;
  // Calls in flight that are upper bounds are said to be.
  read->sections[render::kTraceSection]["contexts"][0]["in_flight"]["upper_bound"] = true;
  // A file cut inside a frame: the report says where.
  read->sections[render::kTraceSection]["capture"]["cut_at_byte"] = uint64_t{1234};
  auto cut = render::RenderRun(*read);
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_NE(cut->report_md.find("The file ends inside frame " +
                                std::to_string(t.capture.frames + 1) + ", at byte 1234"),
            std::string::npos)
      << cut->report_md;
  EXPECT_NE(cut->report_md.find("| at most "), std::string::npos) << cut->report_md;
  // The plots: each context's lag histogram and calls in flight over time,
  // the response times of the operations (gnuplot is one of the packages
  // the build installs; without it the report says a plot was not drawn).
  std::set<std::string> plots;
  for (const auto& [name, body] : drawn->files) {
    plots.insert(name);
    EXPECT_NE(body.find("<svg"), std::string::npos) << name;
  }
  for (const char* name : {"trace-lag.svg", "trace-in-flight.svg", "trace-response.svg"}) {
    EXPECT_EQ(plots.count(name), gnuplot ? 1u : 0u) << name;
    EXPECT_NE(md.find(gnuplot ? std::string("](") + name + ")"
                              : std::string("plot ") + name + " could not be drawn"),
              std::string::npos)
        << md;
  }
  // A crafted handle, operation or mode reaches the plot scripts as text:
  // they are still drawn, and no command ran.
  secmode::testing::TempDir tmp("secmode-trace-plot-");
  const std::string pwned = tmp.path + "/PWNED";
  const std::string payload = "x'\nsystem \"touch " + pwned + "\"\n#`touch " + pwned + "-bq`";
  harness::RunResults hostile = *read;
  nlohmann::json& section = hostile.sections[render::kTraceSection];
  for (nlohmann::json& x : section["contexts"]) x["handle"] = x["service"] = payload;
  size_t drawn_ops = 0;  // operations whose response times are plotted
  for (nlohmann::json& op : section["operations"]) {
    op["operation"] = op["mode"] = payload;
    if (!op["response_us_quantiles"].empty()) ++drawn_ops;
  }
  ASSERT_GT(drawn_ops, 0u);
  auto hostile_drawn = render::RenderRun(hostile);
  ASSERT_TRUE(hostile_drawn.ok()) << hostile_drawn.status().ToString();
  EXPECT_EQ(hostile_drawn->files.size(), drawn->files.size());
  EXPECT_FALSE(std::filesystem::exists(pwned));
  EXPECT_FALSE(std::filesystem::exists(pwned + "-bq"));
  // A crafted name stays text in its cell.
  read->sections[render::kTraceSection]["operations"][0]["operation"] = "a|b<img src=x>";
  auto crafted = render::RenderRun(*read);
  ASSERT_TRUE(crafted.ok()) << crafted.status().ToString();
  EXPECT_NE(crafted->report_md.find("| a\\|b\\<img src=x\\> |"), std::string::npos)
      << crafted->report_md;
}

TEST(RpcTraceTest, ACallSentAgainWithItsXidIsARetransmissionAndOtherPortsNeedACall) {
  common::PcapTcpWriter w(800, 3049);
  w.Begin();
  w.Add(true, Framed(SysCall(1)));
  w.Add(true, Framed(SysCall(1)));
  w.Add(false, Framed(Reply(1)));
  w.Add(false, Framed(Reply(2)));  // to no call
  RpcTrace t = TraceOf(w, TraceOptions{});
  // Port 3049 is no RPC port given, but the first bytes are a call.
  ASSERT_EQ(t.connections.size(), 1u);
  EXPECT_EQ(t.connections[0].calls, 2u);
  EXPECT_EQ(t.connections[0].retransmissions, 1u);
  EXPECT_EQ(t.connections[0].unmatched_replies, 1u);
  // A conversation whose first bytes are no call is not read.
  common::PcapTcpWriter other(800, 3050);
  other.Begin();
  other.Add(true, common::AsBytes("GET / HTTP/1.1\r\n\r\n"));
  other.Add(true, Framed(SysCall(1)));
  RpcTrace none = TraceOf(other, TraceOptions{});
  EXPECT_TRUE(none.connections.empty());
  EXPECT_EQ(none.connections_not_rpc, 1u);
}

// A call left unanswered while many later calls of its connection were
// answered was passed over (a silent drop); one in flight where the capture
// stops was not.
TEST(RpcTraceTest, ACallPassedOverByManyRepliesIsCountedAndOneStillInFlightIsNot) {
  for (int later : {40, 10}) {
    common::PcapTcpWriter w(801, 2049);
    w.Begin();
    w.Add(true, Framed(SysCall(1)));  // never answered
    for (uint32_t xid = 2; xid < 2 + static_cast<uint32_t>(later); ++xid) {
      w.Add(true, Framed(SysCall(xid)));
      w.Add(false, Framed(Reply(xid)));
    }
    w.Add(true, Framed(SysCall(1000)));  // in flight at the end
    RpcTrace t = TraceOf(w, TraceOptions{});
    ASSERT_EQ(t.connections.size(), 1u);
    EXPECT_EQ(t.connections[0].outstanding_at_end, 2u) << later;
    // At most two calls outstanding: passed over beyond 2 x 2 + 16 replies.
    EXPECT_EQ(t.connections[0].passed_over, later > 20 ? 1u : 0u) << later;
  }
}

// Every segment of `bytes` read as a capture named `name`: how many, and
// the error that stopped the reading (ok at the file's end).
common::Status ReadAll(const Bytes& bytes, const std::string& name, CaptureCounts* counts) {
  auto r = CaptureReader::FromBytes(bytes, name);
  if (!r.ok()) return r.status();
  TcpSegment s;
  for (;;) {
    auto more = (*r)->Next(&s);
    *counts = (*r)->counts();
    if (!more.ok()) return more.status();
    if (!*more) return common::Status::Ok();
  }
}

TEST(CaptureReaderTest, NotACaptureAndADamagedOneAreRefusedNamingTheFileAndOffset) {
  auto empty = CaptureReader::FromBytes({}, "empty.pcap");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty.pcap"), std::string::npos);
  auto text = CaptureReader::FromBytes(common::AsBytes("hello, not a capture at all"), "x.txt");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("x.txt: not a capture"), std::string::npos)
      << text.status().message();
  auto missing = CaptureReader::Open("/nonexistent/secmode.pcap");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/secmode.pcap"), std::string::npos);
  // The second of three frames claims more bytes than any frame may have:
  // damage inside the file, refused at the byte after that frame's header.
  common::PcapTcpWriter w(800, 2049);
  w.Begin();
  const size_t first = w.bytes().size();  // the first frame's record header
  w.Add(true, Framed(SysCall(1)));
  const size_t second = w.bytes().size();
  CaptureCounts counts;
  ASSERT_TRUE(ReadAll(w.bytes(), "before.pcap", &counts).ok());
  const uint64_t before = counts.frames;  // the handshake's and the first call's
  w.Add(true, Framed(SysCall(2)));
  w.Add(true, Framed(SysCall(3)));
  Bytes damaged = w.bytes();
  ASSERT_GT(second, first + 16);
  const uint32_t huge = 0x7fffffff;  // the record header's caplen, after its time stamp
  std::memcpy(damaged.data() + second + 8, &huge, sizeof huge);
  common::Status failed = ReadAll(damaged, "damaged.pcap", &counts);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("damaged.pcap: damaged at byte " + std::to_string(second + 16) +
                                  " (after frame " + std::to_string(before) + ")"),
            std::string::npos)
      << failed.message();
  EXPECT_EQ(counts.cut_at, 0u);
}

// A file that ends inside a frame (tcpdump stopped mid-write) is a capture
// up to that frame: its frames are read and where it was cut is said.
// The pcap file `pcap` (little-endian, as common/pcap.h writes it) as
// pcapng: a Section Header Block, one Interface Description Block, and an
// Enhanced Packet Block per frame; *starts the offset of each EPB.
Bytes AsPcapng(const Bytes& pcap, std::vector<size_t>* starts) {
  auto le32 = [](const uint8_t* p) {
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  };
  auto put32 = [](Bytes* b, uint32_t v) {
    for (int i = 0; i < 4; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  Bytes out;
  put32(&out, 0x0A0D0D0A);  // SHB: type, length, byte order, version 1.0, section length -1
  put32(&out, 28);
  put32(&out, 0x1A2B3C4D);
  put32(&out, 0x00000001);
  put32(&out, 0xFFFFFFFF);
  put32(&out, 0xFFFFFFFF);
  put32(&out, 28);
  put32(&out, 1);  // IDB: link type and reserved, snap length
  put32(&out, 20);
  put32(&out, le32(pcap.data() + 20) & 0xFFFF);
  put32(&out, le32(pcap.data() + 16));
  put32(&out, 20);
  for (size_t at = 24; at + 16 <= pcap.size();) {
    const uint32_t caplen = le32(pcap.data() + at + 8), len = le32(pcap.data() + at + 12);
    const uint32_t padded = (caplen + 3) / 4 * 4;
    starts->push_back(out.size());
    put32(&out, 6);  // EPB: interface 0, time stamp, lengths, the bytes padded
    put32(&out, 32 + padded);
    put32(&out, 0);
    put32(&out, 0);
    put32(&out, le32(pcap.data() + at) * 1000000u + le32(pcap.data() + at + 4));
    put32(&out, caplen);
    put32(&out, len);
    out.insert(out.end(), pcap.begin() + static_cast<std::ptrdiff_t>(at + 16),
               pcap.begin() + static_cast<std::ptrdiff_t>(at + 16 + caplen));
    out.resize(out.size() + padded - caplen, 0);
    put32(&out, 32 + padded);
    at += 16 + caplen;
  }
  return out;
}

TEST(CaptureReaderTest, AFileEndingInsideAFrameIsReadUpToIt) {
  common::PcapTcpWriter w(800, 2049);
  w.Begin();
  w.Add(true, Framed(SysCall(1)));
  const size_t last = w.bytes().size();  // the last frame's record
  w.Add(true, Framed(SysCall(2)));
  const Bytes whole = w.bytes();
  CaptureCounts counts;
  ASSERT_TRUE(ReadAll(whole, "whole.pcap", &counts).ok());
  const uint64_t frames = counts.frames;  // the handshake's, then the two calls
  EXPECT_EQ(counts.cut_at, 0u);
  std::vector<size_t> epbs;
  const Bytes pcapng = AsPcapng(whole, &epbs);
  ASSERT_TRUE(ReadAll(pcapng, "whole.pcapng", &counts).ok());
  EXPECT_EQ(counts.frames, frames);
  EXPECT_EQ(counts.cut_at, 0u);
  // Cut inside the last frame's bytes and inside its record's header, in
  // pcap and in pcapng.
  for (size_t keep : {whole.size() - 5, last + 8, last + 20}) {
    Bytes cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(keep));
    common::Status st = ReadAll(cut, "cut.pcap", &counts);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(counts.frames, frames - 1) << keep;
    EXPECT_EQ(counts.cut_at, cut.size()) << keep;
  }
  for (size_t keep : {pcapng.size() - 5, epbs.back() + 6, epbs.back() + 40}) {
    Bytes cut(pcapng.begin(), pcapng.begin() + static_cast<std::ptrdiff_t>(keep));
    common::Status st = ReadAll(cut, "cut.pcapng", &counts);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(counts.frames, frames - 1) << keep;
    EXPECT_EQ(counts.cut_at, cut.size()) << keep;
  }
  // A trace of it says so, on the terminal and in the JSON.
  Bytes cut(whole.begin(), whole.end() - 5);
  RpcTrace t = TraceOf(cut, TraceOptions{});
  EXPECT_EQ(t.capture.cut_at, cut.size());
  ASSERT_EQ(t.connections.size(), 1u);
  EXPECT_EQ(t.connections[0].calls, 1u);  // the first call; the second's frame was cut
  nlohmann::json j = TraceJson(t, TraceOptions{});
  EXPECT_EQ(j["capture"]["cut_at_byte"], cut.size());
  EXPECT_NE(TraceText(j).find("ends inside frame " + std::to_string(frames) + ", at byte " +
                              std::to_string(cut.size())),
            std::string::npos)
      << TraceText(j);
}

// A block that claims more than is left, far from the end (its length
// damaged): an error naming the byte, not a capture cut short.
TEST(CaptureReaderTest, ABlockClaimingMoreThanIsLeftFarFromTheEndIsDamage) {
  common::PcapTcpWriter w(800, 2049);
  w.Begin();
  w.Add(true, Framed(SysCall(1)));
  for (uint32_t i = 0; i < 300; ++i) w.Add(true, Framed(SysCall(2 + i, Bytes(1000, 7))));
  std::vector<size_t> epbs;
  Bytes pcapng = AsPcapng(w.bytes(), &epbs);
  CaptureCounts counts;
  ASSERT_TRUE(ReadAll(pcapng, "whole.pcapng", &counts).ok());
  const size_t damaged = epbs[3];  // more than a snap length from the end
  ASSERT_GT(pcapng.size() - damaged, 262144u + 256u);
  const uint32_t claim = 8u << 20;  // the EPB's total length: 8 MiB
  std::memcpy(pcapng.data() + damaged + 4, &claim, sizeof claim);
  common::Status st = ReadAll(pcapng, "damaged.pcapng", &counts);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("damaged.pcapng: damaged at byte"), std::string::npos)
      << st.message();
  EXPECT_EQ(counts.frames, 3u);
  EXPECT_EQ(counts.cut_at, 0u);
}

// A segment between 10.0.0.1:`sport` and 10.0.0.2:`dport` (or back with
// `back`), `wire` bytes long on the wire of which `data` were captured.
TcpSegment Between(uint16_t client_port, bool back, uint32_t seq, uint8_t flags, ByteView data,
                   uint32_t wire = 0) {
  return SegmentBetween(client_port, 2049, back, seq, flags, data, wire);
}

// Replies the capture did not keep (a snap length hides a frame's second
// record): their calls stay in flight, so the context's counts of calls in
// flight are said to be upper bounds; with every reply kept they are not.
TEST(RpcTraceTest, CallsInFlightAreAtMostWhereRepliesWereNotCaptured) {
  const Bytes c1 = Framed(GssCall(1, 1, 1)), c2 = Framed(GssCall(2, 1, 2));
  Bytes replies = Framed(Reply(1));
  const size_t first = replies.size();
  const Bytes r2 = Framed(Reply(2));
  replies.insert(replies.end(), r2.begin(), r2.end());
  for (const bool snapped : {false, true}) {
    RpcTraceBuilder b{TraceOptions{}};
    b.Add(Between(905, false, 1000, kTcpSyn, {}));
    b.Add(Between(905, true, 5000, kTcpSyn | kTcpAck, {}));
    b.Add(Between(905, false, 1001, kTcpAck, c1));
    b.Add(Between(905, false, 1001 + static_cast<uint32_t>(c1.size()), kTcpAck, c2));
    const ByteView kept = snapped ? ByteView(replies).first(first) : ByteView(replies);
    b.Add(Between(905, true, 5001, kTcpAck, kept, static_cast<uint32_t>(replies.size())));
    RpcTrace t = b.Finish(CaptureCounts{});
    ASSERT_EQ(t.connections.size(), 1u);
    EXPECT_EQ(t.connections[0].replies, snapped ? 1u : 2u);
    const nlohmann::json j = TraceJson(t, TraceOptions{});
    EXPECT_EQ(j["contexts"][0]["in_flight"]["upper_bound"], snapped) << snapped;
    EXPECT_EQ(TraceText(j).find("at most 1/2/2") != std::string::npos, snapped) << TraceText(j);
  }
}

TEST(RpcTraceTest, ASynOnTheSamePortsStartsANewConnectionAndMaxseqStaysOutOfTheWindows) {
  RpcTraceBuilder b(TraceOptions{});
  const Bytes first = Framed(GssCall(1, 1, 10)), again = Framed(GssCall(1, 1, 11));
  b.Add(Between(900, false, 1000, kTcpSyn, {}));
  b.Add(Between(900, false, 1001, kTcpAck, first));
  b.Add(Between(900, false, 1000, kTcpSyn, {}));  // the same SYN again: the same connection
  // The client reconnects from its port: the same XID is no retransmission.
  b.Add(Between(900, false, 7000, kTcpSyn, {}));
  b.Add(Between(900, false, 7001, kTcpAck, again));
  // A number at MAXSEQ: the server answers CTXPROBLEM before its window.
  const Bytes maxseq = Framed(GssCall(2, 1, rpc::kMaxGssSeq));
  b.Add(Between(900, false, 7001 + static_cast<uint32_t>(again.size()), kTcpAck, maxseq));
  RpcTrace t = b.Finish({});
  ASSERT_EQ(t.connections.size(), 2u);
  EXPECT_EQ(t.connections[0].calls, 1u);
  EXPECT_EQ(t.connections[1].calls, 2u);
  EXPECT_EQ(t.connections[1].retransmissions, 0u);
  ASSERT_EQ(t.contexts.size(), 1u);
  EXPECT_EQ(t.contexts[0].calls, 2u);
  EXPECT_EQ(t.contexts[0].at_maxseq, 1u);
  EXPECT_EQ(t.contexts[0].below_window[16], 0u);
}

// A capture begun in the middle of a connection: its first bytes are the
// end of a call, and the first record is searched for, not taken from them.
TEST(RpcTraceTest, ACaptureBegunMidRecordFindsTheFirstWholeCall) {
  RpcTraceBuilder b(TraceOptions{});
  const Bytes a = Framed(GssCall(1, 4, 5)), next = Framed(GssCall(2, 4, 6));
  // The last 12 bytes of `a` (small integers of XDR, as a body is) and all
  // of `next`.
  const Bytes tail(a.end() - 12, a.end());
  const Bytes first = Cat(tail, next);
  b.Add(Between(902, false, 500, kTcpAck, first));
  RpcTrace t = b.Finish({});
  ASSERT_EQ(t.connections.size(), 1u);
  EXPECT_EQ(t.connections[0].calls, 1u);
  EXPECT_EQ(t.connections[0].unreadable_calls, 0u);
  EXPECT_EQ(t.connections[0].client_records.passed_over, 12u);
  ASSERT_EQ(t.contexts.size(), 1u);
  EXPECT_EQ(t.contexts[0].calls, 1u);
}

TEST(RpcTraceTest, ACallWhoseVerifierTheSnapLengthCutIsStillCounted) {
  RpcTraceBuilder b(TraceOptions{});
  const Bytes call = Framed(GssCall(1, 3, 5));
  // Everything up to the credential's end: 4 (mark) + 24 + 8 + the
  // credential body (5 words and a 4-byte handle).
  const size_t through_cred = 4 + 24 + 8 + 20 + 4;
  ASSERT_LT(through_cred, call.size());
  b.Add(Between(901, false, 1, kTcpAck, ByteView(call.data(), through_cred),
                static_cast<uint32_t>(call.size())));
  RpcTrace t = b.Finish({});
  ASSERT_EQ(t.contexts.size(), 1u);
  EXPECT_EQ(t.contexts[0].calls, 1u);
  EXPECT_EQ(t.connections[0].unreadable_calls, 0u);
}

TEST(RpcRecordsTest, ADeniedReplyOfTwentyBytesIsFoundAfterALostMark) {
  Records replies;  // Records decodes calls; a reply reads as -1 there
  RecordWalker w(replies);
  w.Bytes(0, {}, 7);  // lost: the walker searches
  const Bytes denied = Framed(Reply(9, rpc::kRpcsecGssCredProblem));
  ASSERT_EQ(denied.size(), 4u + 20u);
  w.Bytes(0, denied, denied.size());
  w.Finish();
  EXPECT_EQ(replies.xids, (std::vector<int64_t>{-1}));
  EXPECT_EQ(replies.lengths, (std::vector<uint64_t>{20}));
}

TEST(RpcTraceTest, ValuesKeepThreeDigitsAndBadWindowsAreRefused) {
  EXPECT_EQ(TraceValue(0), 0u);
  EXPECT_EQ(TraceValue(999), 999u);
  EXPECT_EQ(TraceValue(1234), 1230u);
  EXPECT_EQ(TraceValue(987654321), 987000000u);
  TraceOptions o;
  EXPECT_TRUE(CheckTraceOptions(o).ok());
  for (const std::vector<uint32_t>& bad :
       {std::vector<uint32_t>{}, {0}, {16, kMaxWindow + 1}, {32, 16}}) {
    o.windows = bad;
    EXPECT_EQ(CheckTraceOptions(o).code(), common::Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace secmode::trace
