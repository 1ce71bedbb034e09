// smb_bench: Google Benchmark micro-benchmarks for SMB3 signing and
// encryption next to the raw OpenSSL primitives over the same bytes
// (harness/smb_ops.h), small metadata messages, and multichannel sealing with
// 1, 2, 4 and all-core channel threads.
//
//   ./build/release/bench/smb_bench --benchmark_filter=SealOpen
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "harness/smb_ops.h"
#include "smb/message.h"
#include "smb/multichannel.h"
#include "smb/profiles.h"
#include "smb/signing.h"
#include "smb/transform.h"

namespace secmode::bench {
namespace {

using harness::MakeRawAeadOp;
using harness::MakeRawMacOp;
using harness::MakeSmbSealOpenOp;
using harness::MakeSmbSignOp;
using harness::Op;

void RunOp(benchmark::State& state, common::Result<std::unique_ptr<Op>> made) {
  if (!made.ok()) {
    state.SkipWithError(made.status().ToString().c_str());
    return;
  }
  Op& op = **made;
  for (auto _ : state) {
    common::Status s = op.Run();
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * op.bytes()));
}

void SealOpen(benchmark::State& state, smb::CipherId c) {
  RunOp(state, MakeSmbSealOpenOp(c, static_cast<size_t>(state.range(0))));
}
void RawAead(benchmark::State& state, smb::CipherId c) {
  RunOp(state, MakeRawAeadOp(c, static_cast<size_t>(state.range(0))));
}
void Sign(benchmark::State& state, smb::SigningAlgorithm a) {
  RunOp(state, MakeSmbSignOp(a, static_cast<size_t>(state.range(0))));
}
void RawMac(benchmark::State& state, smb::SigningAlgorithm a) {
  RunOp(state, MakeRawMacOp(a, static_cast<size_t>(state.range(0))));
}

// CREATE / CLOSE / QUERY_INFO-sized requests: encrypt + decrypt.
void Metadata(benchmark::State& state, smb::CipherId c) {
  common::Bytes msg;
  smb::HeaderFields h;
  h.session_id = 0x25;
  switch (state.range(0)) {
    case 0: smb::BuildCreateRequest(h, smb::kSampleFileName, false, &msg); break;
    case 1: smb::BuildCloseRequest(h, smb::kSampleFileId, &msg); break;
    default: smb::BuildQueryInfoRequest(h, smb::kSampleFileId, &msg); break;
  }
  state.SetLabel(state.range(0) == 0 ? "CREATE" : state.range(0) == 1 ? "CLOSE" : "QUERY_INFO");
  const common::Bytes key = common::PatternBytes(smb::CipherKeyBytes(c), 9);
  // Google Benchmark runs this function several times with the same key:
  // each Encryptor draws fresh nonce counters (smb/transform.h).
  auto e = smb::Encryptor::Create(c, key, 0x25);
  auto d = smb::Decryptor::Create(c, key, 0x25);
  if (!e.ok() || !d.ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  common::Bytes wire, opened;
  for (auto _ : state) {
    if (!(*e)->Seal({msg}, &wire).ok() || !(*d)->Open(wire, &opened).ok()) {
      state.SkipWithError("seal/open failed");
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * msg.size()));
}

// Multichannel: each benchmark thread is one channel with its own nonce
// space (channel id = thread index), all sharing the session key.
void Multichannel(benchmark::State& state, smb::CipherId c) {
  const common::Bytes key = common::PatternBytes(smb::CipherKeyBytes(c), 9);
  auto e = smb::Encryptor::Create(c, key, 0x25, static_cast<uint32_t>(state.thread_index()));
  if (!e.ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  const size_t size = static_cast<size_t>(state.range(0));
  const common::Bytes payload = common::PatternBytes(size, 3);
  uint8_t prefix[smb::kWriteDataOffset];
  smb::HeaderFields h;
  h.session_id = 0x25;
  common::Bytes wire;
  for (auto _ : state) {
    ++h.message_id;
    smb::WriteWriteRequestPrefix(h, smb::kSampleFileId, static_cast<uint32_t>(size), 0, prefix);
    if (!(*e)->Seal({common::ByteView(prefix, sizeof prefix), payload}, &wire).ok()) {
      state.SkipWithError("seal failed");
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
}

void Register() {
  const int cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  for (const smb::CipherProfile& profile : smb::CipherProfiles()) {
    const smb::CipherId c = profile.id;
    const std::string name = profile.name;
    for (auto [fn, prefix] : {std::pair{&SealOpen, "SealOpen/"}, std::pair{&RawAead, "RawAead/"}}) {
      benchmark::RegisterBenchmark((prefix + name).c_str(), fn, c)
          ->Arg(4096)
          ->Arg(65536)
          ->Arg(1 << 20)
          ->Arg(8 << 20);
    }
    benchmark::RegisterBenchmark(("Metadata/" + name).c_str(), Metadata, c)->DenseRange(0, 2);
    auto* mc = benchmark::RegisterBenchmark(("Multichannel/" + name).c_str(), Multichannel, c)
                   ->Arg(1 << 20)
                   ->UseRealTime();
    for (int t : {1, 2, 4}) mc->Threads(t);
    if (cores != 1 && cores != 2 && cores != 4) mc->Threads(cores);
  }
  for (const smb::SigningProfile& profile : smb::SigningProfiles()) {
    const smb::SigningAlgorithm a = profile.id;
    const std::string name = profile.name;
    for (auto [fn, prefix] : {std::pair{&Sign, "Sign/"}, std::pair{&RawMac, "RawMac/"}}) {
      benchmark::RegisterBenchmark((prefix + name).c_str(), fn, a)
          ->Arg(4096)
          ->Arg(65536)
          ->Arg(1 << 20);
    }
  }
}

}  // namespace
}  // namespace secmode::bench

int main(int argc, char** argv) {
  secmode::bench::Register();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
