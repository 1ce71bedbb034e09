// libFuzzer target: the TCP record reader (RFC 5531 section 11) fed in
// chunks whose sizes come from the input, followed by the call header
// decoder on every record it yields.
#include <cstddef>
#include <cstdint>

#include "rpc/record.h"
#include "rpc/rpc_msg.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using secmode::common::ByteView;
  if (size < 1) return 0;
  // First byte: chunk size (1..256) for feeding the stream.
  size_t chunk = size_t{data[0]} + 1;
  ByteView stream(data + 1, size - 1);
  secmode::rpc::RecordReader reader(4096);
  for (size_t off = 0; off < stream.size(); off += chunk) {
    reader.Feed(stream.subspan(off, std::min(chunk, stream.size() - off)));
    while (true) {
      ByteView record;
      auto next = reader.Next(&record);
      if (!next.ok()) return 0;  // broken stream: the connection would close
      if (!*next) break;
      if (record.size() > 4096) __builtin_trap();  // the limit must hold
      secmode::rpc::CallHeader h;
      (void)secmode::rpc::DecodeCallHeader(record, &h);
    }
  }
  return 0;
}
