// PcapTcpWriter: writes one TCP conversation (client <-> server, IPv4 over
// Ethernet) in libpcap format, so a secmode RPC or SMB session can be dissected by
// tshark/Wireshark without capture privileges. Segments carry exactly the
// bytes given (record marks included); sequence and acknowledgement numbers,
// IPv4 and TCP checksums are computed, a three-way handshake is written
// first. Payloads larger than one segment are split.
//
// Thread safety: one thread at a time.
#ifndef SECMODE_COMMON_PCAP_H_
#define SECMODE_COMMON_PCAP_H_

#include <cstdint>
#include <string>
#include <utility>

#include "common/bytes.h"
#include "common/status.h"

namespace secmode::common {

class PcapTcpWriter {
 public:
  PcapTcpWriter(uint16_t client_port, uint16_t server_port)
      : client_port_(client_port), server_port_(server_port) {}
  // Starts the file with the pcap header and the handshake. Each segment is
  // stamped 100 us after the one before; the SYN-ACK a further
  // `synack_after_us`, the client's ACK a further `ack_after_us` (where a
  // round trip falls tells a client's capture from a server's).
  void Begin(uint32_t synack_after_us = 0, uint32_t ack_after_us = 0);
  // Appends `data` sent by the client (from_client) or the server.
  void Add(bool from_client, ByteView data);
  // Writes the file atomically.
  Status Save(const std::string& path) const;
  const Bytes& bytes() const { return out_; }
  // The bytes written so far, handed over (the writer goes on from where it
  // is, with none held): a long capture written to a file piece by piece.
  Bytes TakeBytes() { return std::exchange(out_, {}); }

 private:
  void Segment(bool from_client, uint8_t flags, ByteView payload);
  uint16_t client_port_, server_port_;
  uint32_t client_seq_ = 1000, server_seq_ = 5000;
  uint32_t usec_ = 0;
  Bytes out_;
};

}  // namespace secmode::common

#endif  // SECMODE_COMMON_PCAP_H_
