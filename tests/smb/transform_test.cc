// TRANSFORM_HEADER encryption: round trips for every cipher, the nonce
// sequence and its exhaustion, and bad input (each rejection names its cause).
#include "smb/transform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "common/hex.h"
#include "smb/message.h"

namespace secmode::smb {
namespace {

using common::Bytes;
using common::ByteView;
using common::Code;
using common::Status;

constexpr uint64_t kSession = 0x0000100000000031ull;
constexpr CipherId kCiphers[] = {CipherId::kAes128Ccm, CipherId::kAes128Gcm, CipherId::kAes256Ccm,
                                 CipherId::kAes256Gcm};

Bytes Key(CipherId c) { return common::PatternBytes(CipherKeyBytes(c), 7); }
// A key no other Encryptor of this process has used: explicit nonce ranges
// are reserved per key (the nonce ledger, smb/transform.h).
Bytes FreshKey(CipherId c) {
  static uint32_t seed = 1000;
  return common::PatternBytes(CipherKeyBytes(c), ++seed);
}

struct Pair {
  std::unique_ptr<Encryptor> enc;
  std::unique_ptr<Decryptor> dec;
};

// Counters drawn from the ledger, or an explicit range under a fresh key.
Pair MakePair(CipherId c, uint64_t first_counter = 0, uint64_t last = UINT64_MAX) {
  Pair p;
  const bool drawn = first_counter == 0 && last == UINT64_MAX;
  const Bytes key = drawn ? Key(c) : FreshKey(c);
  common::Result<std::unique_ptr<Encryptor>> e = Status::Internal("unset");
  if (drawn) {
    e = Encryptor::Create(c, key, kSession);
  } else {
    auto n = NonceSequence::Create(c, 0, first_counter, last);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (n.ok()) e = Encryptor::Create(c, key, kSession, std::move(*n));
  }
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  auto d = Decryptor::Create(c, key, kSession);
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

// A NonceSequence cannot be copied, and a moved-from one never hands out
// the nonces its successor will.
TEST(NonceSequence, IsMoveOnlyAndAMoveExhaustsTheSource) {
  static_assert(!std::is_copy_constructible_v<NonceSequence>);
  static_assert(!std::is_copy_assignable_v<NonceSequence>);
  auto n = NonceSequence::Create(CipherId::kAes128Gcm, 3, 10);
  ASSERT_TRUE(n.ok());
  NonceSequence moved = std::move(*n);
  uint8_t a[16], b[16];
  ASSERT_TRUE(moved.Next(a).ok());
  EXPECT_EQ(Le64(a), 10u);
  EXPECT_EQ(n->Next(b).code(), Code::kExhausted);  // the source is spent
  EXPECT_TRUE(n->exhausted());
  auto other = NonceSequence::Create(CipherId::kAes128Gcm, 3, 50);
  ASSERT_TRUE(other.ok());
  moved = std::move(*other);
  ASSERT_TRUE(moved.Next(a).ok());
  EXPECT_EQ(Le64(a), 50u);
  EXPECT_EQ(other->Next(b).code(), Code::kExhausted);
}

std::string NonceOf(const Bytes& wire) { return std::string(wire.begin() + 20, wire.begin() + 36); }

// The nonce ledger: Encryptors of one key never share a counter, drawn or
// explicit, and the counters one used stay taken after it is gone.
TEST_P(TransformTest, EncryptorsOfOneKeyNeverShareACounter) {
  const CipherId c = GetParam();
  const Bytes key = FreshKey(c);
  std::set<std::string> nonces;
  std::set<uint64_t> starts;
  Bytes msg = WriteMessage(16), wire;
  uint64_t first_block = 0;
  {
    std::vector<std::unique_ptr<Encryptor>> all;
    for (uint32_t channel : {0u, 0u, 1u, 7u}) {  // same channel twice, on purpose
      auto e = Encryptor::Create(c, key, kSession, channel);
      ASSERT_TRUE(e.ok()) << e.status().ToString();
      EXPECT_TRUE(starts.insert((*e)->nonces().first_counter()).second)
          << "two Encryptors of one key start at counter " << (*e)->nonces().first_counter();
      all.push_back(std::move(*e));
    }
    first_block = all[0]->nonces().first_counter();
    for (int round = 0; round < 20; ++round) {
      for (auto& e : all) {
        ASSERT_TRUE(e->Seal({msg}, &wire).ok());
        EXPECT_TRUE(nonces.insert(NonceOf(wire)).second) << "nonce reused, round " << round;
      }
    }
    // An explicit range over counters a live Encryptor holds is refused.
    auto n = NonceSequence::Create(c, 9, first_block + 1000, first_block + 2000);
    ASSERT_TRUE(n.ok());
    auto clash = Encryptor::Create(c, key, kSession, std::move(*n));
    ASSERT_FALSE(clash.ok());
    EXPECT_EQ(clash.status().code(), Code::kInvalidArgument);
    EXPECT_NE(clash.status().message().find("already given to another Encryptor with this key"),
              std::string::npos)
        << clash.status().message();
  }
  // All gone: the 20 counters the first one used are still taken, the rest
  // of its block is free again.
  auto used = NonceSequence::Create(c, 0, first_block + 19, first_block + 19);
  ASSERT_TRUE(used.ok());
  EXPECT_FALSE(Encryptor::Create(c, key, kSession, std::move(*used)).ok());
  auto unused = NonceSequence::Create(c, 0, first_block + 20, first_block + 29);
  ASSERT_TRUE(unused.ok());
  auto again = Encryptor::Create(c, key, kSession, std::move(*unused));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE((*again)->Seal({msg}, &wire).ok());
  EXPECT_TRUE(nonces.insert(NonceOf(wire)).second);
  // A drawn Encryptor now starts above everything used.
  auto drawn = Encryptor::Create(c, key, kSession);
  ASSERT_TRUE(drawn.ok());
  ASSERT_TRUE((*drawn)->Seal({msg}, &wire).ok());
  EXPECT_TRUE(nonces.insert(NonceOf(wire)).second);
  // Another key is not affected.
  auto elsewhere = NonceSequence::Create(c, 0, first_block, first_block + 10);
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_TRUE(Encryptor::Create(c, FreshKey(c), kSession, std::move(*elsewhere)).ok());
}

TEST(Transform, NonceSequenceOfAnotherNonceSizeIsRefused) {
  auto n = NonceSequence::Create(CipherId::kAes128Ccm, 0);
  ASSERT_TRUE(n.ok());
  auto e = Encryptor::Create(CipherId::kAes128Gcm, FreshKey(CipherId::kAes128Gcm), kSession,
                             std::move(*n));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("11-byte nonces"), std::string::npos) << e.status().message();
}

ByteView Released(const Bytes& b) { return ByteView(b.data(), b.capacity()); }
bool Contains(ByteView hay, ByteView needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

// An altered tag is only found after decryption (GCM checks it at the end):
// a failed Open must wipe the plaintext from both of the caller's buffers.
TEST_P(TransformTest, FailedOpenWipesTheUnauthenticatedPlaintext) {
  Pair p = MakePair(GetParam());
  ASSERT_TRUE(p.enc && p.dec);
  const Bytes secret = common::PatternBytes(4096, 99);
  HeaderFields h;
  h.session_id = kSession;
  Bytes msg, wire;
  BuildWriteRequest(h, secret, &msg);
  ASSERT_TRUE(p.enc->Seal({msg}, &wire).ok());
  wire[4] ^= 0x80;  // the Signature (tag)
  Bytes out;
  out.reserve(wire.size());
  ASSERT_FALSE(p.dec->Open(wire, &out).ok());
  EXPECT_TRUE(out.empty());
  for (size_t off = 0; off + 32 <= secret.size(); off += 256) {
    EXPECT_FALSE(Contains(Released(out), ByteView(secret).subspan(off, 32))) << off;
  }
  uint8_t head[kWriteDataOffset + 64];
  std::memset(head, 0xAA, sizeof head);
  Bytes tail;
  tail.reserve(wire.size());
  ASSERT_FALSE(p.dec->Open(wire, common::MutableByteView(head, sizeof head), &tail).ok());
  EXPECT_EQ(Bytes(head, head + sizeof head), Bytes(sizeof head, 0)) << "head not wiped";
  EXPECT_TRUE(tail.empty());
  for (size_t off = 64; off + 32 <= secret.size(); off += 256) {
    EXPECT_FALSE(Contains(Released(tail), ByteView(secret).subspan(off, 32))) << off;
  }
}

INSTANTIATE_TEST_SUITE_P(AllCiphers, TransformTest, ::testing::ValuesIn(kCiphers),
                         [](const auto& info) {
                           std::string n = CipherName(info.param);
                           for (auto& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

TEST(Transform, UnknownCipherIdIsRejected) {
  // 0, the id just past the table's, and the largest.
  uint16_t past = 0;
  for (const CipherProfile& c : CipherProfiles()) {
    past = std::max<uint16_t>(past, static_cast<uint16_t>(static_cast<uint16_t>(c.id) + 1));
  }
  for (uint16_t raw : {uint16_t{0}, past, uint16_t{0xFFFF}}) {
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
  auto e = Encryptor::Create(CipherId::kAes256Gcm, Bytes(16, 1), kSession, std::move(*n));
  EXPECT_EQ(e.status().code(), Code::kInvalidArgument);
  EXPECT_NE(e.status().message().find("aes-256-gcm key of 16 bytes, need 32"), std::string::npos);
}

TEST(Transform, CcmChannelIdMustFitThreeBytes) {
  EXPECT_FALSE(NonceSequence::Create(CipherId::kAes128Ccm, 1u << 24).ok());
  EXPECT_TRUE(NonceSequence::Create(CipherId::kAes128Gcm, 1u << 24).ok());
}

}  // namespace
}  // namespace secmode::smb
