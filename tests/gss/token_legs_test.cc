#include "gss/token_legs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gss/context_pair.h"
#include "tests/support/shared_realm.h"

namespace secmode::gss {
namespace {

using common::Bytes;
using common::Code;

class MitKrb5pTest : public ::testing::TestWithParam<Enctype> {
 protected:
  void SetUp() override {
    Realm* realm = testing::SharedRealm();
    ASSERT_NE(realm, nullptr);
    auto pair = ContextPair::Establish(*realm, GetParam());
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    initiator_ = NewMitProtector((*pair)->ReleaseInitiator());
    acceptor_ = NewMitProtector((*pair)->ReleaseAcceptor());
    MakeTokenLegs(Protection::kWrapConf, initiator_, acceptor_, &a_);
  }
  std::shared_ptr<Protector> initiator_, acceptor_;
  common::Association a_;
};

TEST_P(MitKrb5pTest, RoundTripsEverySizeBothDirections) {
  auto& client_seal = a_.client_seal;
  auto& server_open = a_.server_open;
  auto& server_seal = a_.server_seal;
  auto& client_open = a_.client_open;
  for (size_t size : {0u, 1u, 15u, 16u, 17u, 4096u, 1u << 20}) {
    Bytes payload = common::PatternBytes(size, static_cast<uint32_t>(size));
    Bytes wire, opened;
    ASSERT_TRUE(client_seal->Seal(payload, &wire).ok()) << size;
    EXPECT_GT(wire.size(), size);  // header, confounder, checksum
    if (size >= 16) {
      // Sealed: the plaintext does not appear in the token.
      auto it = std::search(wire.begin(), wire.end(), payload.begin(), payload.begin() + 16);
      EXPECT_EQ(it, wire.end()) << "plaintext visible at size " << size;
    }
    auto s = server_open->Open(wire, &opened);
    ASSERT_TRUE(s.ok()) << size << ": " << s.ToString();
    EXPECT_EQ(opened, payload) << size;
    ASSERT_TRUE(server_seal->Seal(payload, &wire).ok());
    ASSERT_TRUE(client_open->Open(wire, &opened).ok()) << size;
    EXPECT_EQ(opened, payload) << size;
  }
}

TEST_P(MitKrb5pTest, FlippedBitIsRejectedWithCause) {
  auto& seal = a_.client_seal;
  auto& open = a_.server_open;
  Bytes payload = common::PatternBytes(100), wire, opened;
  constexpr size_t kLastByte = SIZE_MAX;
  for (size_t bit : {size_t{0}, size_t{7 * 8}, size_t{20 * 8 + 3}, kLastByte}) {
    ASSERT_TRUE(seal->Seal(payload, &wire).ok());
    size_t b = bit == kLastByte ? (wire.size() - 1) * 8 : bit;
    wire[b / 8] ^= static_cast<uint8_t>(1u << (b % 8));
    auto s = open->Open(wire, &opened);
    EXPECT_FALSE(s.ok()) << "bit " << b << " flip accepted";
    EXPECT_NE(s.message().find("gss_unwrap"), std::string::npos) << s.ToString();
    EXPECT_TRUE(s.code() == Code::kAuthFailed || s.code() == Code::kCorrupt) << s.ToString();
  }
}

TEST_P(MitKrb5pTest, ReplayedTokenIsRejected) {
  auto& seal = a_.client_seal;
  auto& open = a_.server_open;
  Bytes payload = common::PatternBytes(64), wire, opened;
  ASSERT_TRUE(seal->Seal(payload, &wire).ok());
  ASSERT_TRUE(open->Open(wire, &opened).ok());
  auto replay = open->Open(wire, &opened);
  EXPECT_EQ(replay.code(), Code::kReplay) << replay.ToString();
}

TEST_P(MitKrb5pTest, TokenForTheOtherDirectionIsRejected) {
  // A token the initiator sealed, fed back to the initiator: RFC 4121's
  // SentByAcceptor flag must not match.
  auto& seal = a_.client_seal;
  auto& wrong = a_.client_open;
  Bytes payload = common::PatternBytes(64), wire, opened;
  ASSERT_TRUE(seal->Seal(payload, &wire).ok());
  EXPECT_FALSE(wrong->Open(wire, &opened).ok());
}

TEST_P(MitKrb5pTest, TruncatedTokensAreRejected) {
  auto& seal = a_.client_seal;
  auto& open = a_.server_open;
  Bytes payload = common::PatternBytes(40), wire, opened;
  ASSERT_TRUE(seal->Seal(payload, &wire).ok());
  for (size_t len = 0; len < wire.size(); ++len) {
    Bytes cut(wire.begin(), wire.begin() + static_cast<long>(len));
    EXPECT_FALSE(open->Open(cut, &opened).ok()) << "accepted " << len << " of " << wire.size();
  }
}

INSTANTIATE_TEST_SUITE_P(AllEnctypes, MitKrb5pTest, ::testing::ValuesIn(kAllEnctypes),
                         [](const auto& info) {
                           std::string n = EnctypeName(info.param);
                           for (char& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

}  // namespace
}  // namespace secmode::gss

namespace secmode::gss {
namespace {

using common::Bytes;
using common::ByteView;
using common::Code;

// Every protection on every engine: round trips both directions, puts the
// payload on the wire in clear or not as the mode says, and rejects what it
// must (krb5 leaves the payload unprotected by design: only the header
// stand-in is signed).
TEST(TokenLegsTest, EveryProtectionOnEveryEngine) {
  Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  for (Engine engine : kAllEngines) {
    for (Protection prot : {Protection::kHeaderMic, Protection::kMicData, Protection::kWrapConf,
                            Protection::kWrapInteg}) {
      const std::string what = std::string(EngineName(engine)) + " " + ProtectionName(prot);
      auto pair = ContextPair::Establish(*realm, kDefaultEnctype);
      ASSERT_TRUE(pair.ok()) << pair.status().ToString();
      auto init = NewProtector(engine, (*pair)->ReleaseInitiator());
      auto acc = NewProtector(engine, (*pair)->ReleaseAcceptor());
      ASSERT_TRUE(init.ok() && acc.ok()) << what;
      common::Association a;
      MakeTokenLegs(prot, std::move(init).value(), std::move(acc).value(), &a);
      for (size_t size : {0u, 1u, 100u, 5000u}) {
        Bytes payload = common::PatternBytes(size, 3), wire, opened;
        ASSERT_TRUE(a.client_seal->Seal(payload, &wire).ok()) << what;
        bool clear =
            std::search(wire.begin(), wire.end(), payload.begin(), payload.end()) != wire.end();
        if (size >= 16) {
          EXPECT_EQ(clear, prot != Protection::kWrapConf) << what;
        }
        auto s = a.server_open->Open(wire, &opened);
        ASSERT_TRUE(s.ok()) << what << " " << size << ": " << s.ToString();
        EXPECT_EQ(opened, payload) << what;
        ASSERT_TRUE(a.server_seal->Seal(payload, &wire).ok()) << what;
        ASSERT_TRUE(a.client_open->Open(wire, &opened).ok()) << what;
        EXPECT_EQ(opened, payload) << what;
      }
      Bytes payload = common::PatternBytes(64, 4), wire, opened;
      ASSERT_TRUE(a.client_seal->Seal(payload, &wire).ok());
      Bytes bad = wire;
      bad[bad.size() - 1] ^= 0x01;  // payload for krb5, checksum for the others
      auto s = a.server_open->Open(bad, &opened);
      if (prot == Protection::kHeaderMic) {
        EXPECT_TRUE(s.ok()) << what << ": krb5 does not protect the payload";
      } else {
        EXPECT_FALSE(s.ok()) << what << ": altered message accepted";
      }
      for (size_t len : {0u, 3u}) {
        auto t = a.server_open->Open(ByteView(wire.data(), len), &opened);
        EXPECT_FALSE(t.ok()) << what << " " << len;
        EXPECT_FALSE(t.message().empty());
      }
      if (prot == Protection::kMicData || prot == Protection::kHeaderMic) {
        Bytes lie = wire;
        lie[0] = 0x7f;  // length field larger than the message
        auto t = a.server_open->Open(lie, &opened);
        EXPECT_EQ(t.code(), Code::kCorrupt) << t.ToString();
        EXPECT_NE(t.message().find("exceeds"), std::string::npos) << t.ToString();
      }
    }
  }
}

}  // namespace
}  // namespace secmode::gss

namespace secmode::gss {
namespace {

using common::Bytes;
using common::ByteView;
using common::Code;

std::string Name(Engine engine, Protection prot) {
  return std::string(EngineName(engine)) + " " + ProtectionName(prot);
}

// gss/protector.h: with the replay and sequence flags (ContextPair asks for
// both), a replay of one of the last 64 tokens is refused and an older one
// is accepted and counted as unseq, on every engine, for wrap and MIC tokens
// alike, as MIT's g_seqstate decides. The legs add nothing of their own.
TEST(TokenLegsTest, ReplayIsRefusedWithin64TokensAndAcceptedBeyondAsMitDoes) {
  Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  for (Engine engine : kAllEngines) {
    for (Protection prot : {Protection::kWrapConf, Protection::kMicData, Protection::kHeaderMic}) {
      const std::string what = Name(engine, prot);
      auto pair = ContextPair::Establish(*realm, kDefaultEnctype);
      ASSERT_TRUE(pair.ok()) << pair.status().ToString();
      auto init = NewProtector(engine, (*pair)->ReleaseInitiator());
      auto acc = NewProtector(engine, (*pair)->ReleaseAcceptor());
      ASSERT_TRUE(init.ok() && acc.ok()) << what;
      std::shared_ptr<Protector> acceptor = std::move(acc).value();
      common::Association a;
      MakeTokenLegs(prot, std::move(init).value(), acceptor, &a);
      // 66 messages in sequence-number order: W0 .. W65.
      std::vector<Bytes> wires(66);
      const Bytes first = common::PatternBytes(48, 77);
      for (size_t i = 0; i < wires.size(); ++i) {
        Bytes payload = i == 0 ? first : common::PatternBytes(48, static_cast<uint32_t>(i));
        ASSERT_TRUE(a.client_seal->Seal(payload, &wires[i]).ok()) << what;
      }
      Bytes opened;
      for (size_t i = 0; i < 64; ++i) {
        ASSERT_TRUE(a.server_open->Open(wires[i], &opened).ok()) << what << " W" << i;
      }
      // W0 is 64 behind the next expected number: still remembered.
      auto dup = a.server_open->Open(wires[0], &opened);
      EXPECT_EQ(dup.code(), Code::kReplay) << what << ": " << dup.ToString();
      EXPECT_NE(dup.message().find("duplicate"), std::string::npos)
          << what << ": " << dup.message();
      EXPECT_TRUE(opened.empty()) << what;
      ASSERT_TRUE(a.server_open->Open(wires[64], &opened).ok()) << what;
      // Now 65 behind: out of the 64-token history, so accepted (and
      // accepted again), counted as unseq: replay protection is the layer
      // above's job.
      const SequenceCounts before = acceptor->sequence_counts();
      for (int again = 0; again < 2; ++again) {
        auto old = a.server_open->Open(wires[0], &opened);
        ASSERT_TRUE(old.ok()) << what << ": " << old.ToString();
        EXPECT_EQ(opened, first) << what;
      }
      const SequenceCounts after = acceptor->sequence_counts();
      EXPECT_EQ(after.unseq, before.unseq + 2) << what;
      EXPECT_EQ(after.duplicate, before.duplicate) << what;
      EXPECT_EQ(after.old, 0u) << what;
      // And an in-order token after that is still in order.
      ASSERT_TRUE(a.server_open->Open(wires[65], &opened).ok()) << what;
      EXPECT_EQ(acceptor->sequence_counts().in_order, after.in_order + 1) << what;
    }
  }
}

// A token after a gap and a late one are accepted with their data on every
// engine (MIT's STREAM unwrap, under mit-iov, does not hand out the data of
// a token it accepts with a supplementary sequence status).
TEST(TokenLegsTest, GapAndLateTokensOpenWithTheirDataOnEveryEngine) {
  Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  for (Engine engine : kAllEngines) {
    for (Protection prot : {Protection::kWrapConf, Protection::kWrapInteg}) {
      const std::string what = Name(engine, prot);
      auto pair = ContextPair::Establish(*realm, kDefaultEnctype);
      ASSERT_TRUE(pair.ok()) << pair.status().ToString();
      auto init = NewProtector(engine, (*pair)->ReleaseInitiator());
      auto acc = NewProtector(engine, (*pair)->ReleaseAcceptor());
      ASSERT_TRUE(init.ok() && acc.ok()) << what;
      std::shared_ptr<Protector> acceptor = std::move(acc).value();
      common::Association a;
      MakeTokenLegs(prot, std::move(init).value(), acceptor, &a);
      Bytes payloads[3], wires[3], opened;
      for (int i = 0; i < 3; ++i) {
        payloads[i] = common::PatternBytes(100, static_cast<uint32_t>(50 + i));
        ASSERT_TRUE(a.client_seal->Seal(payloads[i], &wires[i]).ok()) << what;
      }
      for (int i : {0, 2, 1}) {  // in order, after a gap, late
        ASSERT_TRUE(a.server_open->Open(wires[i], &opened).ok()) << what << " W" << i;
        EXPECT_EQ(opened, payloads[i]) << what << " W" << i;
      }
      const SequenceCounts n = acceptor->sequence_counts();
      EXPECT_EQ(n.in_order, 1u) << what;
      EXPECT_EQ(n.gap, 1u) << what;
      EXPECT_EQ(n.unseq, 1u) << what;
    }
  }
}

// The bytes a vector still holds beyond its size (its released capacity):
// where a failed Unwrap's plaintext would linger.
ByteView Released(const Bytes& b) { return ByteView(b.data(), b.capacity()); }

bool Contains(ByteView hay, ByteView needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

// A sealed token whose checksum fails has been decrypted by then (RFC 3962
// MACs the plaintext; MIT's iov call opens in place): the failed Unwrap must
// leave the output empty and the plaintext wiped from its buffer. For the
// mit engine only the first holds something to check: gss_unwrap decrypts
// into MIT's own buffer, never into the output.
TEST(ProtectorTest, FailedUnwrapWipesThePlaintextItDecrypted) {
  Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  for (Enctype enctype : kAllEnctypes) {
    for (Engine engine : kAllEngines) {
      if (engine == Engine::kNative && !IsNativeEnctype(enctype)) continue;
      const std::string what = std::string(EngineName(engine)) + " " + EnctypeName(enctype);
      auto pair = ContextPair::Establish(*realm, enctype);
      ASSERT_TRUE(pair.ok()) << pair.status().ToString();
      auto init = NewProtector(engine, (*pair)->ReleaseInitiator());
      auto acc = NewProtector(engine, (*pair)->ReleaseAcceptor());
      ASSERT_TRUE(init.ok() && acc.ok()) << what;
      const Bytes secret = common::PatternBytes(4096, 31);
      Bytes token;
      ASSERT_TRUE((*init)->Wrap(secret, true, &token).ok()) << what;
      ASSERT_FALSE(Contains(token, ByteView(secret).first(32))) << what << ": not sealed";
      ASSERT_GT(token.size(), 32u) << what;
      Bytes bad(token.begin(), token.end());
      bad[token.size() - 1] ^= 0x01;  // the checksum: decryption itself succeeds
      // No reallocation: the same buffer throughout. Its bytes are set first:
      // fresh heap memory can hold this plaintext from earlier work (the
      // same secret goes through every engine), which no Unwrap wrote.
      Bytes out(token.size() + 64, 0xA5);
      out.clear();
      auto s = (*acc)->Unwrap(bad, &out, nullptr);
      ASSERT_FALSE(s.ok()) << what << ": altered checksum accepted";
      EXPECT_FALSE(s.message().empty()) << what;
      EXPECT_TRUE(out.empty()) << what;
      for (size_t off = 0; off + 32 <= secret.size(); off += 512) {
        EXPECT_FALSE(Contains(Released(out), ByteView(secret).subspan(off, 32)))
            << what << ": plaintext at offset " << off << " left in the output buffer";
      }
      // The genuine token still opens (the failure consumed nothing).
      ASSERT_TRUE((*acc)->Unwrap(token, &out, nullptr).ok()) << what;
      EXPECT_EQ(out, secret) << what;
    }
  }
}

}  // namespace
}  // namespace secmode::gss
