// A TCP segment made in memory for the trace's builders: between
// 10.0.0.1:`client_port` and 10.0.0.2:`server_port` (or back with `back`),
// `wire` bytes on the wire (0: all of `data`) of which `data` were captured.
#ifndef SECMODE_TESTS_TRACE_SEGMENT_H_
#define SECMODE_TESTS_TRACE_SEGMENT_H_

#include <cstdint>

#include "common/bytes.h"
#include "trace/capture.h"

namespace secmode::trace {

inline TcpSegment SegmentBetween(uint16_t client_port, uint16_t server_port, bool back,
                                 uint32_t seq, uint8_t flags, common::ByteView data,
                                 uint32_t wire = 0) {
  TcpSegment s;
  Endpoint client, server;
  client.addr[0] = server.addr[0] = 10;
  client.addr[3] = 1;
  server.addr[3] = 2;
  client.port = client_port;
  server.port = server_port;
  s.src = back ? server : client;
  s.dst = back ? client : server;
  s.seq = seq;
  s.flags = flags;
  s.payload = data;
  s.payload_len = wire ? wire : static_cast<uint32_t>(data.size());
  return s;
}

}  // namespace secmode::trace

#endif  // SECMODE_TESTS_TRACE_SEGMENT_H_
