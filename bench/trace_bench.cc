// Google Benchmark of `secmode trace`'s reading: RPC messages (calls and
// replies) per second on one core (items_per_second) and bytes per second,
// over an in-memory capture (common/pcap.h's writer) of krb5i NFSv4.1
// COMPOUNDs on one shared context, each call answered: the capture reader,
// the TCP streams, the records, the credentials and COMPOUND names, the
// windows. Whole frames, and the same cut to 200 bytes a frame (a header-only
// capture, as `tcpdump -s 200` writes). Run: build/release/bench/trace_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>

#include "common/pcap.h"
#include "rpc/nfs.h"
#include "rpc/record.h"
#include "rpc/rpc_msg.h"
#include "rpc/xdr.h"
#include "trace/capture.h"
#include "trace/rpc_trace.h"

namespace {

namespace rpc = secmode::rpc;
namespace trace = secmode::trace;
using secmode::common::Bytes;
using secmode::common::ByteView;

constexpr uint32_t kCalls = 20000;

Bytes Framed(const Bytes& m) {
  Bytes wire;
  rpc::FrameRecord(m, &wire);
  return wire;
}

// A krb5i READ of 4 KiB (its call) and its reply carrying `reply_bytes`.
Bytes Call(uint32_t xid) {
  rpc::GssCred cred;
  cred.seq = xid;
  cred.service = rpc::kGssSvcIntegrity;
  const uint8_t handle[4] = {0xc0, 0, 0, 1};
  cred.handle = ByteView(handle, 4);
  Bytes body, m;
  rpc::EncodeGssCred(cred, &body);
  rpc::EncodeCallPrefix(xid, rpc::kNfsProgram, rpc::kNfsVersion, rpc::kNfsProcCompound,
                        rpc::kRpcsecGss, body, &m);
  rpc::XdrEncoder e(&m);
  e.PutU32(rpc::kRpcsecGss);
  e.PutOpaque(Bytes(28, 7));
  rpc::NfsRequest r;
  r.op = rpc::NfsOp::kRead;
  r.count = 4096;
  r.slot = xid % 64;
  r.sequence = xid / 64 + 1;
  Bytes args, integ;
  rpc::EncodeCompoundArgs(r, &args);
  rpc::XdrEncoder i(&integ);
  i.PutU32(xid);
  i.PutRaw(args);
  e.PutOpaque(integ);
  e.PutOpaque(Bytes(28, 5));
  return m;
}

Bytes Reply(uint32_t xid, size_t reply_bytes) {
  Bytes m;
  rpc::EncodeAcceptedReply(xid, rpc::kRpcsecGss, Bytes(28, 9), rpc::kSuccess, &m);
  m.resize(m.size() + reply_bytes, 0x42);
  return m;
}

// The capture, with every frame cut to `snap` bytes (0: whole).
const Bytes& Capture(size_t snap) {
  static std::unique_ptr<Bytes> whole, cut;
  std::unique_ptr<Bytes>& slot = snap == 0 ? whole : cut;
  if (slot) return *slot;
  secmode::common::PcapTcpWriter w(900, 2049);
  w.Begin();
  for (uint32_t xid = 1; xid <= kCalls; ++xid) {
    w.Add(true, Framed(Call(xid)));
    w.Add(false, Framed(Reply(xid, 4096 + 64)));
  }
  slot = std::make_unique<Bytes>(w.bytes());
  if (snap == 0) return *slot;
  // pcap: a 24-byte file header, then per frame a 16-byte record header
  // (caplen at 8, origlen at 12, little endian) and caplen bytes.
  Bytes out(slot->begin(), slot->begin() + 24);
  for (size_t at = 24; at + 16 <= slot->size();) {
    const uint32_t caplen = (*slot)[at + 8] | (*slot)[at + 9] << 8 | (*slot)[at + 10] << 16 |
                            static_cast<uint32_t>((*slot)[at + 11]) << 24;
    const uint32_t keep = std::min<uint32_t>(caplen, static_cast<uint32_t>(snap));
    const size_t start = out.size();
    out.insert(out.end(), slot->begin() + static_cast<std::ptrdiff_t>(at),
               slot->begin() + static_cast<std::ptrdiff_t>(at + 16 + keep));
    out[start + 8] = static_cast<uint8_t>(keep);
    out[start + 9] = static_cast<uint8_t>(keep >> 8);
    out[start + 10] = static_cast<uint8_t>(keep >> 16);
    out[start + 11] = static_cast<uint8_t>(keep >> 24);
    at += 16 + caplen;
  }
  *slot = std::move(out);
  return *slot;
}

void Read(benchmark::State& state, size_t snap) {
  const Bytes& file = Capture(snap);
  uint64_t messages = 0;
  for (auto _ : state) {
    auto reader = trace::CaptureReader::FromBytes(file, "bench.pcap");
    if (!reader.ok()) {
      state.SkipWithError(reader.status().ToString().c_str());
      return;
    }
    trace::RpcTraceBuilder b{trace::TraceOptions{}};
    trace::TcpSegment s;
    for (;;) {
      auto more = (*reader)->Next(&s);
      if (!more.ok() || !*more) break;
      b.Add(s);
    }
    trace::RpcTrace t = b.Finish((*reader)->counts());
    if (t.contexts.empty() || t.contexts[0].calls != kCalls) {
      state.SkipWithError("the trace did not see every call");
      return;
    }
    messages += 2 * kCalls;
  }
  state.SetItemsProcessed(static_cast<int64_t>(messages));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * file.size()));
}

void BM_WholeFrames(benchmark::State& state) { Read(state, 0); }
BENCHMARK(BM_WholeFrames)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

void BM_HeadersOnly(benchmark::State& state) { Read(state, 200); }
BENCHMARK(BM_HeadersOnly)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
