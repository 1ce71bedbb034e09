// Reading a packet capture down to TCP segments: pcap and pcapng files
// through libpcap; the link layers tcpdump and dumpcap write on Linux
// (Ethernet with 802.1Q/802.1ad tags, Linux cooked SLL and SLL2 from
// `-i any`, raw IP, BSD null and OpenBSD loopback); IPv4 (options, no
// fragments) and IPv6 (hop-by-hop, routing, destination-options and
// authentication headers; a fragment is counted, not reassembled).
//
// A capture is untrusted input. DecodeFrame reads only inside the bytes it is
// given and never fails: a frame that is not TCP, a fragment or a frame whose
// headers a snap length cut short is counted as such. A segment's payload is
// what was captured of it; `payload_len` is how long the IP header says it
// was on the wire, so a payload cut by a snap length is known to be longer
// than what was kept. A damaged file (a record header cut short, a length
// beyond libpcap's limit) ends the reading with an error naming the file and
// the byte offset where it failed. Memory: one frame at a time, at most
// libpcap's largest snap length (256 KiB).
//
// Thread safety: a CaptureReader is used by one thread at a time.
#ifndef SECMODE_TRACE_CAPTURE_H_
#define SECMODE_TRACE_CAPTURE_H_

#include <array>
#include <compare>
#include <cstdint>
#include <memory>
#include <string>

#include "common/bytes.h"
#include "common/status.h"

namespace secmode::trace {

struct Endpoint {
  std::array<uint8_t, 16> addr{};  // an IPv4 address in the first 4 bytes
  bool v6 = false;
  uint16_t port = 0;
  auto operator<=>(const Endpoint&) const = default;
  // "127.0.0.1:2049", "[::1]:2049"
  std::string ToString() const;
};

inline constexpr uint8_t kTcpFin = 0x01, kTcpSyn = 0x02, kTcpRst = 0x04, kTcpAck = 0x10;

struct TcpSegment {
  int64_t ts_ns = 0;  // the capture's time stamp, ns since the epoch, in [0, 2^62]
  Endpoint src, dst;
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0;         // kTcp*
  uint32_t payload_len = 0;  // on the wire, as the IP header says
  common::ByteView payload;  // what was captured of it: payload.size() <= payload_len
};

enum class FrameKind {
  kTcp,        // *out holds the segment
  kNotTcp,     // another protocol or link-layer type
  kFragment,   // an IP fragment (not reassembled)
  kTruncated,  // its headers end before the TCP header does
  kMalformed,  // an IP or TCP header that contradicts itself
};

// `linktype` is libpcap's DLT_* number (pcap_datalink); `frame` the captured
// bytes and `wire_len` the frame's length on the wire. out->payload points
// into `frame`.
FrameKind DecodeFrame(int linktype, common::ByteView frame, uint32_t wire_len, TcpSegment* out);
// Whether DecodeFrame knows the link type.
bool LinkTypeKnown(int linktype);

struct CaptureCounts {
  uint64_t frames = 0, tcp = 0, not_tcp = 0, fragments = 0, truncated = 0, malformed = 0;
  // Where the file ends inside a frame (a capture whose writer was stopped
  // mid-write, or copied while it was written): the byte, the file's size;
  // 0 when it ends between frames.
  uint64_t cut_at = 0;
};

class CaptureReader {
 public:
  // A pcap or pcapng file; an error names the file and why (not a capture,
  // a link type this reader does not know).
  static common::Result<std::unique_ptr<CaptureReader>> Open(const std::string& path);
  // The bytes of a capture file (copied), named `name` in errors.
  static common::Result<std::unique_ptr<CaptureReader>> FromBytes(common::ByteView file,
                                                                  const std::string& name);
  ~CaptureReader();
  CaptureReader(const CaptureReader&) = delete;
  CaptureReader& operator=(const CaptureReader&) = delete;

  // The next TCP segment into *out (its payload valid until the next call);
  // false at the end of the file, also where it ends inside a frame whose
  // record began within its snap length (and a record's headers) of the end
  // (counts().cut_at says so). Damage before that, or a record claiming
  // more than is left from further away, is an error naming the file and
  // the byte.
  common::Result<bool> Next(TcpSegment* out);
  const CaptureCounts& counts() const { return counts_; }
  int linktype() const { return linktype_; }
  // The file's snap length (the most bytes of a frame it keeps).
  int snaplen() const;
  // Bytes of the file read so far.
  uint64_t offset() const;

 private:
  struct Handle;
  CaptureReader(std::unique_ptr<Handle> h, std::string name);
  static common::Result<std::unique_ptr<CaptureReader>> FromFile(
      void* file, const std::string& name, std::shared_ptr<common::Bytes> keep);

  std::unique_ptr<Handle> h_;
  std::string name_;
  int linktype_ = 0;
  CaptureCounts counts_;
};

}  // namespace secmode::trace

#endif  // SECMODE_TRACE_CAPTURE_H_
