// trace/smb_trace.h on captures written by secmode's own pcap writer
// (common/pcap.h) of messages made by smb/'s own builders: sessions over
// their channels, compounds, interim responses, credits, encrypted messages
// and a nonce sent twice, and a capture that lost the bytes of a header.
#include "trace/smb_trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/pcap.h"
#include "harness/results.h"
#include "render/report.h"
#include "smb/client_messages.h"
#include "smb/message.h"
#include "smb/transform.h"
#include "tests/trace/segment.h"
#include "trace/rpc_trace.h"

namespace secmode::trace {
namespace {

using common::Bytes;
using smb::Command;
using smb::HeaderFields;

constexpr uint64_t kSmbSession = 0x0000100000000041ull;

// Direct TCP (MS-SMB2 2.1): a zero byte and the message's length in 24 bits.
Bytes SmbFramed(const Bytes& message) {
  Bytes b;
  smb::AppendFramed(message, &b);
  return b;
}

// A header and `body_bytes` zero bytes after it.
Bytes SmbMessage(Command command, uint64_t id, uint64_t session, uint32_t flags,
                 uint16_t credits = 1, uint16_t charge = 1, uint32_t status = 0,
                 size_t body_bytes = 8) {
  HeaderFields h;
  h.command = command;
  h.message_id = id;
  h.session_id = session;
  h.flags = flags;
  h.credits = credits;
  h.credit_charge = charge;
  h.status = status;
  Bytes m(smb::kHeaderSize + body_bytes);
  smb::WriteHeader(h, m.data());
  return m;
}

// `first` and `second` compounded in one message (NextCommand, 8-aligned).
Bytes SmbCompound(Bytes first, const Bytes& second) {
  first.resize((first.size() + 7) / 8 * 8);
  smb::PutLe32(first.data() + 20, static_cast<uint32_t>(first.size()));
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

Bytes SmbTransform(uint64_t session, uint8_t nonce_byte, size_t inner) {
  smb::TransformHeader t;
  t.session_id = session;
  t.flags = smb::kTransformFlagEncrypted;
  t.original_message_size = static_cast<uint32_t>(inner);
  t.nonce[0] = nonce_byte;
  Bytes m(smb::kTransformHeaderSize + inner, 0xA5);
  smb::WriteTransformHeader(t, m.data());
  return m;
}

SmbTrace SmbOf(const std::vector<const common::PcapTcpWriter*>& writers) {
  SmbTraceBuilder b({445});
  for (const common::PcapTcpWriter* w : writers) {
    auto reader = CaptureReader::FromBytes(w->bytes(), "test.pcap");
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    TcpSegment s;
    while (reader.ok()) {
      auto more = (*reader)->Next(&s);
      EXPECT_TRUE(more.ok()) << more.status().ToString();
      if (!more.ok() || !*more) break;
      EXPECT_TRUE(b.Wants(s));
      b.Add(s);
    }
  }
  return b.Finish();
}

const uint32_t kSmbResponse = smb::kFlagServerToRedir;
const uint32_t kSmbSigned = smb::kFlagSigned;

// One session over two channels: a's traffic, then b's, bound to it.
void WriteTwoChannels(common::PcapTcpWriter& a, common::PcapTcpWriter& b) {
  a.Begin();
  b.Begin();
  // Channel 1: NEGOTIATE in clear, the session made, then signed requests:
  // a READ and a CLOSE compounded, a WRITE of 4 credits answered after an
  // interim response.
  a.Add(true, SmbFramed(SmbMessage(Command::kNegotiate, 0, 0, 0, 10)));
  a.Add(false, SmbFramed(SmbMessage(Command::kNegotiate, 0, 0, kSmbResponse, 0, 0, 0, 64)));
  Bytes setup;
  smb::BuildSessionSetupRequest(HeaderFields{Command::kSessionSetup, 0, 0, 1, 1, 0, 0, 31, 1}, 0, 1,
                                Bytes(16, 7), &setup);
  a.Add(true, SmbFramed(setup));
  a.Add(false, SmbFramed(SmbMessage(Command::kSessionSetup, 1, kSmbSession,
                                    kSmbResponse | kSmbSigned, 31)));
  a.Add(true, SmbFramed(SmbCompound(
                  SmbMessage(Command::kRead, 2, kSmbSession, kSmbSigned, 2),
                  SmbMessage(Command::kClose, 3, kSmbSession, kSmbSigned | smb::kFlagRelated, 2))));
  a.Add(true, SmbFramed(SmbMessage(Command::kWrite, 4, kSmbSession, kSmbSigned, 8, 4)));
  a.Add(false, SmbFramed(SmbCompound(
                   SmbMessage(Command::kRead, 2, kSmbSession, kSmbResponse | kSmbSigned, 2),
                   SmbMessage(Command::kClose, 3, kSmbSession, kSmbResponse | kSmbSigned, 2))));
  a.Add(false,
        SmbFramed(SmbMessage(Command::kWrite, 4, kSmbSession,
                             kSmbResponse | kSmbSigned | smb::kFlagAsync, 0, 4, 0x00000103)));
  a.Add(false, SmbFramed(SmbMessage(Command::kWrite, 4, kSmbSession,
                                    kSmbResponse | kSmbSigned | smb::kFlagAsync, 4, 4)));
  // Channel 2: bound to the session (SESSION_SETUP with the binding flag),
  // then a READ of its own numbering.
  Bytes bind;
  smb::BuildSessionSetupRequest(
      HeaderFields{Command::kSessionSetup, kSmbSigned, 0, 1, 1, kSmbSession, 0, 1, 1},
      smb::kSessionSetupBinding, 1, Bytes(16, 9), &bind);
  b.Add(true, SmbFramed(bind));
  b.Add(false, SmbFramed(SmbMessage(Command::kSessionSetup, 1, kSmbSession,
                                    kSmbResponse | kSmbSigned, 1)));
  b.Add(true, SmbFramed(SmbMessage(Command::kRead, 2, kSmbSession, kSmbSigned, 1)));
  b.Add(false, SmbFramed(SmbMessage(Command::kRead, 2, kSmbSession, kSmbResponse | kSmbSigned, 1)));
}

TEST(SmbTraceTest, ASessionOverTwoChannelsWithItsCreditsCompoundsAndInterimResponses) {
  common::PcapTcpWriter a(49152, 445), b(49153, 445);
  WriteTwoChannels(a, b);
  SmbTrace t = SmbOf({&a, &b});
  ASSERT_EQ(t.connections.size(), 2u);
  ASSERT_EQ(t.sessions.size(), 1u);
  const SmbSessionTrace& s = t.sessions[0];
  EXPECT_EQ(s.id, kSmbSession);
  EXPECT_EQ(s.connections.size(), 2u);
  EXPECT_EQ(s.bindings, 1u);
  // Headers with the session's id: on channel 1 the SESSION_SETUP response,
  // the READ and CLOSE requests and responses, the WRITE's request, interim
  // and final response; on channel 2 four. In clear: the binding request is
  // signed, the first SESSION_SETUP request has no session yet.
  EXPECT_EQ(s.signed_messages, 8u + 4u);
  EXPECT_EQ(s.plain, 0u);
  EXPECT_EQ(s.encrypted, 0u);
  // Asked: READ 2, CLOSE 2, WRITE 8 (channel 1), binding 1, READ 1.
  EXPECT_EQ(s.credits_requested, 2u + 2u + 8u + 1u + 1u);
  // Granted: SESSION_SETUP 31, READ 2, CLOSE 2, WRITE interim 0 and final
  // 4 (channel 1), SESSION_SETUP 1, READ 1.
  EXPECT_EQ(s.credits_granted, 31u + 2u + 2u + 0u + 4u + 1u + 1u);
  // READ, CLOSE and the WRITE of charge 4 waited at once.
  EXPECT_EQ(s.most_credits_in_use, 1u + 1u + 4u);
  ASSERT_EQ(s.highest_message_id.size(), 2u);
  EXPECT_EQ(s.highest_message_id.at(0), 4u);
  EXPECT_EQ(s.highest_message_id.at(1), 2u);
  EXPECT_EQ(s.nonces_reused, 0u);

  const SmbConnectionTrace& c1 = t.connections[0];
  EXPECT_EQ(c1.requests, 5u);   // NEGOTIATE, SESSION_SETUP, READ, CLOSE, WRITE
  EXPECT_EQ(c1.responses, 6u);  // their responses and the WRITE's interim one
  EXPECT_EQ(c1.compounded, 2u);
  EXPECT_EQ(c1.unmatched_responses, 0u);
  EXPECT_EQ(c1.unreadable, 0u);
  EXPECT_EQ(c1.outstanding_at_end, 0u);
  EXPECT_EQ(c1.most_outstanding, 3u);

  auto command = [&](const char* name, const char* protection) -> const SmbCommandTrace& {
    auto it = t.commands.find({name, protection});
    EXPECT_NE(it, t.commands.end()) << name << " [" << protection << "]";
    static const SmbCommandTrace none;
    return it == t.commands.end() ? none : it->second;
  };
  EXPECT_EQ(command("NEGOTIATE", "plain").requests, 1u);
  EXPECT_EQ(command("NEGOTIATE", "plain").responses, 1u);
  EXPECT_EQ(command("SESSION_SETUP", "plain").requests, 1u);
  EXPECT_EQ(command("SESSION_SETUP", "signed").requests, 1u);
  EXPECT_EQ(command("READ", "signed").requests, 2u);
  EXPECT_EQ(command("READ", "signed").responses, 2u);
  EXPECT_EQ(command("WRITE", "signed").responses, 1u);
  EXPECT_EQ(command("WRITE", "signed").interim, 1u);
  EXPECT_EQ(command("CLOSE", "signed").responses, 1u);
  // The pcap writer stamps segments 100 us apart: channel 1's READ was
  // answered two segments (the WRITE, then itself) after its request,
  // channel 2's one.
  SmbCommandTrace read = command("READ", "signed");
  EXPECT_EQ(read.response_ns.Percentile(0), 100000u);
  EXPECT_EQ(read.response_ns.Percentile(1.0), 200000u);
}

TEST(SmbTraceTest, EncryptedMessagesCountForTheirSessionAndANonceSentTwiceIsAnError) {
  common::PcapTcpWriter w(49154, 445);
  w.Begin();
  w.Add(true, SmbFramed(SmbTransform(kSmbSession, 1, 100)));
  w.Add(false, SmbFramed(SmbTransform(kSmbSession, 1, 80)));  // the server's own key: no reuse
  w.Add(true, SmbFramed(SmbTransform(kSmbSession, 2, 100)));
  w.Add(true, SmbFramed(SmbTransform(kSmbSession, 1, 100)));      // the client's nonce 1 again
  w.Add(true, SmbFramed(SmbTransform(kSmbSession + 1, 1, 100)));  // another session's key
  SmbTrace t = SmbOf({&w});
  ASSERT_EQ(t.sessions.size(), 2u);
  EXPECT_EQ(t.sessions[0].encrypted, 4u);
  EXPECT_EQ(t.sessions[0].nonces_reused, 1u);
  EXPECT_EQ(t.sessions[1].encrypted, 1u);
  EXPECT_EQ(t.sessions[1].nonces_reused, 0u);
  ASSERT_EQ(t.connections.size(), 1u);
  EXPECT_EQ(t.connections[0].encrypted, 5u);
  EXPECT_EQ(t.connections[0].requests, 0u);
  EXPECT_TRUE(t.commands.empty());  // an encrypted message's command is hidden
}

TEST(SmbTraceTest, AfterLostBytesTheNextMessageIsFoundAndWhatWasLostCounted) {
  common::PcapTcpWriter whole(49155, 445);
  whole.Begin();
  const Bytes first =
      SmbFramed(SmbMessage(Command::kRead, 5, kSmbSession, kSmbSigned, 1, 1, 0, 200));
  const Bytes second =
      SmbFramed(SmbMessage(Command::kRead, 6, kSmbSession, kSmbSigned, 1, 1, 0, 200));
  whole.Add(true, first);
  whole.Add(true, second);
  // The same stream with the first message's first 100 bytes not captured:
  // its header is lost, the second is found after it.
  common::PcapTcpWriter cut(49156, 445);
  cut.Begin();
  cut.Add(true, Bytes(first.begin(), first.begin() + 100));
  cut.Add(true, Bytes(first.begin() + 100, first.end()));
  cut.Add(true, second);
  // Drop the segment that carried the first 100 bytes: the pcap writer's
  // records are in order, so the file is rewritten without that one.
  auto reader = CaptureReader::FromBytes(cut.bytes(), "cut.pcap");
  ASSERT_TRUE(reader.ok());
  SmbTraceBuilder b({445});
  TcpSegment s;
  int payloads = 0;
  while (true) {
    auto more = (*reader)->Next(&s);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    if (s.payload_len > 0 && ++payloads == 1) continue;  // the lost segment
    b.Add(s);
  }
  SmbTrace t = b.Finish();
  ASSERT_EQ(t.connections.size(), 1u);
  const SmbConnectionTrace& c = t.connections[0];
  EXPECT_EQ(c.requests, 1u);
  EXPECT_EQ(c.from_client.lost, 100u);
  EXPECT_EQ(c.client_records.lost_place, 1u);
  // Passed over: the lost bytes and the rest of the first message.
  EXPECT_EQ(c.client_records.passed_over, first.size());
  ASSERT_EQ(t.sessions.size(), 1u);
  EXPECT_EQ(t.sessions[0].highest_message_id.at(0), 6u);

  SmbTrace from_whole = SmbOf({&whole});
  ASSERT_EQ(from_whole.connections.size(), 1u);
  EXPECT_EQ(from_whole.connections[0].requests, 2u);
  EXPECT_EQ(from_whole.connections[0].client_records.lost_place, 0u);
}

// A NetBIOS keep-alive (0x85, no body) between messages, alone in its
// segment or before a message in one, carries no message and loses no place;
// one that announces a body is no SMB framing, and the walker searches on.
TEST(SmbTraceTest, NetbiosKeepAlivesBetweenMessagesAreCountedAndPassed) {
  const Bytes keepalive = {0x85, 0, 0, 0};
  common::PcapTcpWriter w(49157, 445);
  w.Begin();
  w.Add(true, SmbFramed(SmbMessage(Command::kRead, 5, kSmbSession, kSmbSigned)));
  w.Add(true, keepalive);
  Bytes joined = keepalive;
  const Bytes next = SmbFramed(SmbMessage(Command::kRead, 6, kSmbSession, kSmbSigned));
  joined.insert(joined.end(), next.begin(), next.end());
  w.Add(true, joined);
  w.Add(false, SmbFramed(SmbMessage(Command::kRead, 5, kSmbSession, kSmbResponse | kSmbSigned)));
  w.Add(false, keepalive);
  w.Add(false, SmbFramed(SmbMessage(Command::kRead, 6, kSmbSession, kSmbResponse | kSmbSigned)));
  SmbTrace t = SmbOf({&w});
  ASSERT_EQ(t.connections.size(), 1u);
  const SmbConnectionTrace& c = t.connections[0];
  EXPECT_EQ(c.requests, 2u);
  EXPECT_EQ(c.client_records.keepalives, 2u);
  EXPECT_EQ(c.server_records.keepalives, 1u);
  EXPECT_EQ(c.client_records.lost_place, 0u);
  EXPECT_EQ(c.server_records.lost_place, 0u);
  EXPECT_EQ(c.client_records.records, 2u);
  ASSERT_EQ(t.sessions.size(), 1u);
  EXPECT_EQ(t.sessions[0].highest_message_id.at(0), 6u);

  common::PcapTcpWriter bad(49158, 445);
  bad.Begin();
  bad.Add(true, Bytes{0x85, 0, 0, 4, 1, 2, 3, 4});  // a keep-alive has no body
  bad.Add(true, next);
  SmbTrace b = SmbOf({&bad});
  ASSERT_EQ(b.connections.size(), 1u);
  EXPECT_EQ(b.connections[0].client_records.keepalives, 0u);
  EXPECT_EQ(b.connections[0].client_records.lost_place, 1u);
  EXPECT_EQ(b.connections[0].client_records.passed_over, 4u);  // after the mark, its body
  EXPECT_EQ(b.connections[0].requests, 1u);
}

TcpSegment SmbBetween(uint16_t client_port, bool back, uint32_t seq, uint8_t flags,
                      common::ByteView data) {
  return SegmentBetween(client_port, 445, back, seq, flags, data);
}

// One connection's client side sending `messages` (each framed), after its
// SYN; the server's side answering `answers`.
void SmbConverse(SmbTraceBuilder& b, uint16_t port, const std::vector<Bytes>& messages,
                 const std::vector<Bytes>& answers = {}) {
  b.Add(SmbBetween(port, false, 100, kTcpSyn, {}));
  b.Add(SmbBetween(port, true, 500, kTcpSyn | kTcpAck, {}));
  uint32_t seq = 101;
  for (const Bytes& m : messages) {
    b.Add(SmbBetween(port, false, seq, kTcpAck, m));
    seq += static_cast<uint32_t>(m.size());
  }
  seq = 501;
  for (const Bytes& m : answers) {
    b.Add(SmbBetween(port, true, seq, kTcpAck, m));
    seq += static_cast<uint32_t>(m.size());
  }
}

// What a capture brings beyond each cap is counted, not held: connections,
// sessions, requests waiting on a connection, nonces checked.
TEST(SmbTraceTest, WhatGoesBeyondTheCapsIsCountedNotHeld) {
  const Bytes read = SmbFramed(SmbMessage(Command::kRead, 1, 0, 0));
  {
    SmbTraceBuilder b({445});
    for (size_t i = 0; i < SmbTraceBuilder::kMaxConnections + 3; ++i) {
      const auto port = static_cast<uint16_t>(1024 + i);
      b.Add(SmbBetween(port, false, 100, kTcpSyn, {}));
      b.Add(SmbBetween(port, false, 101, kTcpAck, read));
    }
    SmbTrace t = b.Finish();
    EXPECT_EQ(t.connections.size(), SmbTraceBuilder::kMaxConnections);
    EXPECT_EQ(t.segments_over_limit, 6u);  // the last three's SYNs and READs
    EXPECT_EQ(t.connections.back().requests, 1u);
  }
  {
    SmbTraceBuilder b({445});
    std::vector<Bytes> requests;
    for (uint64_t i = 0; i < SmbTraceBuilder::kMaxSessions + 5; ++i) {
      requests.push_back(SmbFramed(SmbMessage(Command::kRead, i, kSmbSession + i, kSmbSigned)));
    }
    SmbConverse(b, 1000, requests);
    SmbTrace t = b.Finish();
    EXPECT_EQ(t.sessions.size(), SmbTraceBuilder::kMaxSessions);
    EXPECT_EQ(t.sessions_over_limit, 5u);
    ASSERT_EQ(t.connections.size(), 1u);
    EXPECT_EQ(t.connections[0].requests, SmbTraceBuilder::kMaxSessions + 5);
  }
  {
    // Requests never answered: beyond kMaxOutstanding the lowest MessageId
    // is given up, and its response, when it comes, answers nothing.
    SmbTraceBuilder b({445});
    std::vector<Bytes> requests;
    for (uint64_t i = 0; i < SmbTraceBuilder::kMaxOutstanding + 10; ++i) {
      requests.push_back(SmbFramed(SmbMessage(Command::kRead, i, 0, 0)));
    }
    SmbConverse(b, 1001, requests, {SmbFramed(SmbMessage(Command::kRead, 0, 0, kSmbResponse))});
    SmbTrace t = b.Finish();
    ASSERT_EQ(t.connections.size(), 1u);
    const SmbConnectionTrace& c = t.connections[0];
    EXPECT_EQ(c.outstanding_given_up, 10u);
    EXPECT_EQ(c.most_outstanding, SmbTraceBuilder::kMaxOutstanding);
    EXPECT_EQ(c.unmatched_responses, 1u);
    EXPECT_EQ(c.outstanding_at_end, SmbTraceBuilder::kMaxOutstanding);
  }
  {
    // Nonces: kMaxNonces are checked, the rest counted as not checked (a
    // reuse among them is not seen).
    // (Sent one at a time: half a million messages are not held at once.)
    SmbTraceBuilder b({445});
    SmbConverse(b, 1002, {});
    uint32_t seq = 101;
    for (uint32_t i = 0; i <= SmbTraceBuilder::kMaxNonces + 7; ++i) {
      Bytes m = SmbTransform(kSmbSession, 0, 16);
      // The nonce's first bytes, after ProtocolId and Signature; the last
      // message's nonce 0 again, beyond the cap.
      smb::PutLe32(m.data() + 20, i <= SmbTraceBuilder::kMaxNonces + 6 ? i : 0);
      const Bytes framed = SmbFramed(m);
      b.Add(SmbBetween(1002, false, seq, kTcpAck, framed));
      seq += static_cast<uint32_t>(framed.size());
    }
    SmbTrace t = b.Finish();
    ASSERT_EQ(t.sessions.size(), 1u);
    EXPECT_EQ(t.sessions[0].encrypted, SmbTraceBuilder::kMaxNonces + 8);
    EXPECT_EQ(t.sessions[0].nonces_not_checked, 8u);
    EXPECT_EQ(t.sessions[0].nonces_reused, 0u);
  }
}

// The SMB part of section "trace" is drawn from results.json alone, and a
// crafted value of another type is a dash, not a failure.
TEST(SmbTraceTest, TheReportDrawsTheSessionsCommandsAndConnections) {
  common::PcapTcpWriter a(49152, 445), b(49153, 445);
  WriteTwoChannels(a, b);
  RpcTrace t;
  t.smb = SmbOf({&a, &b});
  const TraceOptions o;
  harness::RunResults written;
  written.command = "secmode trace smb.pcap --out DIR";
  written.sections[render::kTraceSection] = TraceJson(t, o);
  auto read = harness::ReadResultsJson(harness::ToJson(written).dump());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  auto drawn = render::RenderRun(*read);
  ASSERT_TRUE(drawn.ok()) << drawn.status().ToString();
  const std::string& md = drawn->report_md;
  EXPECT_NE(md.find("### SMB sessions"), std::string::npos) << md;
  // Two channels, one bound; 12 signed messages; credits asked, granted
  // and held at once; MessageIds 4 and 2; no nonce.
  EXPECT_NE(md.find("| `0x0000100000000041` | 2 | 1 | 0 / 12 / 0 | 14 / 41 / 6 | 2 | 0 / 0 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| WRITE | signed | 1 | 1 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| NEGOTIATE | plain | 1 | 1 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("### SMB connections"), std::string::npos) << md;
  // And on the terminal.
  const std::string text = TraceText(written.sections[render::kTraceSection]);
  EXPECT_NE(text.find("0x0000100000000041: 2 (1), 0/12/0, 14/41/6, 2, 0 (0)"), std::string::npos)
      << text;
  nlohmann::json& smb = read->sections[render::kTraceSection]["smb"];
  smb["sessions"][0]["messages"] = "many";
  smb["sessions"][0]["bindings"] = nlohmann::json::array();
  smb["commands"][0]["command"] = "a|b<img src=x>";
  smb["connections"] = "none";
  auto crafted = render::RenderRun(*read);
  ASSERT_TRUE(crafted.ok()) << crafted.status().ToString();
  EXPECT_NE(crafted->report_md.find("| `0x0000100000000041` | 2 | - | - / - / - |"),
            std::string::npos)
      << crafted->report_md;
  EXPECT_NE(crafted->report_md.find("| a\\|b\\<img src=x\\> |"), std::string::npos)
      << crafted->report_md;
}

// The server's notification answers no request; a CANCEL is a request
// that waits for nothing; a number no command has is one "unknown
// command"; a related operation is of the session before it.
TEST(SmbTraceTest, NotificationsCancelsUnknownCommandsAndRelatedOperations) {
  common::PcapTcpWriter w(49157, 445);
  w.Begin();
  w.Add(true, SmbFramed(SmbMessage(Command::kRead, 7, kSmbSession, kSmbSigned)));
  w.Add(true, SmbFramed(SmbMessage(Command::kCancel, 7, kSmbSession, kSmbSigned)));
  w.Add(false, SmbFramed(SmbMessage(static_cast<Command>(0x12), UINT64_MAX, kSmbSession,
                                    kSmbResponse | kSmbSigned)));
  w.Add(true, SmbFramed(SmbMessage(static_cast<Command>(0x99), 8, kSmbSession, kSmbSigned)));
  w.Add(true, SmbFramed(SmbCompound(
                  SmbMessage(Command::kCreate, 9, kSmbSession, kSmbSigned),
                  SmbMessage(Command::kClose, 10, UINT64_MAX, kSmbSigned | smb::kFlagRelated))));
  SmbTrace t = SmbOf({&w});
  ASSERT_EQ(t.connections.size(), 1u);
  const SmbConnectionTrace& c = t.connections[0];
  EXPECT_EQ(c.notifications, 1u);
  EXPECT_EQ(c.unmatched_responses, 0u);
  EXPECT_EQ(c.requests, 5u);
  // READ, the unknown one, CREATE and CLOSE wait; the CANCEL does not.
  EXPECT_EQ(c.outstanding_at_end, 4u);
  EXPECT_EQ(t.commands.count({"CANCEL", "signed"}), 1u);
  EXPECT_EQ(t.commands.count({"unknown command", "signed"}), 1u);
  // The related CLOSE's session is the CREATE's, not all ones.
  ASSERT_EQ(t.sessions.size(), 1u);
  EXPECT_EQ(t.sessions[0].id, kSmbSession);
  EXPECT_EQ(t.sessions[0].signed_messages, 6u);
}

TEST(SmbTraceTest, APortGivenForRpcAndSmbIsRefused) {
  TraceOptions o;
  o.rpc_ports = {2049, 445};
  EXPECT_FALSE(CheckTraceOptions(o).ok());
  o.rpc_ports = {2049};
  EXPECT_TRUE(CheckTraceOptions(o).ok());
}

}  // namespace
}  // namespace secmode::trace
