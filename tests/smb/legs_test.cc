// The eight measured SMB modes built from a real Kerberos session key: each
// leg round-trips READ/WRITE data of every size, the wire is the SMB2 shape
// the mode promises, and tampering is rejected.
#include "smb/legs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "gss/context_pair.h"
#include "smb/gss_session.h"
#include "smb/message.h"
#include "smb/signing.h"
#include "smb/transform.h"
#include "tests/support/shared_realm.h"

namespace secmode::smb {
namespace {

using common::Bytes;
using common::ByteView;
using common::Code;

const char* const kModes[] = {"smb-plain",           "smb-sign-hmac-sha256", "smb-sign-aes-cmac",
                              "smb-sign-aes-gmac",   "smb-enc-aes-128-ccm",  "smb-enc-aes-128-gcm",
                              "smb-enc-aes-256-ccm", "smb-enc-aes-256-gcm"};

class SmbLegsTest : public ::testing::TestWithParam<const char*> {};

// The parsed mode of a mode name the test knows.
SmbMode ModeOf(const char* name) {
  auto m = ParseSmbModeName(name);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : SmbMode{};
}

TEST_P(SmbLegsTest, RoundTripsEverySizeWithARealKerberosSessionKey) {
  gss::Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  auto session = EstablishKerberosSmbSession(ModeOf(GetParam()), *realm);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(session->gss_key.size(), 32u);  // aes256-cts-hmac-sha1-96 subkey
  auto mode = ParseSmbModeName(GetParam());
  ASSERT_TRUE(mode.ok());
  auto a = MakeSmbAssociation(*mode, session->keys, session->session_id);
  ASSERT_TRUE(a.ok()) << a.status().ToString();

  for (size_t size : {0u, 1u, 128u, 4096u, 65536u, 1u << 20, 8u << 20}) {
    Bytes payload = common::PatternBytes(size, static_cast<uint32_t>(size) + 1);
    Bytes wire, opened;
    ASSERT_TRUE(a->client_seal->Seal(payload, &wire).ok()) << size;
    // The wire is what the mode promises.
    if (mode->protection == Protection::kEncrypt) {
      ASSERT_EQ(wire.size(), kTransformHeaderSize + kWriteDataOffset + size);
      auto dec =
          Decryptor::Create(mode->cipher->id, session->keys.client_to_server, session->session_id);
      ASSERT_TRUE(dec.ok());
      Bytes message;
      ASSERT_TRUE((*dec)->Open(wire, &message).ok()) << size;
      auto span = ParseWriteRequest(message);
      ASSERT_TRUE(span.ok()) << span.status().ToString();
      EXPECT_EQ(span->length, size);
      EXPECT_FALSE(Le32(message.data() + 16) & kFlagSigned);
    } else {
      auto span = ParseWriteRequest(wire);
      ASSERT_TRUE(span.ok()) << span.status().ToString();
      EXPECT_EQ(span->length, size);
      EXPECT_EQ(Le64(wire.data() + 40), session->session_id);
      EXPECT_EQ((Le32(wire.data() + 16) & kFlagSigned) != 0, mode->protection == Protection::kSign);
    }
    ASSERT_TRUE(a->server_open->Open(wire, &opened).ok()) << size;
    EXPECT_EQ(opened, payload) << size;

    Bytes reply = common::PatternBytes(size, 99);
    ASSERT_TRUE(a->server_seal->Seal(reply, &wire).ok()) << size;
    if (mode->protection != Protection::kEncrypt) {
      auto span = ParseReadResponse(wire);
      ASSERT_TRUE(span.ok()) << span.status().ToString();
      EXPECT_EQ(span->length, size);
    }
    ASSERT_TRUE(a->client_open->Open(wire, &opened).ok()) << size;
    EXPECT_EQ(opened, reply) << size;
  }

  // Tampering: protected modes reject a flipped data byte; plain cannot.
  Bytes payload = common::PatternBytes(1000, 5), wire, opened;
  ASSERT_TRUE(a->client_seal->Seal(payload, &wire).ok());
  wire[wire.size() - 10] ^= 0x01;
  auto s = a->server_open->Open(wire, &opened);
  if (mode->protection == Protection::kPlain) {
    EXPECT_TRUE(s.ok());
    EXPECT_NE(opened, payload);
  } else {
    EXPECT_EQ(s.code(), Code::kAuthFailed) << s.ToString();
  }
}

TEST_P(SmbLegsTest, RequestWireIsNotAcceptedAsAResponse) {
  gss::Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  auto a = MakeKerberosSmbAssociation(ModeOf(GetParam()), *realm);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Bytes wire, opened;
  ASSERT_TRUE(a->client_seal->Seal(common::PatternBytes(100, 1), &wire).ok());
  auto s = a->client_open->Open(wire, &opened);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(s.message().empty());
}

// A message replayed to the server is refused for every protected mode: the
// MessageId window applies to transforms as it does to signed messages.
TEST_P(SmbLegsTest, ReplayedMessageIsRefused) {
  gss::Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  auto a = MakeKerberosSmbAssociation(ModeOf(GetParam()), *realm);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Bytes wire, opened;
  ASSERT_TRUE(a->client_seal->Seal(common::PatternBytes(100, 1), &wire).ok());
  ASSERT_TRUE(a->server_open->Open(wire, &opened).ok());
  auto again = a->server_open->Open(wire, &opened);
  if (std::string(GetParam()) == "smb-plain") {
    EXPECT_TRUE(again.ok());  // nothing protects an unsigned message
  } else {
    EXPECT_EQ(again.code(), Code::kReplay) << again.ToString();
    EXPECT_TRUE(opened.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, SmbLegsTest, ::testing::ValuesIn(kModes), [](const auto& info) {
  std::string n = info.param;
  for (auto& ch : n) ch = ch == '-' ? '_' : ch;
  return n;
});

ByteView Released(const Bytes& b) { return ByteView(b.data(), b.capacity()); }
bool Contains(ByteView hay, ByteView needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

// The encrypted legs' opener: the SMB2 header inside a transform must carry
// the transform's SessionId, and whatever an open decrypted before refusing
// the message (wrong inner session, replay) is wiped from the caller's buffer.
TEST(SmbEncryptLegs, InnerSessionIdMustMatchAndRefusalsWipeThePlaintext) {
  constexpr uint64_t kSid = 0x0000100000000041ull;
  for (CipherId c :
       {CipherId::kAes128Ccm, CipherId::kAes128Gcm, CipherId::kAes256Ccm, CipherId::kAes256Gcm}) {
    const std::string what = CipherName(c);
    SessionKeys keys;
    keys.client_to_server = common::SecretBytes(common::PatternBytes(CipherKeyBytes(c), 41));
    keys.server_to_client = common::SecretBytes(common::PatternBytes(CipherKeyBytes(c), 42));
    const SmbMode mode = EncryptingMode(c);
    auto a = MakeSmbAssociation(mode, keys, kSid);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    // A client of this session's key that puts another session in the header.
    auto enc = Encryptor::Create(c, keys.client_to_server, kSid);
    ASSERT_TRUE(enc.ok()) << enc.status().ToString();
    const Bytes secret = common::PatternBytes(4096, 43);
    HeaderFields h;
    h.session_id = kSid + 1;
    h.message_id = 5;
    Bytes msg, wire, out;
    BuildWriteRequest(h, secret, &msg);
    ASSERT_TRUE((*enc)->Seal({msg}, &wire).ok());
    out.reserve(wire.size());
    auto s = a->server_open->Open(wire, &out);
    EXPECT_EQ(s.code(), Code::kAuthFailed) << what << ": " << s.ToString();
    EXPECT_NE(s.message().find("SessionId 0x100000000042, the TRANSFORM_HEADER 0x100000000041"),
              std::string::npos)
        << s.message();
    EXPECT_TRUE(out.empty()) << what;
    EXPECT_FALSE(Contains(Released(out), ByteView(secret).first(32))) << what << ": not wiped";
    // The same message with the right SessionId opens; its replay is refused
    // and wiped too.
    h.session_id = kSid;
    BuildWriteRequest(h, secret, &msg);
    ASSERT_TRUE((*enc)->Seal({msg}, &wire).ok());
    ASSERT_TRUE(a->server_open->Open(wire, &out).ok()) << what;
    EXPECT_EQ(out, secret) << what;
    auto again = a->server_open->Open(wire, &out);
    EXPECT_EQ(again.code(), Code::kReplay) << what << ": " << again.ToString();
    EXPECT_TRUE(out.empty()) << what;
    EXPECT_FALSE(Contains(Released(out), ByteView(secret).first(32))) << what << ": not wiped";
  }
}

TEST(SmbModes, UnknownModeNameIsRejected) {
  auto m = ParseSmbModeName("smb-enc-aes-512-gcm");
  EXPECT_EQ(m.status().code(), Code::kInvalidArgument);
  EXPECT_NE(m.status().message().find("smb-enc-aes-512-gcm"), std::string::npos);
}

}  // namespace
}  // namespace secmode::smb
