#include "smb/message.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

namespace secmode::smb {

using common::Bytes;
using common::ByteView;
using common::Result;
using common::Status;

namespace {

void WriteFileId(const FileId& f, uint8_t* p) {
  PutLe64(p, f.persistent);
  PutLe64(p + 8, f.volatile_id);
}

// MS-SMB2 2.2.1.2, Command: one row per command, in number order.
constexpr const char* kCommandNames[] = {
    "NEGOTIATE",     "SESSION_SETUP", "LOGOFF",   "TREE_CONNECT", "TREE_DISCONNECT",
    "CREATE",        "CLOSE",         "FLUSH",    "READ",         "WRITE",
    "LOCK",          "IOCTL",         "CANCEL",   "ECHO",         "QUERY_DIRECTORY",
    "CHANGE_NOTIFY", "QUERY_INFO",    "SET_INFO", "OPLOCK_BREAK", "SERVER_TO_CLIENT_NOTIFICATION"};

}  // namespace

const char* CommandName(uint16_t command) {
  return command < std::size(kCommandNames) ? kCommandNames[command] : nullptr;
}

void WriteHeader(const HeaderFields& h, uint8_t* out) {
  memset(out, 0, kHeaderSize);
  out[0] = 0xFE;
  out[1] = 'S';
  out[2] = 'M';
  out[3] = 'B';
  PutLe16(out + 4, 64);  // StructureSize
  PutLe16(out + 6, h.credit_charge);
  PutLe32(out + 8, h.status);
  PutLe16(out + 12, static_cast<uint16_t>(h.command));
  PutLe16(out + 14, h.credits);
  PutLe32(out + 16, h.flags);
  PutLe32(out + 20, h.next_command);
  PutLe64(out + 24, h.message_id);
  PutLe32(out + 32, 0xFEFF);  // Reserved (ProcessId), as Windows sends it
  PutLe32(out + 36, h.tree_id);
  PutLe64(out + 40, h.session_id);
  // Signature (48..63) stays zero until a signer fills it.
}

Result<HeaderFields> ParseHeader(ByteView m) {
  if (m.size() < kHeaderSize) {
    return Status::Corrupt("truncated SMB2 header: " + N(m.size()) + " bytes, need 64");
  }
  if (m[0] != 0xFE || m[1] != 'S' || m[2] != 'M' || m[3] != 'B') {
    char buf[96];
    snprintf(buf, sizeof buf, "not an SMB2 message: ProtocolId %02x %02x %02x %02x", m[0], m[1],
             m[2], m[3]);
    return Status::Corrupt(buf);
  }
  if (Le16(&m[4]) != 64) {
    return Status::Corrupt("SMB2 header StructureSize " + N(Le16(&m[4])) + ", expected 64");
  }
  HeaderFields h;
  h.credit_charge = Le16(&m[6]);
  h.status = Le32(&m[8]);
  h.command = static_cast<Command>(Le16(&m[12]));
  h.credits = Le16(&m[14]);
  h.flags = Le32(&m[16]);
  h.next_command = Le32(&m[20]);
  h.message_id = Le64(&m[24]);
  h.tree_id = Le32(&m[36]);
  h.session_id = Le64(&m[40]);
  return h;
}

void WriteWriteRequestPrefix(const HeaderFields& h, const FileId& file, uint32_t data_length,
                             uint64_t file_offset, uint8_t* out) {
  WriteHeader(h, out);
  uint8_t* b = out + kHeaderSize;
  memset(b, 0, kWriteRequestBodySize);
  PutLe16(b + 0, 49);  // StructureSize
  PutLe16(b + 2, static_cast<uint16_t>(kWriteDataOffset));
  PutLe32(b + 4, data_length);
  PutLe64(b + 8, file_offset);
  WriteFileId(file, b + 16);
  // Channel, RemainingBytes, WriteChannelInfoLength, Flags: 0. Windows puts
  // the data offset in WriteChannelInfoOffset even with no channel info.
  PutLe16(b + 40, static_cast<uint16_t>(kWriteDataOffset));
}

void WriteReadResponsePrefix(const HeaderFields& h, uint32_t data_length, uint8_t* out) {
  WriteHeader(h, out);
  uint8_t* b = out + kHeaderSize;
  memset(b, 0, kReadResponseBodySize);
  PutLe16(b + 0, 17);  // StructureSize
  b[2] = static_cast<uint8_t>(kReadDataOffset);
  PutLe32(b + 4, data_length);
}

void BuildWriteRequest(const HeaderFields& h, ByteView data, Bytes* out) {
  out->resize(kWriteDataOffset + data.size());
  WriteWriteRequestPrefix(h, kSampleFileId, static_cast<uint32_t>(data.size()), 0, out->data());
  if (!data.empty()) memcpy(out->data() + kWriteDataOffset, data.data(), data.size());
}

void BuildReadResponse(const HeaderFields& h, ByteView data, Bytes* out) {
  out->resize(kReadDataOffset + data.size());
  WriteReadResponsePrefix(h, static_cast<uint32_t>(data.size()), out->data());
  if (!data.empty()) memcpy(out->data() + kReadDataOffset, data.data(), data.size());
}

void BuildReadRequest(const HeaderFields& h, const FileId& file, uint32_t length,
                      uint64_t file_offset, Bytes* out) {
  out->assign(kHeaderSize + 49, 0);
  WriteHeader(h, out->data());
  uint8_t* b = out->data() + kHeaderSize;
  PutLe16(b + 0, 49);
  b[2] = static_cast<uint8_t>(kReadDataOffset);  // Padding: where the data should start
  PutLe32(b + 4, length);
  PutLe64(b + 8, file_offset);
  WriteFileId(file, b + 16);
  // MinimumCount, Channel, RemainingBytes, ReadChannelInfo: 0.
}

void BuildWriteResponse(const HeaderFields& h, uint32_t count, Bytes* out) {
  out->assign(kHeaderSize + 16, 0);
  WriteHeader(h, out->data());
  uint8_t* b = out->data() + kHeaderSize;
  PutLe16(b + 0, 17);
  PutLe32(b + 4, count);
}

void BuildCreateRequest(const HeaderFields& h, const std::string& name, bool delete_on_close,
                        Bytes* out) {
  const size_t name_bytes = 2 * name.size();
  out->assign(kHeaderSize + 56 + std::max<size_t>(name_bytes, 1), 0);
  WriteHeader(h, out->data());
  uint8_t* b = out->data() + kHeaderSize;
  PutLe16(b + 0, 57);
  PutLe32(b + 4, 2);  // ImpersonationLevel: Impersonation
  // DesiredAccess: read, write, attributes, synchronize (and DELETE).
  PutLe32(b + 24, 0x0012019F | (delete_on_close ? 0x00010000u : 0u));
  PutLe32(b + 28, 0x80);  // FileAttributes: NORMAL
  PutLe32(b + 32, 7);     // ShareAccess: read|write|delete
  PutLe32(b + 36, 3);     // CreateDisposition: OPEN_IF
  // CreateOptions: NON_DIRECTORY_FILE (and DELETE_ON_CLOSE).
  PutLe32(b + 40, 0x40 | (delete_on_close ? 0x1000u : 0u));
  PutLe16(b + 44, static_cast<uint16_t>(kHeaderSize + 56));  // NameOffset
  PutLe16(b + 46, static_cast<uint16_t>(name_bytes));
  PutUtf16Ascii(name, b + 56);
}

void BuildCloseRequest(const HeaderFields& h, const FileId& file, Bytes* out) {
  out->assign(kHeaderSize + 24, 0);
  WriteHeader(h, out->data());
  uint8_t* b = out->data() + kHeaderSize;
  PutLe16(b + 0, 24);
  WriteFileId(file, b + 8);
}

void BuildQueryInfoRequest(const HeaderFields& h, const FileId& file, Bytes* out) {
  out->assign(kHeaderSize + 41, 0);
  WriteHeader(h, out->data());
  uint8_t* b = out->data() + kHeaderSize;
  PutLe16(b + 0, 41);
  b[2] = 1;            // InfoType: SMB2_0_INFO_FILE
  b[3] = 5;            // FileStandardInformation
  PutLe32(b + 4, 24);  // OutputBufferLength: its 24 bytes
  WriteFileId(file, b + 24);
}

Result<DataSpan> ParseWriteRequest(ByteView m) { return ParseWriteRequestPrefix(m, m.size()); }
Result<DataSpan> ParseReadResponse(ByteView m) { return ParseReadResponsePrefix(m, m.size()); }

Result<DataSpan> ParseWriteRequestPrefix(ByteView m, size_t size) {
  if (m.size() > size) m = m.first(size);
  SECMODE_ASSIGN_OR_RETURN(HeaderFields h, ParseHeader(m));
  if (h.command != Command::kWrite) {
    return Status::Corrupt("expected a WRITE request, got command 0x" +
                           std::to_string(static_cast<unsigned>(h.command)));
  }
  if (h.flags & kFlagServerToRedir) return Status::Corrupt("WRITE has the response flag set");
  if (m.size() < kWriteDataOffset) {
    return Status::Corrupt("truncated WRITE request: " + N(size) + " bytes, need " +
                           N(kWriteDataOffset));
  }
  const uint8_t* b = m.data() + kHeaderSize;
  if (Le16(b) != 49) return Status::Corrupt("WRITE StructureSize " + N(Le16(b)) + ", expected 49");
  DataSpan span{Le16(b + 2), Le32(b + 4)};
  if (span.length > 0 &&
      (span.offset < kWriteDataOffset || span.offset > size || span.length > size - span.offset)) {
    return Status::Corrupt("WRITE data (offset " + N(span.offset) + ", length " + N(span.length) +
                           ") outside the " + N(size) + "-byte message");
  }
  return span;
}

Result<DataSpan> ParseReadResponsePrefix(ByteView m, size_t size) {
  if (m.size() > size) m = m.first(size);
  SECMODE_ASSIGN_OR_RETURN(HeaderFields h, ParseHeader(m));
  if (h.command != Command::kRead) {
    return Status::Corrupt("expected a READ response, got command 0x" +
                           std::to_string(static_cast<unsigned>(h.command)));
  }
  if (!(h.flags & kFlagServerToRedir))
    return Status::Corrupt("READ response lacks the response flag");
  if (m.size() < kReadDataOffset) {
    return Status::Corrupt("truncated READ response: " + N(size) + " bytes, need " +
                           N(kReadDataOffset));
  }
  const uint8_t* b = m.data() + kHeaderSize;
  if (Le16(b) != 17) return Status::Corrupt("READ StructureSize " + N(Le16(b)) + ", expected 17");
  DataSpan span{b[2], Le32(b + 4)};
  if (span.length > 0 &&
      (span.offset < kReadDataOffset || span.offset > size || span.length > size - span.offset)) {
    return Status::Corrupt("READ data (offset " + N(span.offset) + ", length " + N(span.length) +
                           ") outside the " + N(size) + "-byte message");
  }
  return span;
}

}  // namespace secmode::smb
