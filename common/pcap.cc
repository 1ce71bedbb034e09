#include "common/pcap.h"

#include <algorithm>

#include "common/files.h"

namespace secmode::common {

namespace {

void Le32(Bytes* o, uint32_t v) {
  for (int i = 0; i < 4; ++i) o->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void Le16(Bytes* o, uint16_t v) {
  o->push_back(static_cast<uint8_t>(v));
  o->push_back(static_cast<uint8_t>(v >> 8));
}
void Be16(Bytes* o, uint16_t v) {
  o->push_back(static_cast<uint8_t>(v >> 8));
  o->push_back(static_cast<uint8_t>(v));
}
void Be32(Bytes* o, uint32_t v) {
  Be16(o, static_cast<uint16_t>(v >> 16));
  Be16(o, static_cast<uint16_t>(v));
}

// RFC 1071 one's-complement sum.
uint32_t Sum(ByteView b, uint32_t acc = 0) {
  for (size_t i = 0; i + 1 < b.size(); i += 2) acc += (uint32_t{b[i]} << 8) | b[i + 1];
  if (b.size() & 1) acc += uint32_t{b.back()} << 8;
  return acc;
}
uint16_t Fold(uint32_t acc) {
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return static_cast<uint16_t>(~acc);
}

constexpr uint8_t kSyn = 0x02, kAck = 0x10, kPsh = 0x08;
constexpr size_t kMss = 16000;
const uint8_t kClientIp[4] = {127, 0, 0, 1};
const uint8_t kServerIp[4] = {127, 0, 0, 2};

}  // namespace

void PcapTcpWriter::Begin(uint32_t synack_after_us, uint32_t ack_after_us) {
  out_.clear();
  // pcap global header: magic, v2.4, tz 0, sigfigs 0, snaplen, LINKTYPE_ETHERNET.
  Le32(&out_, 0xa1b2c3d4);
  Le16(&out_, 2);
  Le16(&out_, 4);
  Le32(&out_, 0);
  Le32(&out_, 0);
  Le32(&out_, 262144);
  Le32(&out_, 1);
  Segment(true, kSyn, {});
  client_seq_++;
  usec_ += synack_after_us;
  Segment(false, kSyn | kAck, {});
  server_seq_++;
  usec_ += ack_after_us;
  Segment(true, kAck, {});
}

void PcapTcpWriter::Add(bool from_client, ByteView data) {
  for (size_t off = 0; off < data.size(); off += kMss) {
    Segment(from_client, kAck | kPsh, data.subspan(off, std::min(kMss, data.size() - off)));
  }
}

void PcapTcpWriter::Segment(bool from_client, uint8_t flags, ByteView payload) {
  Bytes tcp;
  Be16(&tcp, from_client ? client_port_ : server_port_);
  Be16(&tcp, from_client ? server_port_ : client_port_);
  uint32_t& seq = from_client ? client_seq_ : server_seq_;
  uint32_t ack = from_client ? server_seq_ : client_seq_;
  Be32(&tcp, seq);
  Be32(&tcp, (flags & kAck) ? ack : 0);
  tcp.push_back(5 << 4);  // data offset: 20 bytes
  tcp.push_back(flags);
  Be16(&tcp, 65535);  // window
  Be16(&tcp, 0);      // checksum, below
  Be16(&tcp, 0);      // urgent
  tcp.insert(tcp.end(), payload.begin(), payload.end());
  const uint8_t* src = from_client ? kClientIp : kServerIp;
  const uint8_t* dst = from_client ? kServerIp : kClientIp;
  // TCP checksum over the pseudo header (RFC 793 section 3.1).
  Bytes pseudo(src, src + 4);
  pseudo.insert(pseudo.end(), dst, dst + 4);
  pseudo.push_back(0);
  pseudo.push_back(6);
  Be16(&pseudo, static_cast<uint16_t>(tcp.size()));
  uint16_t tsum = Fold(Sum(tcp, Sum(pseudo)));
  tcp[16] = static_cast<uint8_t>(tsum >> 8);
  tcp[17] = static_cast<uint8_t>(tsum);
  seq += static_cast<uint32_t>(payload.size());

  Bytes ip;
  ip.push_back(0x45);
  ip.push_back(0);
  Be16(&ip, static_cast<uint16_t>(20 + tcp.size()));
  Be16(&ip, 0);       // id
  Be16(&ip, 0x4000);  // don't fragment
  ip.push_back(64);
  ip.push_back(6);
  Be16(&ip, 0);
  ip.insert(ip.end(), src, src + 4);
  ip.insert(ip.end(), dst, dst + 4);
  uint16_t isum = Fold(Sum(ip));
  ip[10] = static_cast<uint8_t>(isum >> 8);
  ip[11] = static_cast<uint8_t>(isum);

  Bytes eth = {0x02, 0,   0, 0, 0, static_cast<uint8_t>(from_client ? 2 : 1),
               0x02, 0,   0, 0, 0, static_cast<uint8_t>(from_client ? 1 : 2),
               0x08, 0x00};
  size_t len = eth.size() + ip.size() + tcp.size();
  usec_ += 100;
  Le32(&out_, 1700000000 + usec_ / 1000000);
  Le32(&out_, usec_ % 1000000);
  Le32(&out_, static_cast<uint32_t>(len));
  Le32(&out_, static_cast<uint32_t>(len));
  out_.insert(out_.end(), eth.begin(), eth.end());
  out_.insert(out_.end(), ip.begin(), ip.end());
  out_.insert(out_.end(), tcp.begin(), tcp.end());
}

Status PcapTcpWriter::Save(const std::string& path) const {
  return common::WriteFileAtomically(path, std::string(out_.begin(), out_.end()));
}

}  // namespace secmode::common
