// libFuzzer target: `secmode trace`'s reading of untrusted captures. The
// first byte picks the way in:
//   0  the rest is a capture file: libpcap's reading, the link layers, IP,
//      TCP, each direction's stream, the RPC and SMB records and their
//      analyses, then the JSON and the table drawn from it;
//   1  the rest is frames, each [link type byte][length byte][frame], fed
//      to DecodeFrame and what it decodes to the analysis (past libpcap's
//      file checks, to the stream and record paths quickly).
#include <pcap/dlt.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "trace/capture.h"
#include "trace/rpc_trace.h"

namespace {

using secmode::common::ByteView;
namespace trace = secmode::trace;

constexpr int kLinkTypes[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW,
                              DLT_NULL,   DLT_LOOP,      DLT_IPV4,       DLT_IPV6};

// RPC on 2049 and 20049, SMB on 445 and 20445.
trace::TraceOptions Options() {
  trace::TraceOptions o;
  o.rpc_ports = {2049, 20049};
  o.smb_ports = {445, 20445};
  return o;
}

// The trace, and its JSON drawn as the terminal's table.
void Finish(trace::TraceBuilder& b, const trace::CaptureCounts& counts) {
  trace::RpcTrace t = b.Finish(counts);
  (void)trace::TraceText(trace::TraceJson(t, Options()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const ByteView rest(data + 1, size - 1);
  trace::TraceBuilder b(Options());
  if (data[0] == 0) {
    auto reader = trace::CaptureReader::FromBytes(rest, "fuzz.pcap");
    if (!reader.ok()) return 0;
    trace::TcpSegment s;
    for (;;) {
      auto more = (*reader)->Next(&s);
      if (!more.ok() || !*more) break;
      b.Add(s);
    }
    Finish(b, (*reader)->counts());
    return 0;
  }
  trace::CaptureCounts counts;
  int64_t ts = 0;
  for (size_t at = 0; at + 2 <= rest.size();) {
    const uint8_t tag = rest[at];
    const int linktype = kLinkTypes[tag % std::size(kLinkTypes)];
    const size_t len = std::min<size_t>(rest[at + 1] * 4u, rest.size() - at - 2);
    const ByteView frame = rest.subspan(at + 2, len);
    at += 2 + len;
    trace::TcpSegment s;
    ++counts.frames;
    // The wire length: what was captured, or more (a snap length) when the
    // link type byte's high bit says so.
    const uint32_t wire = static_cast<uint32_t>(len) + ((tag & 0x80) ? 1000 : 0);
    if (trace::DecodeFrame(linktype, frame, wire, &s) == trace::FrameKind::kTcp) {
      s.ts_ns = ts += 1000;
      b.Add(s);
    }
  }
  Finish(b, counts);
  return 0;
}
