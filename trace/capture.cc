#include "trace/capture.h"

#include <arpa/inet.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace secmode::trace {

using common::ByteView;
using common::Result;
using common::Status;

namespace {

uint16_t Be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t Be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
uint32_t Le32(const uint8_t* p) {
  return uint32_t{p[3]} << 24 | uint32_t{p[2]} << 16 | uint32_t{p[1]} << 8 | p[0];
}

constexpr uint16_t kEtherIpv4 = 0x0800, kEtherIpv6 = 0x86dd;
constexpr uint8_t kIpTcp = 6;

// The TCP header at the start of `tcp` (the captured bytes), carried in an
// IP payload of `ip_payload` bytes on the wire.
FrameKind DecodeTcp(ByteView tcp, uint32_t ip_payload, TcpSegment* out) {
  if (ip_payload < 20) return FrameKind::kMalformed;
  if (tcp.size() < 20) return FrameKind::kTruncated;
  const uint32_t header = (tcp[12] >> 4) * 4u;
  if (header < 20 || header > ip_payload) return FrameKind::kMalformed;
  if (tcp.size() < header) return FrameKind::kTruncated;
  out->src.port = Be16(&tcp[0]);
  out->dst.port = Be16(&tcp[2]);
  out->seq = Be32(&tcp[4]);
  out->ack = Be32(&tcp[8]);
  out->flags = tcp[13];
  out->payload_len = ip_payload - header;
  const size_t captured = std::min<size_t>(tcp.size() - header, out->payload_len);
  out->payload = tcp.subspan(header, captured);
  return FrameKind::kTcp;
}

// An IPv4 packet; `wire_left` is what the frame had on the wire from here.
FrameKind DecodeIpv4(ByteView ip, uint32_t wire_left, TcpSegment* out) {
  if (ip.size() < 20) return FrameKind::kTruncated;
  if ((ip[0] >> 4) != 4) return FrameKind::kMalformed;
  const uint32_t header = (ip[0] & 0x0f) * 4u;
  uint32_t total = Be16(&ip[2]);
  // A sender's segmentation offload can leave the length 0 in what the
  // capture saw: the frame's own length stands in.
  if (total == 0) total = wire_left;
  if (header < 20 || total < header) return FrameKind::kMalformed;
  if (ip.size() < header) return FrameKind::kTruncated;
  const uint16_t frag = Be16(&ip[6]);
  if ((frag & 0x2000) != 0 || (frag & 0x1fff) != 0) return FrameKind::kFragment;
  if (ip[9] != kIpTcp) return FrameKind::kNotTcp;
  out->src = {};
  out->dst = {};
  std::memcpy(out->src.addr.data(), &ip[12], 4);
  std::memcpy(out->dst.addr.data(), &ip[16], 4);
  const size_t end = std::min<size_t>(ip.size(), total);
  return DecodeTcp(ip.subspan(header, end - header), total - header, out);
}

FrameKind DecodeIpv6(ByteView ip, uint32_t wire_left, TcpSegment* out) {
  if (ip.size() < 40) return FrameKind::kTruncated;
  if ((ip[0] >> 4) != 6) return FrameKind::kMalformed;
  uint32_t payload = Be16(&ip[4]);
  // 0: a jumbogram or, as in IPv4, what a sender's segmentation offload
  // left (BIG TCP): the frame's own length stands in.
  if (payload == 0) payload = wire_left > 40 ? wire_left - 40 : 0;
  uint8_t next = ip[6];
  out->src = {};
  out->dst = {};
  out->src.v6 = out->dst.v6 = true;
  std::memcpy(out->src.addr.data(), &ip[8], 16);
  std::memcpy(out->dst.addr.data(), &ip[24], 16);
  size_t at = 40;
  // At most a handful of extension headers: each takes at least 8 bytes of
  // the payload, so the loop ends with it.
  while (next != kIpTcp) {
    if (next != 0 && next != 43 && next != 60 && next != 44 && next != 51) {
      return FrameKind::kNotTcp;
    }
    if (ip.size() < at + 8) return FrameKind::kTruncated;
    uint32_t len = 0;
    if (next == 44) {  // fragment: offset or more-fragments set
      if ((Be16(&ip[at + 2]) & 0xfff9) != 0) return FrameKind::kFragment;
      len = 8;
    } else if (next == 51) {
      len = (ip[at + 1] + 2u) * 4;
    } else {
      len = (ip[at + 1] + 1u) * 8;
    }
    if (len > payload) return FrameKind::kMalformed;
    next = ip[at];
    at += len;
    payload -= len;
  }
  const size_t end = std::min<size_t>(ip.size(), at + payload);
  if (end < at) return FrameKind::kTruncated;
  return DecodeTcp(ip.subspan(at, end - at), payload, out);
}

FrameKind DecodeByEthertype(uint16_t type, ByteView rest, uint32_t wire_left, TcpSegment* out) {
  if (type == kEtherIpv4) return DecodeIpv4(rest, wire_left, out);
  if (type == kEtherIpv6) return DecodeIpv6(rest, wire_left, out);
  return FrameKind::kNotTcp;
}

// By the IP version nibble (raw IP).
FrameKind DecodeByVersion(ByteView ip, uint32_t wire_left, TcpSegment* out) {
  if (ip.empty()) return FrameKind::kTruncated;
  if ((ip[0] >> 4) == 4) return DecodeIpv4(ip, wire_left, out);
  if ((ip[0] >> 4) == 6) return DecodeIpv6(ip, wire_left, out);
  return FrameKind::kNotTcp;
}

// BSD address families as a null/loopback header gives them: AF_INET is 2
// everywhere; AF_INET6 is 10 (Linux), 24, 28 or 30 (the BSDs, macOS).
FrameKind DecodeByFamily(uint32_t family, ByteView rest, uint32_t wire_left, TcpSegment* out) {
  if (family == 2) return DecodeIpv4(rest, wire_left, out);
  if (family == 10 || family == 24 || family == 28 || family == 30)
    return DecodeIpv6(rest, wire_left, out);
  return FrameKind::kNotTcp;
}

// A time stamp in ns since the epoch, held to [0, kMaxTimeNs] (a pcapng
// file's own resolution and offset can put any number there), so that
// differences of two never overflow.
constexpr int64_t kMaxTimeNs = int64_t{1} << 62;
int64_t TimeNs(int64_t seconds, int64_t fraction_ns) {
  if (seconds < 0) return 0;
  if (seconds >= kMaxTimeNs / 1000000000) return kMaxTimeNs;
  return std::clamp<int64_t>(seconds * 1000000000 + fraction_ns, 0, kMaxTimeNs);
}

}  // namespace

