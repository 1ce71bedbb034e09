// TRANSFORM_HEADER encryption: round trips for every cipher, the nonce
// sequence and its exhaustion, and bad input (each rejection names its cause).
#include "smb/transform.h"

#include <gtest/gtest.h>

#include <string>

#include "common/hex.h"
#include "smb/message.h"

namespace secmode::smb {
namespace {

using common::Bytes;
using common::ByteView;
using common::Code;

constexpr uint64_t kSession = 0x0000100000000031ull;
constexpr CipherId kCiphers[] = {CipherId::kAes128Ccm, CipherId::kAes128Gcm, CipherId::kAes256Ccm,
                                 CipherId::kAes256Gcm};

Bytes Key(CipherId c) { return common::PatternBytes(CipherKeyBytes(c), 7); }

struct Pair {
  std::unique_ptr<Encryptor> enc;
  std::unique_ptr<Decryptor> dec;
};

Pair MakePair(CipherId c, uint64_t first_counter = 0, uint64_t last = UINT64_MAX) {
  Pair p;
  auto n = NonceSequence::Create(c, 0, first_counter, last);
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  auto e = Encryptor::Create(c, Key(c), kSession, *n);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  auto d = Decryptor::Create(c, Key(c), kSession);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  if (e.ok()) p.enc = std::move(*e);
  if (d.ok()) p.dec = std::move(*d);
  return p;
}

Bytes WriteMessage(size_t data_size) {
  HeaderFields h;
  h.session_id = kSession;
  h.message_id = 9;
  Bytes m;
  BuildWriteRequest(h, common::PatternBytes(data_size, 3), &m);
  return m;
}

class TransformTest : public ::testing::TestWithParam<CipherId> {};

TEST_P(TransformTest, RoundTripsWholeAndSplit) {
  Pair p = MakePair(GetParam());
  ASSERT_TRUE(p.enc && p.dec);
  for (size_t size : {0u, 1u, 4096u, 1u << 20}) {
    Bytes msg = WriteMessage(size);
    Bytes wire;
    ASSERT_TRUE(p.enc->Seal({msg}, &wire).ok());
    ASSERT_EQ(wire.size(), kTransformHeaderSize + msg.size());
    EXPECT_EQ(Le32(wire.data() + 36), msg.size());
    EXPECT_EQ(Le16(wire.data() + 42), 1);
    EXPECT_EQ(Le64(wire.data() + 44), kSession);
    // Ciphertext differs from the plaintext.
    EXPECT_NE(Bytes(wire.begin() + 52, wire.end()), msg);
    Bytes opened;
    ASSERT_TRUE(p.dec->Open(wire, &opened).ok());
    EXPECT_EQ(opened, msg);
    uint8_t head[kWriteDataOffset];
    Bytes tail;
    auto n = p.dec->Open(wire, common::MutableByteView(head, sizeof head), &tail);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, msg.size());
    EXPECT_EQ(Bytes(head, head + sizeof head), Bytes(msg.begin(), msg.begin() + sizeof head));
    EXPECT_EQ(tail, Bytes(msg.begin() + sizeof head, msg.end()));
  }
}

TEST_P(TransformTest, NoncesAreCountersWithTheChannelIdAndNeverRepeat) {
  const CipherId c = GetParam();
  auto n = NonceSequence::Create(c, 0x0203, 5);
  ASSERT_TRUE(n.ok());
  uint8_t a[16], b[16];
  ASSERT_TRUE(n->Next(a).ok());
  ASSERT_TRUE(n->Next(b).ok());
  EXPECT_EQ(Le64(a), 5u);
  EXPECT_EQ(Le64(b), 6u);
  EXPECT_EQ(a[8], 0x03);
  EXPECT_EQ(a[9], 0x02);
  for (size_t i = NonceBytes(c); i < 16; ++i) EXPECT_EQ(a[i], 0) << i;
  // Two channels sharing a key get disjoint nonces.
  auto other = NonceSequence::Create(c, 0x0204, 5);
  ASSERT_TRUE(other.ok());
  uint8_t o[16];
  ASSERT_TRUE(other->Next(o).ok());
  EXPECT_NE(std::string(a, a + 16), std::string(o, o + 16));
}

TEST_P(TransformTest, RefusesToEncryptOnceTheNonceSpaceIsUsedUp) {
  // Start the counter two short of the end of the 64-bit space.
  Pair p = MakePair(GetParam(), UINT64_MAX - 1);
  Bytes msg = WriteMessage(16), wire;
  ASSERT_TRUE(p.enc->Seal({msg}, &wire).ok());
  ASSERT_TRUE(p.enc->Seal({msg}, &wire).ok());
  auto s = p.enc->Seal({msg}, &wire);
  EXPECT_EQ(s.code(), Code::kExhausted) << s.ToString();
  EXPECT_NE(s.message().find("nonce space"), std::string::npos) << s.message();
  // And it stays refused.
  EXPECT_EQ(p.enc->Seal({msg}, &wire).code(), Code::kExhausted);
}

TEST_P(TransformTest, EveryBitFlipIsRejected) {
  Pair p = MakePair(GetParam());
  Bytes msg = WriteMessage(40), wire;
  ASSERT_TRUE(p.enc->Seal({msg}, &wire).ok());
  for (size_t bit = 0; bit < wire.size() * 8; ++bit) {
    Bytes bad = wire;
    bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    Bytes out = {1, 2, 3};
    auto s = p.dec->Open(bad, &out);
    ASSERT_FALSE(s.ok()) << "flip of bit " << bit << " accepted";
    EXPECT_TRUE(out.empty()) << "unverified plaintext released, bit " << bit;
    const size_t byte = bit / 8;
    if (byte < 4) {
      EXPECT_EQ(s.code(), Code::kCorrupt) << bit;
      EXPECT_NE(s.message().find("ProtocolId"), std::string::npos) << s.message();
    } else if (byte >= 36 && byte < 40) {
      EXPECT_EQ(s.code(), Code::kCorrupt) << bit;
      EXPECT_NE(s.message().find("OriginalMessageSize"), std::string::npos) << s.message();
    } else if (byte >= 42 && byte < 44) {
      EXPECT_EQ(s.code(), Code::kCorrupt) << bit;
      EXPECT_NE(s.message().find("Flags"), std::string::npos) << s.message();
    } else if (byte >= 44 && byte < 52) {
      EXPECT_EQ(s.code(), Code::kAuthFailed) << bit;
      EXPECT_NE(s.message().find("SessionId"), std::string::npos) << s.message();
    } else {
      // Signature, Nonce, Reserved (AAD) and ciphertext: the tag fails.
      EXPECT_EQ(s.code(), Code::kAuthFailed) << bit << " " << s.ToString();
      EXPECT_NE(s.message().find("tag mismatch"), std::string::npos) << s.message();
    }
  }
}

TEST_P(TransformTest, WrongSessionIdIsRejected) {
  Pair p = MakePair(GetParam());
  auto other = Decryptor::Create(GetParam(), Key(GetParam()), kSession + 1);
  ASSERT_TRUE(other.ok());
  Bytes msg = WriteMessage(10), wire, out;
  ASSERT_TRUE(p.enc->Seal({msg}, &wire).ok());
  auto s = (*other)->Open(wire, &out);
  EXPECT_EQ(s.code(), Code::kAuthFailed);
  EXPECT_NE(s.message().find("SessionId 0x100000000031"), std::string::npos) << s.message();
}

TEST_P(TransformTest, WrongKeyIsRejected) {
  Pair p = MakePair(GetParam());
  Bytes other_key = Key(GetParam());
  other_key[0] ^= 1;
  auto other = Decryptor::Create(GetParam(), other_key, kSession);
  ASSERT_TRUE(other.ok());
  Bytes msg = WriteMessage(10), wire, out;
  ASSERT_TRUE(p.enc->Seal({msg}, &wire).ok());
  EXPECT_EQ((*other)->Open(wire, &out).code(), Code::kAuthFailed);
}

TEST_P(TransformTest, OriginalMessageSizeLargerThanTheDataIsRejected) {
  Pair p = MakePair(GetParam());
  Bytes msg = WriteMessage(10), wire, out;
  ASSERT_TRUE(p.enc->Seal({msg}, &wire).ok());
  PutLe32(wire.data() + 36, static_cast<uint32_t>(msg.size() + 1));
  auto s = p.dec->Open(wire, &out);
  EXPECT_EQ(s.code(), Code::kCorrupt);
  EXPECT_NE(s.message().find("OriginalMessageSize " + std::to_string(msg.size() + 1) +
                             " but only " + std::to_string(msg.size())),
            std::string::npos)
      << s.message();
  PutLe32(wire.data() + 36, 0xFFFFFFFFu);
  EXPECT_EQ(p.dec->Open(wire, &out).code(), Code::kCorrupt);
}

TEST_P(TransformTest, TruncatedTransformIsRejected) {
  Pair p = MakePair(GetParam());
  Bytes msg = WriteMessage(10), wire, out;
  ASSERT_TRUE(p.enc->Seal({msg}, &wire).ok());
  for (size_t keep : {0u, 1u, 4u, 20u, 51u}) {
    auto s = p.dec->Open(ByteView(wire).first(keep), &out);
    EXPECT_EQ(s.code(), Code::kCorrupt) << keep;
    EXPECT_NE(s.message().find("truncated transform: " + std::to_string(keep) + " bytes"),
              std::string::npos)
        << s.message();
  }
  // Header intact, message cut short.
  auto s = p.dec->Open(ByteView(wire).first(wire.size() - 1), &out);
  EXPECT_EQ(s.code(), Code::kCorrupt);
  EXPECT_NE(s.message().find("OriginalMessageSize"), std::string::npos);
  // Header alone.
  EXPECT_EQ(p.dec->Open(ByteView(wire).first(52), &out).code(), Code::kCorrupt);
}

INSTANTIATE_TEST_SUITE_P(AllCiphers, TransformTest, ::testing::ValuesIn(kCiphers),
                         [](const auto& info) {
                           std::string n = CipherName(info.param);
                           for (auto& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

TEST(Transform, UnknownCipherIdIsRejected) {
  for (uint16_t raw : {0, 5, 0xFFFF}) {
    auto id = ParseCipherId(raw);
    ASSERT_FALSE(id.ok());
    EXPECT_EQ(id.status().code(), Code::kInvalidArgument);
    char want[32];
    snprintf(want, sizeof want, "unknown cipher id 0x%04x", raw);
    EXPECT_NE(id.status().message().find(want), std::string::npos) << id.status().message();
    auto e = Decryptor::Create(static_cast<CipherId>(raw), Bytes(16, 1), kSession);
    EXPECT_EQ(e.status().code(), Code::kInvalidArgument);
    EXPECT_NE(e.status().message().find(want), std::string::npos);
    EXPECT_FALSE(NonceSequence::Create(static_cast<CipherId>(raw), 0).ok());
  }
}

TEST(Transform, UnknownEncryptionAlgorithmFlagIsRejected) {
  Pair p = MakePair(CipherId::kAes128Gcm);
  Bytes msg = WriteMessage(10), wire, out;
  ASSERT_TRUE(p.enc->Seal({msg}, &wire).ok());
  PutLe16(wire.data() + 42, 0x0002);
  auto s = p.dec->Open(wire, &out);
  EXPECT_EQ(s.code(), Code::kCorrupt);
  EXPECT_NE(s.message().find("Flags/EncryptionAlgorithm 0x0002"), std::string::npos);
}

TEST(Transform, KeyOfTheWrongLengthIsRejected) {
  auto n = NonceSequence::Create(CipherId::kAes256Gcm, 0);
  ASSERT_TRUE(n.ok());
  auto e = Encryptor::Create(CipherId::kAes256Gcm, Bytes(16, 1), kSession, *n);
  EXPECT_EQ(e.status().code(), Code::kInvalidArgument);
  EXPECT_NE(e.status().message().find("aes-256-gcm key of 16 bytes, need 32"), std::string::npos);
}

TEST(Transform, CcmChannelIdMustFitThreeBytes) {
  EXPECT_FALSE(NonceSequence::Create(CipherId::kAes128Ccm, 1u << 24).ok());
  EXPECT_TRUE(NonceSequence::Create(CipherId::kAes128Gcm, 1u << 24).ok());
}

}  // namespace
}  // namespace secmode::smb
