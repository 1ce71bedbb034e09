// Multichannel: channels sharing one session key never reuse a nonce, and
// every channel's messages open with the session's key.
#include "smb/multichannel.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "smb/legs.h"
#include "smb/message.h"

namespace secmode::smb {
namespace {

using common::Bytes;

TEST(Multichannel, ChannelsSharingAKeyNeverShareANonce) {
  for (CipherId c : {CipherId::kAes128Ccm, CipherId::kAes128Gcm, CipherId::kAes256Gcm}) {
    const Bytes key = common::PatternBytes(CipherKeyBytes(c), 4);
    auto channels = MakeChannelEncryptors(c, key, 0x77, 3);
    ASSERT_TRUE(channels.ok()) << channels.status().ToString();
    auto dec = Decryptor::Create(c, key, 0x77);
    ASSERT_TRUE(dec.ok());
    std::set<std::string> nonces;
    Bytes msg, wire, opened;
    HeaderFields h;
    h.session_id = 0x77;
    for (int round = 0; round < 50; ++round) {
      for (size_t ch = 0; ch < channels->size(); ++ch) {
        h.message_id = static_cast<uint64_t>(round);
        BuildWriteRequest(h, common::PatternBytes(100, static_cast<uint32_t>(ch)), &msg);
        ASSERT_TRUE((*channels)[ch]->Seal({msg}, &wire).ok());
        EXPECT_TRUE(nonces.insert(std::string(wire.begin() + 20, wire.begin() + 36)).second)
            << "nonce reused: channel " << ch << " round " << round;
        ASSERT_TRUE((*dec)->Open(wire, &opened).ok());
        EXPECT_EQ(opened, msg);
      }
    }
    EXPECT_EQ(nonces.size(), 150u);
  }
}

// Repeated runs with one fixed key (the smb section and smb_bench use fixed
// keys and run many times per process) never reuse a (key, nonce) pair, and
// the channels of one session never start at the same counter. Holds for the
// session legs too, even when both directions have the same key.
TEST(Multichannel, RepeatedRunsWithTheSameKeyNeverReuseANonce) {
  for (CipherId c : {CipherId::kAes128Ccm, CipherId::kAes128Gcm, CipherId::kAes256Gcm}) {
    const Bytes key = common::PatternBytes(CipherKeyBytes(c), 9);
    std::set<std::string> nonces;
    Bytes msg, wire;
    HeaderFields h;
    h.session_id = 0x79;
    BuildWriteRequest(h, common::PatternBytes(100, 1), &msg);
    for (int run = 0; run < 4; ++run) {
      auto channels = MakeChannelEncryptors(c, key, 0x79, 3);
      ASSERT_TRUE(channels.ok()) << channels.status().ToString();
      std::set<uint64_t> starts;
      for (auto& e : *channels) {
        EXPECT_TRUE(starts.insert(e->nonces().first_counter()).second)
            << "two channels start at counter " << e->nonces().first_counter();
        for (int i = 0; i < 10; ++i) {
          ASSERT_TRUE(e->Seal({msg}, &wire).ok());
          EXPECT_TRUE(nonces.insert(std::string(wire.begin() + 20, wire.begin() + 36)).second)
              << CipherName(c) << ": nonce reused in run " << run;
        }
      }
      SessionKeys keys;
      keys.client_to_server = common::SecretBytes(key);
      keys.server_to_client = common::SecretBytes(key);
      const SmbMode mode = EncryptingMode(c);
      auto a = MakeSmbAssociation(mode, keys, 0x79);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      for (int i = 0; i < 10; ++i) {
        for (auto* leg : {a->client_seal.get(), a->server_seal.get()}) {
          ASSERT_TRUE(leg->Seal(common::PatternBytes(64, 2), &wire).ok());
          EXPECT_TRUE(nonces.insert(std::string(wire.begin() + 20, wire.begin() + 36)).second)
              << CipherName(c) << ": session leg reused a nonce in run " << run;
        }
      }
    }
    EXPECT_EQ(nonces.size(), 4u * (30u + 20u));
  }
}

TEST(Multichannel, ParallelChannelsSealAndReportThroughput) {
  const Bytes key = common::PatternBytes(16, 5);
  auto r = RunMultichannelSeal(CipherId::kAes128Gcm, key, 0x78, 2, 4096, 0.05);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->channels, 2);
  EXPECT_GT(r->messages, 0u);
  EXPECT_GT(r->bytes_per_second, 0);
  EXPECT_FALSE(RunMultichannelSeal(CipherId::kAes128Gcm, key, 0x78, 0, 4096, 0.01).ok());
}

}  // namespace
}  // namespace secmode::smb
