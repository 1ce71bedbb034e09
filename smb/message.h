// SMB2 message shapes (MS-SMB2 2.2.1.2 header; 2.2.19-2.2.22 READ/WRITE;
// small CREATE / CLOSE / QUERY_INFO-sized messages) so that every measured
// cost is for the bytes a real client or server protects.
//
// Builders write a whole message into a caller's buffer (its capacity reused
// across calls); parsers check every length and offset against the buffer
// and name the first thing wrong. All functions are thread-safe.
#ifndef SECMODE_SMB_MESSAGE_H_
#define SECMODE_SMB_MESSAGE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/bytes.h"
#include "common/status.h"

namespace secmode::smb {

inline constexpr size_t kHeaderSize = 64;            // SMB2 sync header
inline constexpr size_t kSignatureOffset = 48;       // Signature field, 16 bytes
inline constexpr size_t kWriteRequestBodySize = 48;  // fixed part, StructureSize 49
inline constexpr size_t kReadResponseBodySize = 16;  // fixed part, StructureSize 17
inline constexpr size_t kWriteDataOffset = kHeaderSize + kWriteRequestBodySize;  // 0x70
inline constexpr size_t kReadDataOffset = kHeaderSize + kReadResponseBodySize;   // 0x50

// Largest message Direct TCP can frame (its 24-bit length; MS-SMB2 2.1).
inline constexpr size_t kMaxFrame = (size_t{1} << 24) - 1;
// The Direct TCP transport header before each SMB2 message (MS-SMB2 2.1):
// a zero byte and the message's 24-bit length.
inline constexpr size_t kFrameHeaderSize = 4;
// That header for a message of `size` bytes (at most kMaxFrame).
inline std::array<uint8_t, kFrameHeaderSize> FrameHeader(size_t size) {
  return {0, static_cast<uint8_t>(size >> 16), static_cast<uint8_t>(size >> 8),
          static_cast<uint8_t>(size)};
}
// `message` after its header, appended to *out. A message longer than
// kMaxFrame cannot be framed: its caller refuses it (SmbClient::SendFrame).
inline void AppendFramed(common::ByteView message, common::Bytes* out) {
  for (uint8_t b : FrameHeader(message.size())) out->push_back(b);
  out->insert(out->end(), message.begin(), message.end());
}

enum class Command : uint16_t {
  kNegotiate = 0x0000,
  kSessionSetup = 0x0001,
  kLogoff = 0x0002,
  kTreeConnect = 0x0003,
  kTreeDisconnect = 0x0004,
  kCreate = 0x0005,
  kClose = 0x0006,
  kRead = 0x0008,
  kWrite = 0x0009,
  kCancel = 0x000C,
  kQueryInfo = 0x0010,
};

// The name of every SMB2 command (MS-SMB2 2.2.1.2), "NEGOTIATE" ...
// "SERVER_TO_CLIENT_NOTIFICATION"; nullptr for a number no command has.
const char* CommandName(uint16_t command);

// SMB2 header Flags (MS-SMB2 2.2.1.2).
inline constexpr uint32_t kFlagServerToRedir = 0x00000001;
inline constexpr uint32_t kFlagAsync = 0x00000002;
inline constexpr uint32_t kFlagRelated = 0x00000004;
inline constexpr uint32_t kFlagSigned = 0x00000008;

struct HeaderFields {
  Command command = Command::kWrite;
  uint32_t flags = 0;
  uint32_t next_command = 0;
  uint64_t message_id = 0;
  uint32_t tree_id = 1;
  uint64_t session_id = 0;
  uint32_t status = 0;
  uint16_t credits = 1;        // CreditRequest / CreditResponse
  uint16_t credit_charge = 1;  // CreditCharge
};

// Writes a 64-byte sync header at `out` (signature zero).
void WriteHeader(const HeaderFields& h, uint8_t* out);
// Parses the header at the start of `message` (ProtocolId 0xFE 'S' 'M' 'B',
// StructureSize 64, sync form).
common::Result<HeaderFields> ParseHeader(common::ByteView message);

inline uint16_t Le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
inline uint32_t Le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
inline uint64_t Le64(const uint8_t* p) { return Le32(p) | uint64_t{Le32(p + 4)} << 32; }
inline void PutLe16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline void PutLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void PutLe64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
// An ASCII name as the UTF-16LE SMB2 carries (2 bytes per character).
// A number in decimal, for the error messages of smb/.
inline std::string N(uint64_t v) { return std::to_string(v); }
inline void PutUtf16Ascii(const std::string& s, uint8_t* out) {
  for (size_t i = 0; i < s.size(); ++i) {
    out[2 * i] = static_cast<uint8_t>(s[i]);
    out[2 * i + 1] = 0;
  }
}

// A file handle as CREATE returns it (MS-SMB2 2.2.14.1).
struct FileId {
  uint64_t persistent = 0, volatile_id = 0;
};
// The handle the measured messages carry (as a server would hand out).
inline constexpr FileId kSampleFileId{0x0000000400000006ull, 0x0000000400000001ull};
// The name the measured CREATE carries: 20 characters.
inline constexpr const char* kSampleFileName = "dir\\secmode-file.dat";

// The fixed part (header + body up to the data) of a WRITE request
// (MS-SMB2 2.2.21: StructureSize 49, DataOffset 0x70, Length, Offset, FileId)
// carrying `data_length` bytes, written at `out` (kWriteDataOffset bytes).
void WriteWriteRequestPrefix(const HeaderFields& h, const FileId& file, uint32_t data_length,
                             uint64_t file_offset, uint8_t* out);
// The fixed part of a READ response (2.2.20: StructureSize 17, DataOffset
// 0x50, DataLength), kReadDataOffset bytes.
void WriteReadResponsePrefix(const HeaderFields& h, uint32_t data_length, uint8_t* out);

// Whole messages: header + body + data, into *out (WRITE to kSampleFileId
// at offset 0: the measured legs' message).
void BuildWriteRequest(const HeaderFields& h, common::ByteView data, common::Bytes* out);
void BuildReadResponse(const HeaderFields& h, common::ByteView data, common::Bytes* out);
// READ request (2.2.19, 49 bytes + 1 pad byte; the data asked at 0x50 of
// the response) and WRITE response (2.2.22, 17 bytes) for `length` bytes:
// the small messages of a data exchange.
void BuildReadRequest(const HeaderFields& h, const FileId& file, uint32_t length,
                      uint64_t file_offset, common::Bytes* out);
void BuildWriteResponse(const HeaderFields& h, uint32_t count, common::Bytes* out);
// Metadata messages: CREATE request of `name` (2.2.13; relative to the
// share, ASCII, sent as UTF-16LE; read and write access, OPEN_IF, a
// non-directory file; with `delete_on_close` DELETE access and
// FILE_DELETE_ON_CLOSE), CLOSE request (2.2.15), QUERY_INFO request for
// FileStandardInformation (2.2.37).
void BuildCreateRequest(const HeaderFields& h, const std::string& name, bool delete_on_close,
                        common::Bytes* out);
void BuildCloseRequest(const HeaderFields& h, const FileId& file, common::Bytes* out);
void BuildQueryInfoRequest(const HeaderFields& h, const FileId& file, common::Bytes* out);

// Where the data of a WRITE request or READ response lies in `message`.
struct DataSpan {
  size_t offset = 0;
  size_t length = 0;
};
common::Result<DataSpan> ParseWriteRequest(common::ByteView message);
common::Result<DataSpan> ParseReadResponse(common::ByteView message);
// The same from the message's first bytes only (`prefix`: at least the fixed
// part, or the whole message if shorter) and its total size, for callers
// that hold the data elsewhere (a decryptor's split output).
common::Result<DataSpan> ParseWriteRequestPrefix(common::ByteView prefix, size_t message_size);
common::Result<DataSpan> ParseReadResponsePrefix(common::ByteView prefix, size_t message_size);

}  // namespace secmode::smb

#endif  // SECMODE_SMB_MESSAGE_H_