std::string Endpoint::ToString() const {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, addr.data(), text, sizeof text);
  std::string out;
  if (v6) out += '[';
  out += text;
  if (v6) out += ']';
  out += ':';
  out += std::to_string(port);
  return out;
}

bool LinkTypeKnown(int linktype) {
  switch (linktype) {
    case DLT_EN10MB:
    case DLT_LINUX_SLL:
    case DLT_LINUX_SLL2:
    case DLT_RAW:
    case DLT_IPV4:
    case DLT_IPV6:
    case DLT_NULL:
    case DLT_LOOP: return true;
    default: return false;
  }
}

FrameKind DecodeFrame(int linktype, ByteView frame, uint32_t wire_len, TcpSegment* out) {
  // What the frame had on the wire past its first `n` bytes.
  auto wire_after = [&](size_t n) {
    return wire_len > n ? wire_len - static_cast<uint32_t>(n) : 0;
  };
  switch (linktype) {
    case DLT_EN10MB: {
      if (frame.size() < 14) return FrameKind::kTruncated;
      size_t at = 12;
      uint16_t type = Be16(&frame[at]);
      // 802.1Q, 802.1ad and the older QinQ tag: each is 4 bytes (TCI, type).
      for (int tags = 0; type == 0x8100 || type == 0x88a8 || type == 0x9100; ++tags) {
        if (tags == 8) return FrameKind::kMalformed;
        at += 4;
        if (frame.size() < at + 2) return FrameKind::kTruncated;
        type = Be16(&frame[at]);
      }
      at += 2;
      return DecodeByEthertype(type, frame.subspan(at), wire_after(at), out);
    }
    case DLT_LINUX_SLL:  // packet type, ARPHRD, address length, 8 address bytes, protocol
      if (frame.size() < 16) return FrameKind::kTruncated;
      return DecodeByEthertype(Be16(&frame[14]), frame.subspan(16), wire_after(16), out);
    case DLT_LINUX_SLL2:  // protocol, reserved, interface, ARPHRD, type, address length, address
      if (frame.size() < 20) return FrameKind::kTruncated;
      return DecodeByEthertype(Be16(&frame[0]), frame.subspan(20), wire_after(20), out);
    case DLT_RAW:
    case DLT_IPV4:
    case DLT_IPV6: return DecodeByVersion(frame, wire_len, out);
    case DLT_NULL: {  // the family in the capturing host's byte order
      if (frame.size() < 4) return FrameKind::kTruncated;
      const uint32_t le = Le32(&frame[0]);
      const uint32_t family = le < 256 ? le : Be32(&frame[0]);
      return DecodeByFamily(family, frame.subspan(4), wire_after(4), out);
    }
    case DLT_LOOP:  // the family in network byte order
      if (frame.size() < 4) return FrameKind::kTruncated;
      return DecodeByFamily(Be32(&frame[0]), frame.subspan(4), wire_after(4), out);
    default: return FrameKind::kNotTcp;
  }
}

