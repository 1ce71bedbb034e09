// gss_bench: Google Benchmark suite for the krb5 engines.
//
//   BM_Protect/<engine>/<enctype>/<wrap-conf|wrap-integ|mic>/<seal|open>/<size>
//   BM_Bound/<primitive>/<size>
//   BM_RoundTrip/<engine|bound>/<enctype>/<size>
// BM_RoundTrip is what the gss section holds each engine against the bound
// with: one krb5p seal and its open per iteration (wrap conf=1 by the
// initiator, unwrap by the acceptor), and for "bound" the OpenSSL AES-CBC
// encrypt+HMAC then decrypt+HMAC over the payload; `make profile` samples it.
// engine x enctype x protection x side x size {128, 1K, 4K, 64K, 1M}, and the
// OpenSSL bounds (AES-CBC encrypt/decrypt, HMAC-SHA1/256/384, and the
// encrypt+HMAC / decrypt+HMAC composites) over the same byte counts.
// Counters: bytes_per_second (payload bytes) and cycles_per_byte = measured
// ns x TSC rate / size (TSC ticks, constant rate; common/clock.h).
//
// Contexts come from a throwaway MIT realm started once per process. Open
// benchmarks open fresh tokens in sequence order, sealed in batches with the
// timer paused, so replay detection sees what a real receiver sees.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "gss/context_pair.h"
#include "gss/protector.h"
#include "gss/realm.h"
#include "harness/gss_bounds.h"

