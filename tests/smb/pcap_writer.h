// A minimal classic-libpcap writer for tests: one TCP connection between a
// client and port 445, Ethernet/IPv4/TCP framing with correct lengths,
// sequence numbers and checksums, and SMB messages carried with their
// 4-byte NetBIOS session-service length prefix (MS-SMB2 2.1).
#ifndef SECMODE_TESTS_SMB_PCAP_WRITER_H_
#define SECMODE_TESTS_SMB_PCAP_WRITER_H_

#include <cstdint>
#include <string>

#include "common/bytes.h"

namespace secmode::smb::testing {

class PcapWriter {
 public:
  PcapWriter();
  // The three-way handshake (client port 49152 -> 445).
  void Handshake();
  // One SMB message (its NetBIOS prefix added here) in one TCP segment.
  void ClientToServer(common::ByteView smb_message);
  void ServerToClient(common::ByteView smb_message);
  const std::string& bytes() const { return out_; }

 private:
  void Segment(bool from_client, uint8_t flags, common::ByteView payload);
  std::string out_;
  uint32_t client_seq_ = 1000, server_seq_ = 5000;
  uint32_t time_us_ = 0;
  uint16_t ip_id_ = 1;
};

}  // namespace secmode::smb::testing

#endif  // SECMODE_TESTS_SMB_PCAP_WRITER_H_
