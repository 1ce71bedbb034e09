// The SMB client's requests have the layout MS-SMB2 gives, and its parsers
// of a server's responses refuse bad input by name: truncated bodies,
// offsets outside the message, contexts that run past the end, a 3.1.1
// answer without SHA-512 preauth, wrong StructureSizes, request-shaped
// messages, refusals named by their NTSTATUS.
#include "smb/client_messages.h"

#include <gtest/gtest.h>

namespace secmode::smb {
namespace {

using common::Bytes;

Bytes Response(Command command, const Bytes& body, uint32_t status = kStatusSuccess) {
  Bytes m(kHeaderSize);
  HeaderFields h;
  h.command = command;
  h.flags = kFlagServerToRedir;
  h.status = status;
  WriteHeader(h, m.data());
  m.insert(m.end(), body.begin(), body.end());
  return m;
}

// A 3.1.1 NEGOTIATE response with a preauth context and, optionally, a
// cipher context.
Bytes Negotiate311(uint16_t preauth_algorithm, bool with_cipher) {
  Bytes b(64, 0);
  PutLe16(&b[0], 65);
  PutLe16(&b[4], kDialect311);
  PutLe16(&b[6], with_cipher ? 2 : 1);
  PutLe32(&b[32], 65536);
  PutLe32(&b[36], 65536);
  PutLe32(&b[60], 64 + 64);
  const uint8_t pre[] = {1, 0, 38, 0, 0, 0, 0, 0, 1, 0, 32, 0};
  b.insert(b.end(), pre, pre + sizeof pre);
  b.push_back(static_cast<uint8_t>(preauth_algorithm));
  b.push_back(static_cast<uint8_t>(preauth_algorithm >> 8));
  b.resize(b.size() + 32);
  if (with_cipher) {
    b.resize((b.size() + 7) & ~size_t{7});
    const uint8_t c[] = {2, 0, 4, 0, 0, 0, 0, 0, 1, 0, 4, 0};
    b.insert(b.end(), c, c + sizeof c);
  }
  return Response(Command::kNegotiate, b);
}

HeaderFields NegotiateHeader() {
  HeaderFields h;
  h.command = Command::kNegotiate;
  h.tree_id = 0;
  h.credit_charge = 0;
  return h;
}

TEST(ClientMessagesTest, NegotiateRequestCarriesDialectsAndAlignedContexts) {
  NegotiateRequest r;
  r.dialects = {kDialect311};
  r.ciphers = {CipherId::kAes256Gcm};
  r.signing_algorithms = {static_cast<uint16_t>(SigningAlgorithm::kAesGmac)};
  Bytes m;
  BuildNegotiateRequest(r, NegotiateHeader(), &m);
  const uint8_t* b = m.data() + kHeaderSize;
  EXPECT_EQ(Le16(b), 36);
  EXPECT_EQ(Le16(b + 2), 1);
  EXPECT_EQ(Le16(b + 36), kDialect311);
  const uint32_t offset = Le32(b + 28);
  EXPECT_EQ(offset % 8, 0u);
  EXPECT_EQ(Le16(b + 32), 3);  // preauth, encryption, signing
  // The first context: preauth with SHA-512 and a 32-byte salt.
  EXPECT_EQ(Le16(&m[offset]), 1);
  EXPECT_EQ(Le16(&m[offset + 2]), 38);
  EXPECT_EQ(Le16(&m[offset + 8 + 4]), 1);
  // The second, 8-aligned after it: the one cipher asked for.
  const size_t second = (offset + 8 + 38 + 7) & ~size_t{7};
  EXPECT_EQ(Le16(&m[second]), 2);
  EXPECT_EQ(Le16(&m[second + 8]), 1);
  EXPECT_EQ(Le16(&m[second + 10]), static_cast<uint16_t>(CipherId::kAes256Gcm));

  // SMB 2.1 only: no contexts at all.
  r.dialects = {kDialect210};
  BuildNegotiateRequest(r, NegotiateHeader(), &m);
  EXPECT_EQ(m.size(), kHeaderSize + 36 + 2);
}

TEST(ClientMessagesTest, NegotiateResponseParsesAndRefusesBadContexts) {
  auto ok = ParseNegotiateResponse(Negotiate311(1, true));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->dialect, kDialect311);
  EXPECT_EQ(ok->cipher, static_cast<uint16_t>(CipherId::kAes256Gcm));
  EXPECT_EQ(ok->max_read_size, 65536u);

