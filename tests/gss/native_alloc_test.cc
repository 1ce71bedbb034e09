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

#include "gss/context_pair.h"
#include "gss/protector.h"
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
  for (Enctype e : kAllEnctypes) {
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

}  // namespace
}  // namespace secmode::gss
