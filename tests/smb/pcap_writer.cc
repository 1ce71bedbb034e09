#include "tests/smb/pcap_writer.h"

#include <cstring>

namespace secmode::smb::testing {

namespace {

void Le32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void Le16(std::string* s, uint16_t v) {
  s->push_back(static_cast<char>(v));
  s->push_back(static_cast<char>(v >> 8));
}
void Be16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void Be32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

// RFC 1071 ones'-complement sum.
uint32_t Sum(const uint8_t* p, size_t n, uint32_t acc) {
  for (size_t i = 0; i + 1 < n; i += 2) acc += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (n % 2) acc += static_cast<uint32_t>(p[n - 1] << 8);
  return acc;
}
uint16_t Fold(uint32_t acc) {
  while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
  return static_cast<uint16_t>(~acc);
}

const uint8_t kClientIp[4] = {10, 0, 0, 1};
const uint8_t kServerIp[4] = {10, 0, 0, 2};
const uint8_t kClientMac[6] = {0x02, 0, 0, 0, 0, 1};
const uint8_t kServerMac[6] = {0x02, 0, 0, 0, 0, 2};
constexpr uint16_t kClientPort = 49152, kServerPort = 445;

}  // namespace

PcapWriter::PcapWriter() {
  Le32(&out_, 0xa1b2c3d4);  // microsecond timestamps
  Le16(&out_, 2);
  Le16(&out_, 4);
  Le32(&out_, 0);       // thiszone
  Le32(&out_, 0);       // sigfigs
  Le32(&out_, 262144);  // snaplen
  Le32(&out_, 1);       // LINKTYPE_ETHERNET
}

void PcapWriter::Segment(bool from_client, uint8_t flags, common::ByteView payload) {
  const size_t tcp_len = 20 + payload.size();
  const size_t ip_len = 20 + tcp_len;
  common::Bytes f(14 + ip_len, 0);
  uint8_t* eth = f.data();
  memcpy(eth, from_client ? kServerMac : kClientMac, 6);
  memcpy(eth + 6, from_client ? kClientMac : kServerMac, 6);
  Be16(eth + 12, 0x0800);
  uint8_t* ip = eth + 14;
  ip[0] = 0x45;
  Be16(ip + 2, static_cast<uint16_t>(ip_len));
  Be16(ip + 4, ip_id_++);
  Be16(ip + 6, 0x4000);  // don't fragment
  ip[8] = 64;
  ip[9] = 6;  // TCP
  memcpy(ip + 12, from_client ? kClientIp : kServerIp, 4);
  memcpy(ip + 16, from_client ? kServerIp : kClientIp, 4);
  Be16(ip + 10, Fold(Sum(ip, 20, 0)));
  uint8_t* tcp = ip + 20;
  Be16(tcp, from_client ? kClientPort : kServerPort);
  Be16(tcp + 2, from_client ? kServerPort : kClientPort);
  uint32_t& seq = from_client ? client_seq_ : server_seq_;
  uint32_t& ack = from_client ? server_seq_ : client_seq_;
  Be32(tcp + 4, seq);
  Be32(tcp + 8, (flags & 0x10) ? ack : 0);
  tcp[12] = 5 << 4;
  tcp[13] = flags;
  Be16(tcp + 14, 65535);
  if (!payload.empty()) memcpy(tcp + 20, payload.data(), payload.size());
  uint8_t pseudo[12];
  memcpy(pseudo, ip + 12, 8);
  pseudo[8] = 0;
  pseudo[9] = 6;
  Be16(pseudo + 10, static_cast<uint16_t>(tcp_len));
  Be16(tcp + 16, Fold(Sum(tcp, tcp_len, Sum(pseudo, 12, 0))));
  seq += static_cast<uint32_t>(payload.size()) + ((flags & 0x02) ? 1 : 0);

  time_us_ += 100;
  Le32(&out_, 1700000000);
  Le32(&out_, time_us_);
  Le32(&out_, static_cast<uint32_t>(f.size()));
  Le32(&out_, static_cast<uint32_t>(f.size()));
  out_.append(reinterpret_cast<const char*>(f.data()), f.size());
}

void PcapWriter::Handshake() {
  Segment(true, 0x02, {});   // SYN
  Segment(false, 0x12, {});  // SYN+ACK
  Segment(true, 0x10, {});   // ACK
}

void PcapWriter::ClientToServer(common::ByteView m) {
  common::Bytes framed(4 + m.size());
  framed[0] = 0;
  framed[1] = static_cast<uint8_t>(m.size() >> 16);
  framed[2] = static_cast<uint8_t>(m.size() >> 8);
  framed[3] = static_cast<uint8_t>(m.size());
  memcpy(framed.data() + 4, m.data(), m.size());
  Segment(true, 0x18, framed);  // PSH+ACK
}

void PcapWriter::ServerToClient(common::ByteView m) {
  common::Bytes framed(4 + m.size());
  framed[0] = 0;
  framed[1] = static_cast<uint8_t>(m.size() >> 16);
  framed[2] = static_cast<uint8_t>(m.size() >> 8);
  framed[3] = static_cast<uint8_t>(m.size());
  memcpy(framed.data() + 4, m.data(), m.size());
  Segment(false, 0x18, framed);
}

}  // namespace secmode::smb::testing