struct CaptureReader::Handle {
  pcap_t* pcap = nullptr;
  std::shared_ptr<common::Bytes> keep;  // the bytes of FromBytes, which the FILE reads
  ~Handle() {
    if (pcap) pcap_close(pcap);  // closes its FILE too
  }
};

CaptureReader::CaptureReader(std::unique_ptr<Handle> h, std::string name)
    : h_(std::move(h)), name_(std::move(name)) {
  linktype_ = pcap_datalink(h_->pcap);
}

CaptureReader::~CaptureReader() = default;

Result<std::unique_ptr<CaptureReader>> CaptureReader::FromFile(
    void* file, const std::string& name, std::shared_ptr<common::Bytes> keep) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  FILE* f = static_cast<FILE*>(file);
  pcap_t* p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (!p) {
    std::fclose(f);
    return Status::InvalidArgument(name +
                                   ": not a capture libpcap can read (pcap or pcapng): " + errbuf);
  }
  auto h = std::make_unique<Handle>();
  h->pcap = p;
  h->keep = std::move(keep);
  std::unique_ptr<CaptureReader> r(new CaptureReader(std::move(h), name));
  if (!LinkTypeKnown(r->linktype_)) {
    const char* dlt = pcap_datalink_val_to_name(r->linktype_);
    return Status::InvalidArgument(
        name + ": link type " + std::to_string(r->linktype_) + " (" + (dlt ? dlt : "unnamed") +
        ") is not one secmode reads (Ethernet, Linux cooked SLL/SLL2, raw IP, null/loopback)");
  }
  return r;
}

Result<std::unique_ptr<CaptureReader>> CaptureReader::Open(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::InvalidArgument(path + ": " + std::strerror(errno));
  return FromFile(f, path, nullptr);
}

Result<std::unique_ptr<CaptureReader>> CaptureReader::FromBytes(ByteView file,
                                                                const std::string& name) {
  auto keep = std::make_shared<common::Bytes>(file.begin(), file.end());
  if (keep->empty()) return Status::InvalidArgument(name + ": empty, not a capture");
  FILE* f = fmemopen(keep->data(), keep->size(), "rb");
  if (!f) return Status::Internal(name + ": fmemopen: " + std::strerror(errno));
  return FromFile(f, name, std::move(keep));
}

int CaptureReader::snaplen() const { return pcap_snapshot(h_->pcap); }

uint64_t CaptureReader::offset() const {
  FILE* f = pcap_file(h_->pcap);
  const long at = f ? std::ftell(f) : -1;
  return at < 0 ? 0 : static_cast<uint64_t>(at);
}

namespace {
// What a frame's record holds beside its bytes, at most: pcap's 16-byte
// header, or pcapng's Enhanced Packet Block header, padding, options and
// trailing length.
constexpr uint64_t kRecordOverhead = 256;
}  // namespace

Result<bool> CaptureReader::Next(TcpSegment* out) {
  for (;;) {
    pcap_pkthdr* hdr = nullptr;
    const u_char* data = nullptr;
    FILE* f = pcap_file(h_->pcap);
    const long before = f ? std::ftell(f) : -1;  // where the next frame's record begins
    const int rc = pcap_next_ex(h_->pcap, &hdr, &data);
    if (rc == PCAP_ERROR_BREAK) return false;  // -2: the end of the file
    if (rc != 1) {
      // A record longer than what is left, begun within a frame's room of
      // the end: the file was cut there. Begun further from the end, its
      // length is damage (a pcapng block may claim megabytes), and a file
      // whose place cannot be told (a pipe) is not judged cut.
      const uint64_t end = offset();
      const uint64_t room = static_cast<uint64_t>(std::max(snaplen(), 0)) + kRecordOverhead;
      if (rc == PCAP_ERROR && f && std::feof(f) && before >= 0 &&
          end - std::min(end, static_cast<uint64_t>(before)) <= room) {
        counts_.cut_at = end;
        return false;
      }
      return Status::Corrupt(name_ + ": damaged at byte " + std::to_string(offset()) +
                             " (after frame " + std::to_string(counts_.frames) +
                             "): " + pcap_geterr(h_->pcap));
    }
    ++counts_.frames;
    const FrameKind kind = DecodeFrame(linktype_, ByteView(data, hdr->caplen), hdr->len, out);
    switch (kind) {
      case FrameKind::kTcp:
        ++counts_.tcp;
        out->ts_ns = TimeNs(hdr->ts.tv_sec, hdr->ts.tv_usec);
        return true;
      case FrameKind::kNotTcp: ++counts_.not_tcp; break;
      case FrameKind::kFragment: ++counts_.fragments; break;
      case FrameKind::kTruncated: ++counts_.truncated; break;
      case FrameKind::kMalformed: ++counts_.malformed; break;
    }
  }
}

}  // namespace secmode::trace
