// The native engine's per-message path allocates nothing beyond growing the
// caller's output buffer: with the buffers already large enough, a thousand
// wrap/unwrap/MIC rounds make no OpenSSL allocation (counted through
// CRYPTO_set_mem_functions, installed before OpenSSL's first allocation)
// and no C++ heap allocation (counted through a replaced operator new).
#include <gtest/gtest.h>
#include <openssl/crypto.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <optional>
#include <vector>

#include "common/cpu_affinity.h"
#include "gss/context_pair.h"
#include "gss/native_protector.h"
#include "gss/protector.h"
#include "gss/protector_pool.h"
#include "tests/support/shared_realm.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void* CountingMalloc(size_t n, const char*, int) {
  if (g_counting) ++g_allocations;
  return std::malloc(n);
}
void* CountingRealloc(void* p, size_t n, const char*, int) {
  if (g_counting) ++g_allocations;
  return std::realloc(p, n);
}
void CountingFree(void* p, const char*, int) { std::free(p); }

// Runs before main(), so before OpenSSL allocates anything.
const bool g_hooked = CRYPTO_set_mem_functions(CountingMalloc, CountingRealloc, CountingFree) == 1;

}  // namespace

void* operator new(size_t n) {
  if (g_counting) ++g_allocations;
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace secmode::gss {
namespace {

using common::Bytes;

TEST(NativeAllocTest, PerMessagePathDoesNotAllocate) {
  ASSERT_TRUE(g_hooked) << "OpenSSL allocated before the counting hooks were installed";
  Realm* realm = testing::SharedRealm();
  ASSERT_NE(realm, nullptr);
  {
    // The counters see allocations: one MIT gss_wrap allocates its token.
    auto pair = ContextPair::Establish(*realm, kDefaultEnctype);
    ASSERT_TRUE(pair.ok());
    auto mit = NewProtector(Engine::kMit, (*pair)->ReleaseInitiator());
    ASSERT_TRUE(mit.ok());
    Bytes token;
    g_allocations = 0;
    g_counting = true;
    ASSERT_TRUE((*mit)->Wrap(common::PatternBytes(100), true, &token).ok());
    g_counting = false;
    EXPECT_GT(g_allocations.load(), 0) << "allocation counting does not work";
  }
  for (Enctype e : kNativeEnctypes) {
    auto pair = ContextPair::Establish(*realm, e);
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    auto init = NewNativeProtector((*pair)->ReleaseInitiator());
    auto acc = NewNativeProtector((*pair)->ReleaseAcceptor());
    ASSERT_TRUE(init.ok() && acc.ok());
    Protector& a = **init;
    Protector& b = **acc;
    const Bytes msg = common::PatternBytes(1500, 1);
    Bytes sealed, integ, mic, out;
    auto round = [&] {
      bool ok = a.Wrap(msg, true, &sealed).ok() && b.Unwrap(sealed, &out, nullptr).ok() &&
                a.Wrap(msg, false, &integ).ok() && b.Unwrap(integ, &out, nullptr).ok() &&
                b.GetMic(msg, &mic).ok() && a.VerifyMic(msg, mic).ok();
      return ok;
    };
    ASSERT_TRUE(round());  // sizes the buffers
    g_allocations = 0;
    g_counting = true;
    bool all_ok = true;
    for (int i = 0; i < 1000; ++i) all_ok &= round();
    g_counting = false;
    EXPECT_TRUE(all_ok);
    EXPECT_EQ(g_allocations.load(), 0) << EnctypeName(e);
  }
}

// A lease from the pool allocates nothing once the pool has its
// instances, also when this CPU's shelf is empty and the lease comes from
// another CPU's (the look at every shelf, under all their locks).
TEST(NativeAllocTest, APoolLeaseFromAnotherCpusShelfDoesNotAllocate) {
  const std::vector<int> cpus = common::AllowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  NativeKeys keys;
  keys.initiate = true;
  keys.enctype = static_cast<int32_t>(kDefaultEnctype);
  keys.key = common::SecretBytes(common::PatternBytes(32, 9));
  keys.replay_detection = false;  // forks only without GSS-level replay detection
  keys.sequence_detection = false;
  auto first = NewNativeProtectorFromKeys(keys);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ProtectorPool pool(std::move(first).value());
  ASSERT_TRUE(pool.parallel());
  // Both instances leased on the first CPU, both released on the second
  // (a pin is refused while another holds the thread to one CPU).
  std::optional<common::Result<ProtectorPool::Lease>> a, b;
  {
    auto pin = common::CpuPin::Pin(cpus[0]);
    ASSERT_TRUE(pin.ok()) << pin.status().ToString();
    a.emplace(pool.Acquire());
    b.emplace(pool.Acquire());  // a fork
    ASSERT_TRUE(a->ok() && b->ok());
  }
  {
    auto pin = common::CpuPin::Pin(cpus[1]);
    ASSERT_TRUE(pin.ok()) << pin.status().ToString();
    a.reset();
    b.reset();
  }
  auto on_first = common::CpuPin::Pin(cpus[0]);
  ASSERT_TRUE(on_first.ok());
  const size_t instances = pool.size();
  g_allocations = 0;
  g_counting = true;
  bool ok = true;
  for (int i = 0; i < 100; ++i) {
    auto lease = pool.Acquire();  // this CPU's shelf empty: from the other's at first
    ok &= lease.ok();
  }
  g_counting = false;
  EXPECT_TRUE(ok);
  EXPECT_EQ(g_allocations.load(), 0);
  EXPECT_EQ(pool.size(), instances);
}

}  // namespace
}  // namespace secmode::gss