  auto no_sha512 = ParseNegotiateResponse(Negotiate311(2, false));
  ASSERT_FALSE(no_sha512.ok());
  EXPECT_NE(no_sha512.status().message().find("SHA-512"), std::string::npos);

  Bytes cut = Negotiate311(1, true);
  cut.resize(cut.size() - 6);  // the cipher context runs past the end
  auto past = ParseNegotiateResponse(cut);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("context"), std::string::npos);

  Bytes bad_offset = Negotiate311(1, false);
  PutLe32(&bad_offset[kHeaderSize + 60], 1000000);
  EXPECT_FALSE(ParseNegotiateResponse(bad_offset).ok());

  Bytes bad_security = Negotiate311(1, false);
  PutLe16(&bad_security[kHeaderSize + 56], 64 + 64);
  PutLe16(&bad_security[kHeaderSize + 58], 60000);
  auto sec = ParseNegotiateResponse(bad_security);
  ASSERT_FALSE(sec.ok());
  EXPECT_NE(sec.status().message().find("security buffer"), std::string::npos);

  Bytes truncated = Negotiate311(1, false);
  truncated.resize(kHeaderSize + 20);
  EXPECT_EQ(ParseNegotiateResponse(truncated).status().code(), common::Code::kCorrupt);
}

TEST(ClientMessagesTest, RefusalsAreNamedByTheirStatus) {
  auto denied =
      ParseTreeConnectResponse(Response(Command::kTreeConnect, Bytes(16, 0), kStatusAccessDenied));
  ASSERT_FALSE(denied.ok());
  EXPECT_NE(denied.status().message().find("STATUS_ACCESS_DENIED"), std::string::npos);
  auto logon = ParseSessionSetupResponse(Response(Command::kSessionSetup, Bytes(8, 0), 0xC000006D));
  ASSERT_FALSE(logon.ok());
  EXPECT_EQ(logon.status().code(), common::Code::kAuthFailed);
  EXPECT_NE(logon.status().message().find("LOGON_FAILURE"), std::string::npos);
  // The server failing on its side is not a refusal of the credentials.
  auto failed = ParseSessionSetupResponse(
      Response(Command::kSessionSetup, Bytes(8, 0), kStatusInternalError));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), common::Code::kUnavailable);
  EXPECT_NE(failed.status().message().find("STATUS_INTERNAL_ERROR"), std::string::npos);
  EXPECT_NE(NtStatusName(0xC0001234).find("0xc0001234"), std::string::npos);
}

TEST(ClientMessagesTest, BodiesAndBuffersAreCheckedAgainstTheMessage) {
  // SESSION_SETUP: a token pointing outside the message.
  Bytes setup(8, 0);
  PutLe16(&setup[0], 9);
  PutLe16(&setup[4], kHeaderSize + 8);
  PutLe16(&setup[6], 100);
  EXPECT_FALSE(ParseSessionSetupResponse(Response(Command::kSessionSetup, setup)).ok());
  // The same with the token there.
  setup.resize(8 + 100, 0x61);
  auto s = ParseSessionSetupResponse(Response(Command::kSessionSetup, setup));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->token.size(), 100u);

  // CREATE: wrong StructureSize, then too short.
  Bytes create(88, 0);
  PutLe16(&create[0], 88);
  EXPECT_FALSE(ParseCreateResponse(Response(Command::kCreate, create)).ok());
  PutLe16(&create[0], 89);
  PutLe64(&create[64], 0x1122);
  auto c = ParseCreateResponse(Response(Command::kCreate, create));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->file.persistent, 0x1122u);
  create.resize(40);
  EXPECT_FALSE(ParseCreateResponse(Response(Command::kCreate, create)).ok());

  // QUERY_INFO output beyond the message.
  Bytes q(8, 0);
  PutLe16(&q[0], 9);
  PutLe16(&q[2], kHeaderSize + 8);
  PutLe32(&q[4], 24);
  EXPECT_FALSE(ParseQueryInfoResponse(Response(Command::kQueryInfo, q)).ok());

  // A request (no response flag) where a response is expected.
  Bytes w(16, 0);
  PutLe16(&w[0], 17);
  Bytes request = Response(Command::kWrite, w);
  PutLe32(&request[16], 0);
  auto r = ParseWriteResponse(request);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("response flag"), std::string::npos);
  // The wrong command.
  EXPECT_FALSE(ParseWriteResponse(Response(Command::kRead, w)).ok());
}

}  // namespace
}  // namespace secmode::smb