namespace secmode::bench {
namespace {

using harness::BoundOp;
using harness::BoundRunner;

using common::Bytes;

constexpr size_t kSizes[] = {128, 1024, 4096, 65536, 1u << 20};

enum class Kind { kWrapConf, kWrapInteg, kMic };
const char* KindName(Kind k) {
  return k == Kind::kWrapConf ? "wrap-conf" : k == Kind::kWrapInteg ? "wrap-integ" : "mic";
}

gss::Realm* TheRealm() {
  static std::unique_ptr<gss::Realm> realm = [] {
    auto r = gss::Realm::Start();
    if (!r.ok()) {
      std::fprintf(stderr, "gss_bench: cannot start the realm: %s\n",
                   r.status().ToString().c_str());
      return std::unique_ptr<gss::Realm>();
    }
    return std::move(r).value();
  }();
  return realm.get();
}

struct Sides {
  std::unique_ptr<gss::Protector> initiator, acceptor;
};

// One context pair per (engine, enctype), reused by every benchmark of it.
Sides* GetSides(gss::Engine engine, gss::Enctype enctype, std::string* error) {
  static std::map<std::pair<int, int>, Sides> cache;
  auto key = std::make_pair(static_cast<int>(engine), static_cast<int>(enctype));
  auto it = cache.find(key);
  if (it != cache.end()) return &it->second;
  gss::Realm* realm = TheRealm();
  if (realm == nullptr) {
    *error = "no realm";
    return nullptr;
  }
  auto pair = gss::ContextPair::Establish(*realm, enctype);
  if (!pair.ok()) {
    *error = pair.status().ToString();
    return nullptr;
  }
  auto init = gss::NewProtector(engine, (*pair)->ReleaseInitiator());
  auto acc = gss::NewProtector(engine, (*pair)->ReleaseAcceptor());
  if (!init.ok() || !acc.ok()) {
    *error = (!init.ok() ? init.status() : acc.status()).ToString();
    return nullptr;
  }
  Sides& s = cache[key];
  s.initiator = std::move(init).value();
  s.acceptor = std::move(acc).value();
  return &s;
}

common::Status Seal(gss::Protector& p, Kind k, const Bytes& msg, Bytes* token) {
  if (k == Kind::kMic) return p.GetMic(msg, token);
  return p.Wrap(msg, k == Kind::kWrapConf, token);
}

void SetCounters(benchmark::State& state, size_t size) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(size));
  // (time / iterations) x TSC rate / bytes: the library computes
  // 1 / (v x iterations / time) with v = bytes / TSC rate.
  state.counters["cycles_per_byte"] = benchmark::Counter(
      static_cast<double>(size) / (common::TscGhz() * 1e9),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Protect(benchmark::State& state, gss::Engine engine, gss::Enctype enctype, Kind kind,
                bool open) {
  const size_t size = static_cast<size_t>(state.range(0));
  std::string error;
  Sides* sides = GetSides(engine, enctype, &error);
  if (sides == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  const Bytes msg = common::PatternBytes(size, 11);
  Bytes token, out;
  if (!open) {
    for (auto _ : state) {
      auto s = Seal(*sides->initiator, kind, msg, &token);
      if (!s.ok()) {
        state.SkipWithError(s.ToString().c_str());
        break;
      }
      benchmark::DoNotOptimize(token.data());
    }
  } else {
    const size_t batch = std::max<size_t>(8, std::min<size_t>(1024, (64u << 20) / (size + 64)));
    std::vector<Bytes> tokens(batch);
    size_t next = batch;
    for (auto _ : state) {
      if (next == batch) {
        state.PauseTiming();
        for (auto& t : tokens) {
          auto s = Seal(*sides->initiator, kind, msg, &t);
          if (!s.ok()) state.SkipWithError(s.ToString().c_str());
        }
        next = 0;
        state.ResumeTiming();
      }
      common::Status s = kind == Kind::kMic ? sides->acceptor->VerifyMic(msg, tokens[next])
                                            : sides->acceptor->Unwrap(tokens[next], &out, nullptr);
      ++next;
      if (!s.ok()) {
        state.SkipWithError(s.ToString().c_str());
        break;
      }
      benchmark::DoNotOptimize(out.data());
    }
  }
  SetCounters(state, size);
}

void BM_Bound(benchmark::State& state, gss::Enctype enctype, BoundOp op) {
  const size_t size = static_cast<size_t>(state.range(0));
  BoundRunner runner;
  auto s = runner.Init(enctype);
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  Bytes buf = common::PatternBytes(size, 12);
  for (auto _ : state) {
    s = runner.Run(op, buf.data(), size);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(buf.data());
  }
  SetCounters(state, size);
}

void BM_RoundTrip(benchmark::State& state, gss::Engine engine, gss::Enctype enctype, bool bound) {
  const size_t size = static_cast<size_t>(state.range(0));
  const Bytes msg = common::PatternBytes(size, 13);
  if (bound) {
    BoundRunner runner;
    auto s = runner.Init(enctype);
    Bytes buf = msg;
    for (auto _ : state) {
      if (s.ok()) s = runner.Run(BoundOp::kCbcEncryptHmac, buf.data(), size);
      if (s.ok()) s = runner.Run(BoundOp::kCbcDecryptHmac, buf.data(), size);
      if (!s.ok()) {
        state.SkipWithError(s.ToString().c_str());
        break;
      }
      benchmark::DoNotOptimize(buf.data());
    }
    SetCounters(state, size);
    return;
  }
  std::string error;
  Sides* sides = GetSides(engine, enctype, &error);
  if (sides == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  Bytes token, out;
  for (auto _ : state) {
    auto s = sides->initiator->Wrap(msg, true, &token);
    if (s.ok()) s = sides->acceptor->Unwrap(token, &out, nullptr);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  SetCounters(state, size);
}

void Register() {
  for (gss::Engine engine : gss::kAllEngines) {
    for (gss::Enctype enctype : gss::kAllEnctypes) {
      if (engine == gss::Engine::kNative && !gss::IsNativeEnctype(enctype)) continue;
      for (Kind kind : {Kind::kWrapConf, Kind::kWrapInteg, Kind::kMic}) {
        for (bool open : {false, true}) {
          std::string name = std::string("BM_Protect/") + gss::EngineName(engine) + "/" +
                             gss::EnctypeName(enctype) + "/" + KindName(kind) + "/" +
                             (open ? "open" : "seal");
          auto* b =
              benchmark::RegisterBenchmark(name.c_str(), BM_Protect, engine, enctype, kind, open);
          for (size_t size : kSizes) b->Arg(static_cast<int64_t>(size));
          b->MinTime(0.1);
        }
      }
    }
  }
  for (gss::Enctype enctype : gss::kAllEnctypes) {
    for (gss::Engine engine : gss::kAllEngines) {
      if (engine == gss::Engine::kNative && !gss::IsNativeEnctype(enctype)) continue;
      std::string name =
          std::string("BM_RoundTrip/") + gss::EngineName(engine) + "/" + gss::EnctypeName(enctype);
      // No MinTime here: --benchmark_min_time sets it (make profile samples
      // it for seconds).
      auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_RoundTrip, engine, enctype, false);
      for (size_t size : kSizes) b->Arg(static_cast<int64_t>(size));
    }
    if (!gss::IsNativeEnctype(enctype)) continue;  // the bound is the native engine's
    std::string name = std::string("BM_RoundTrip/bound/") + gss::EnctypeName(enctype);
    auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_RoundTrip, gss::Engine::kNative,
                                           enctype, true);
    for (size_t size : kSizes) b->Arg(static_cast<int64_t>(size));
  }
  // Bounds: raw AES per key size, HMAC per hash, and the composites per
  // enctype (names are the same whichever enctype registers them).
  std::vector<std::string> seen;
  for (gss::Enctype enctype : gss::kAllEnctypes) {
    BoundRunner namer;
    if (!namer.Init(enctype).ok()) continue;
    for (BoundOp op : {BoundOp::kCbcEncrypt, BoundOp::kCbcDecrypt, BoundOp::kHmac,
                       BoundOp::kCbcEncryptHmac, BoundOp::kCbcDecryptHmac}) {
      std::string name = "BM_Bound/" + namer.Name(op);
      if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
      seen.push_back(name);
      auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Bound, enctype, op);
      for (size_t size : kSizes) b->Arg(static_cast<int64_t>(size));
      b->MinTime(0.1);
    }
  }
}

}  // namespace
}  // namespace secmode::bench

int main(int argc, char** argv) {
  secmode::bench::Register();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("cycles_per_byte", "TSC ticks per payload byte at " +
                                                     std::to_string(secmode::common::TscGhz()) +
                                                     " GHz (" + secmode::common::CycleSource() +
                                                     ")");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
