// The steady-state call path allocates nothing: a GETATTR, 4 KiB READ and
// WRITE call of every mode built by the client (ClientAuth::EncodeCall),
// answered by the server (RpcServerCore::HandleCall: header, credential,
// window, unwrap, the NFSv4.1 COMPOUND, the reply sealed) and checked by
// the client (DecodeReply, CheckCompoundResults), with every buffer reused
// as the TCP client and server reuse theirs. Counted through a replaced
// operator new (C++ heap) and CRYPTO_set_mem_functions (OpenSSL's), both
// installed before anything allocates; the first allocation of a counted
// stretch is named by its call stack in the failure message.
#include <execinfo.h>
#include <gtest/gtest.h>
#include <openssl/crypto.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "rpc/client_auth.h"
#include "rpc/gss_client.h"
#include "rpc/nfs.h"
#include "rpc/server_core.h"
#include "tests/support/shared_realm.h"

// The replaced operators below pair malloc with free throughout; GCC sees
// only the standard ones' names and warns of a mismatch that is not there.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
// The call stacks of the first few allocations of a counted stretch.
constexpr int kStacks = 4;
void* g_stacks[kStacks][16];
int g_depth[kStacks] = {};

void Count() {
  if (!g_counting) return;
  const long n = g_allocations++;
  if (n < kStacks) {
    g_counting = false;  // backtrace may allocate
    g_depth[n] = backtrace(g_stacks[n], 16);
    g_counting = true;
  }
}
void* CountingMalloc(size_t n, const char*, int) {
  Count();
  return std::malloc(n);
}
void* CountingRealloc(void* p, size_t n, const char*, int) {
  Count();
  return std::realloc(p, n);
}
void CountingFree(void* p, const char*, int) { std::free(p); }
const bool g_hooked = CRYPTO_set_mem_functions(CountingMalloc, CountingRealloc, CountingFree) == 1;

std::string FirstStacks() {
  std::string s;
  for (int k = 0; k < kStacks && g_depth[k] > 0; ++k) {
    char** names = backtrace_symbols(g_stacks[k], g_depth[k]);
    s += "allocation " + std::to_string(k + 1) + " at:\n";
    for (int i = 1; i < g_depth[k] && names != nullptr; ++i) s += std::string(names[i]) + "\n";
    std::free(names);
  }
  return s;
}

}  // namespace

void* operator new(size_t n) {
  Count();
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace secmode::rpc {
namespace {

using common::Bytes;
using common::ByteView;

struct Path {
  MemoryNfsServer nfs;
  std::unique_ptr<RpcServerCore> core;
  std::unique_ptr<ClientAuth> auth;
};

std::unique_ptr<Path> MakePath(Security mode) {
  auto p = std::make_unique<Path>();
  ServerOptions so;
  so.engine = gss::Engine::kNative;
  so.keytab = testing::SharedRealm()->service_keytab();
  so.window = 4096;
  auto core = RpcServerCore::Create(so, {p->nfs.Program()});
  EXPECT_TRUE(core.ok()) << core.status().ToString();
  if (!core.ok()) return nullptr;
  p->core = std::move(core).value();
  if (mode == Security::kSys) {
    p->auth = NewSysAuth(kNfsProgram, kNfsVersion);
    return p;
  }
  GssClientConfig cfg;
  cfg.ccache = testing::SharedRealm()->ccache();
  cfg.engine = gss::Engine::kNative;
  cfg.prog = kNfsProgram;
  cfg.vers = kNfsVersion;
  cfg.service = GssServiceOf(mode);
  RpcServerCore* c = p->core.get();
  auto ctx = GssClientContext::Establish(cfg, [c](ByteView call) -> common::Result<Bytes> {
    Bytes reply;
    if (c->HandleCall(call, &reply) != Disposition::kReply) {
      return common::Status::Internal("server dropped a context-creation call");
    }
    return reply;
  });
  EXPECT_TRUE(ctx.ok()) << ctx.status().ToString();
  if (!ctx.ok()) return nullptr;
  p->auth = NewGssAuth(kNfsProgram, kNfsVersion, *ctx, GssServiceOf(mode));
  return p;
}

TEST(CallPathAllocTest, SteadyStateCallsAllocateNothingAtEitherEnd) {
  ASSERT_TRUE(g_hooked) << "OpenSSL allocated before the counting hooks were installed";
  {
    // The counter sees allocations.
    g_allocations = 0;
    g_counting = true;
    auto* v = new std::string(100, 'x');
    g_counting = false;
    delete v;
    ASSERT_GT(g_allocations.load(), 0) << "allocation counting does not work";
  }
  for (Security mode : {Security::kSys, Security::kKrb5, Security::kKrb5i, Security::kKrb5p}) {
    for (NfsOp op : {NfsOp::kGetattr, NfsOp::kRead, NfsOp::kWrite}) {
      auto p = MakePath(mode);
      ASSERT_NE(p, nullptr) << SecurityName(mode);
      NfsRequest req;
      req.op = op;
      req.count = op == NfsOp::kGetattr ? 0 : 4096;
      Bytes args, record, reply, scratch;
      uint32_t xid = 1;
      auto round = [&](int k) {
        req.offset = static_cast<uint64_t>(k % 16) * 4096;
        ++req.sequence;
        args.clear();
        EncodeCompoundArgs(req, &args);
        uint32_t seq = 0;
        if (!p->auth->EncodeCall(xid++, kNfsProcCompound, args, &record, &seq).ok()) return false;
        if (p->core->HandleCall(record, &reply) != Disposition::kReply) return false;
        ReplyHeader h;
        ByteView results;
        return p->auth->DecodeReply(reply, seq, &scratch, &h, &results).ok() &&
               CheckCompoundResults(req, results).ok();
      };
      for (int k = 0; k < 200; ++k)
        ASSERT_TRUE(round(k)) << SecurityName(mode) << " warm-up call " << k;
      for (int& d : g_depth) d = 0;
      g_allocations = 0;
      g_counting = true;
      bool ok = true;
      for (int k = 0; k < 1000 && ok; ++k) ok = round(k);
      g_counting = false;
      ASSERT_TRUE(ok) << SecurityName(mode);
      EXPECT_EQ(g_allocations.load(), 0) << SecurityName(mode) << " " << NfsOpName(op) << ": "
                                         << g_allocations.load() << " allocations in 1000 calls\n"
                                         << FirstStacks();
    }
  }
}

}  // namespace
}  // namespace secmode::rpc
