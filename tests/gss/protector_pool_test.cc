// ProtectorPool: with the native engine on a context without GSS replay
// detection, leases are separate instances that run at once and every token
// still carries its own sequence number; otherwise (MIT's engine, or replay
// detection on) the pool serialises on one instance.
#include "gss/protector_pool.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "common/cpu_affinity.h"
#include "gss/context_pair.h"
#include "gss/enctype.h"
#include "gss/native_protector.h"
#include "tests/support/shared_realm.h"

namespace secmode::gss {
namespace {

using common::Bytes;

NativeKeys Keys(bool initiate, bool replay) {
  NativeKeys k;
  k.initiate = initiate;
  k.enctype = static_cast<int32_t>(Enctype::kAes256CtsHmacSha1);
  k.key = common::SecretBytes(common::PatternBytes(32, 9));
  k.send_seq = 1000;
  k.recv_seq = 1000;
  k.replay_detection = replay;
  k.sequence_detection = replay;
  return k;
}

// RFC 4121 4.2.6.2: SND_SEQ is bytes 8..15 of a wrap token, big-endian.
uint64_t TokenSeq(const Bytes& t) {
  uint64_t s = 0;
  for (int i = 8; i < 16; ++i) s = s << 8 | t[i];
  return s;
}

TEST(ProtectorPoolTest, NativeLeasesAreSeparateAndShareTheSequenceCounter) {
  auto first = NewNativeProtectorFromKeys(Keys(true, false));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ProtectorPool pool(std::move(first).value());
  EXPECT_TRUE(pool.parallel());
  auto a = pool.Acquire();
  auto b = pool.Acquire();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(&**a, &**b);
  Bytes ta, tb;
  ASSERT_TRUE((*a)->Wrap(common::PatternBytes(100, 1), true, &ta).ok());
  ASSERT_TRUE((*b)->Wrap(common::PatternBytes(100, 2), true, &tb).ok());
  EXPECT_EQ(TokenSeq(ta), 1000u);
  EXPECT_EQ(TokenSeq(tb), 1001u);
  // The peer opens what either instance sealed.
  auto peer = NewNativeProtectorFromKeys(Keys(false, false));
  ASSERT_TRUE(peer.ok());
  Bytes out;
  ASSERT_TRUE((*peer)->Unwrap(tb, &out, nullptr).ok());
  EXPECT_EQ(out, common::PatternBytes(100, 2));
  ASSERT_TRUE((*peer)->Unwrap(ta, &out, nullptr).ok());
  EXPECT_EQ(out, common::PatternBytes(100, 1));
}

TEST(ProtectorPoolTest, ManyThreadsSealWithUniqueSequenceNumbers) {
  auto first = NewNativeProtectorFromKeys(Keys(true, false));
  ASSERT_TRUE(first.ok());
  ProtectorPool pool(std::move(first).value());
  constexpr int kThreads = 4, kEach = 500;
  std::vector<std::vector<Bytes>> tokens(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto lease = pool.Acquire();
        if (!lease.ok()) return;
        Bytes token;
        if ((*lease)->Wrap(common::PatternBytes(64, t), true, &token).ok()) {
          tokens[t].push_back(std::move(token));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  auto peer = NewNativeProtectorFromKeys(Keys(false, false));
  ASSERT_TRUE(peer.ok());
  std::set<uint64_t> seqs;
  Bytes out;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(tokens[t].size(), static_cast<size_t>(kEach));
    for (const Bytes& token : tokens[t]) {
      seqs.insert(TokenSeq(token));
      ASSERT_TRUE((*peer)->Unwrap(token, &out, nullptr).ok());
      ASSERT_EQ(out, common::PatternBytes(64, t));
    }
  }
  EXPECT_EQ(seqs.size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(*seqs.begin(), 1000u);
  EXPECT_LE(pool.size(), static_cast<size_t>(kThreads + 1));
}

// Free instances wait on a shelf per CPU: a lease released on one CPU is
// taken again from another CPU's empty shelf, not forked anew, so moving
// between CPUs does not grow the pool.
TEST(ProtectorPoolTest, AnInstanceReleasedOnOneCpuServesAnother) {
  const std::vector<int> cpus = common::AllowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs to move between";
  auto first = NewNativeProtectorFromKeys(Keys(true, false));
  ASSERT_TRUE(first.ok());
  ProtectorPool pool(std::move(first).value());
  const size_t start = pool.size();
  for (int round = 0; round < 20; ++round) {
    for (const int cpu : {cpus[0], cpus[1]}) {
      auto pin = common::CpuPin::Pin(cpu);
      ASSERT_TRUE(pin.ok()) << pin.status().ToString();
      auto a = pool.Acquire();
      auto b = pool.Acquire();  // two at once: one fork, then none
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_NE(&**a, &**b);
    }
  }
  EXPECT_EQ(pool.size(), start + 1);
}

TEST(ProtectorPoolTest, ReplayDetectionKeepsOneSerialisedInstance) {
  auto first = NewNativeProtectorFromKeys(Keys(true, true));
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)->Fork().status().code(), common::Code::kInvalidArgument);
  ProtectorPool pool(std::move(first).value());
  EXPECT_FALSE(pool.parallel());
  Protector* p = nullptr;
  {
    auto a = pool.Acquire();
    ASSERT_TRUE(a.ok());
    p = &**a;
  }
  auto b = pool.Acquire();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(&**b, p);
  EXPECT_EQ(pool.size(), 1u);
}

TEST(ProtectorPoolTest, MitContextsAreSerialised) {
  auto pair = ContextPair::Establish(*testing::SharedRealm(), Enctype::kAes256CtsHmacSha1);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto mit = NewProtector(Engine::kMit, (*pair)->ReleaseInitiator());
  ASSERT_TRUE(mit.ok());
  EXPECT_EQ((*mit)->Fork().status().code(), common::Code::kUnavailable);
  ProtectorPool pool(std::move(mit).value());
  EXPECT_FALSE(pool.parallel());
  EXPECT_EQ(pool.engine(), Engine::kMit);
  auto lease = pool.Acquire();
  ASSERT_TRUE(lease.ok());
  Bytes mic;
  EXPECT_TRUE((*lease)->GetMic(common::PatternBytes(10, 3), &mic).ok());
}

}  // namespace
}  // namespace secmode::gss
