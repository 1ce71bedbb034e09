#include "smb/client_messages.h"

#include <cstdio>
#include <cstring>

namespace secmode::smb {

using common::Bytes;
using common::ByteView;
using common::Result;
using common::Status;

namespace {

size_t Align8(size_t n) { return (n + 7) & ~size_t{7}; }

// The header of a response to `command` (the response flag set).
Result<HeaderFields> ResponseHeader(ByteView m, Command command, const char* what) {
  SECMODE_ASSIGN_OR_RETURN(HeaderFields h, ParseHeader(m));
  if (h.command != command) {
    return Status::Corrupt(std::string(what) + " response expected, got command 0x" +
                           std::to_string(static_cast<unsigned>(h.command)));
  }
  if (!(h.flags & kFlagServerToRedir)) {
    return Status::Corrupt(std::string(what) + " response lacks the response flag");
  }
  return h;
}

Status NeedBody(ByteView m, size_t fixed, uint16_t structure_size, const char* what) {
  if (m.size() < kHeaderSize + fixed) {
    return Status::Corrupt(std::string("truncated ") + what + " response: " + N(m.size()) +
                           " bytes, need " + N(kHeaderSize + fixed));
  }
  const uint16_t got = Le16(m.data() + kHeaderSize);
  if (got != structure_size) {
    return Status::Corrupt(std::string(what) + " response StructureSize " + N(got) + ", expected " +
                           N(structure_size));
  }
  return Status::Ok();
}

// A buffer named by an offset (from the header) and a length, inside `m`.
Result<ByteView> BufferAt(ByteView m, size_t offset, size_t length, size_t min_offset,
                          const char* what) {
  if (length == 0) return ByteView();
  if (offset < min_offset || offset > m.size() || length > m.size() - offset) {
    return Status::Corrupt(std::string(what) + " (offset " + N(offset) + ", length " + N(length) +
                           ") outside the " + N(m.size()) + "-byte message");
  }
  return m.subspan(offset, length);
}

// A successful response of `command` whose body has the fixed part and
// StructureSize given: the body's first byte. A refusal is named by its
// status.
Result<const uint8_t*> SuccessBody(ByteView m, Command command, const char* what, size_t fixed,
                                   uint16_t structure_size) {
  SECMODE_ASSIGN_OR_RETURN(HeaderFields h, ResponseHeader(m, command, what));
  if (h.status != kStatusSuccess) {
    return Status::Unavailable(std::string(what) + " refused: " + NtStatusName(h.status));
  }
  SECMODE_RETURN_IF_ERROR(NeedBody(m, fixed, structure_size, what));
  return m.data() + kHeaderSize;
}

}  // namespace

std::string NtStatusName(uint32_t status) {
  const char* name = nullptr;
  switch (status) {
    case kStatusSuccess: name = "STATUS_SUCCESS"; break;
    case kStatusPending: name = "STATUS_PENDING"; break;
    case kStatusMoreProcessingRequired: name = "STATUS_MORE_PROCESSING_REQUIRED"; break;
    case kStatusAccessDenied: name = "STATUS_ACCESS_DENIED"; break;
    case kStatusEndOfFile: name = "STATUS_END_OF_FILE"; break;
    case kStatusInternalError: name = "STATUS_INTERNAL_ERROR"; break;
    case 0xC000000D: name = "STATUS_INVALID_PARAMETER"; break;
    case 0xC000006D: name = "STATUS_LOGON_FAILURE"; break;
    case 0xC00000BB: name = "STATUS_NOT_SUPPORTED"; break;
    case 0xC00000CC: name = "STATUS_BAD_NETWORK_NAME"; break;
    case 0xC0000203: name = "STATUS_USER_SESSION_DELETED"; break;
    case 0xC000035C: name = "STATUS_NETWORK_SESSION_EXPIRED"; break;
    case 0xC0000034: name = "STATUS_OBJECT_NAME_NOT_FOUND"; break;
    case 0xC0000008: name = "STATUS_INVALID_HANDLE"; break;
    case 0xC00000C9: name = "STATUS_NETWORK_NAME_DELETED"; break;
    case 0xC0000184: name = "STATUS_INVALID_DEVICE_STATE"; break;
    case 0xC00000BE: name = "STATUS_BAD_NETWORK_PATH"; break;
    case 0xC0000205: name = "STATUS_INSUFF_SERVER_RESOURCES"; break;
    case 0xC0000017: name = "STATUS_NO_MEMORY"; break;
    case 0xC0000001: name = "STATUS_UNSUCCESSFUL"; break;
    case 0xC0000010: name = "STATUS_INVALID_DEVICE_REQUEST"; break;
    case 0xC00000B5: name = "STATUS_IO_TIMEOUT"; break;
    case 0xC0000128: name = "STATUS_FILE_CLOSED"; break;
    case 0xC000009A: name = "STATUS_INSUFFICIENT_RESOURCES"; break;
    case 0xC0000148: name = "STATUS_INVALID_LEVEL"; break;
    case 0xC000A100: name = "STATUS_HASH_NOT_SUPPORTED"; break;
    case 0xC0000035: name = "STATUS_OBJECT_NAME_COLLISION"; break;
    default: break;
  }
  char buf[64];
  if (name) {
    snprintf(buf, sizeof buf, "%s (0x%08x)", name, status);
  } else {
    snprintf(buf, sizeof buf, "NTSTATUS 0x%08x", status);
  }
  return buf;
}

std::string DialectName(uint16_t d) {
  switch (d) {
    case 0x0202: return "2.0.2";
    case kDialect210: return "2.1";
    case 0x0300: return "3.0";
    case 0x0302: return "3.0.2";
    case kDialect311: return "3.1.1";
    default: break;
  }
  char buf[8];
  snprintf(buf, sizeof buf, "0x%04x", d);
  return buf;
}

void BuildNegotiateRequest(const NegotiateRequest& r, const HeaderFields& h, Bytes* out) {
  const bool v311 = [&] {
    for (uint16_t d : r.dialects)
      if (d == kDialect311) return true;
    return false;
  }();
  const size_t dialects_end = kHeaderSize + 36 + 2 * r.dialects.size();
  // Negotiate contexts (2.2.3.1): each 8-byte aligned, an 8-byte header
  // (ContextType, DataLength, Reserved) then the data.
  struct Ctx {
    uint16_t type;
    Bytes data;
  };
  std::vector<Ctx> contexts;
  if (v311) {
    Ctx pre{0x0001, Bytes(6 + 32)};
    PutLe16(pre.data.data(), 1);       // HashAlgorithmCount
    PutLe16(pre.data.data() + 2, 32);  // SaltLength
    PutLe16(pre.data.data() + 4, 1);   // SHA-512
    memcpy(pre.data.data() + 6, r.salt, 32);
    contexts.push_back(std::move(pre));
    if (!r.ciphers.empty()) {
      Ctx enc{0x0002, Bytes(2 + 2 * r.ciphers.size())};
      PutLe16(enc.data.data(), static_cast<uint16_t>(r.ciphers.size()));
      for (size_t i = 0; i < r.ciphers.size(); ++i) {
        PutLe16(enc.data.data() + 2 + 2 * i, static_cast<uint16_t>(r.ciphers[i]));
      }
      contexts.push_back(std::move(enc));
    }
    if (!r.signing_algorithms.empty()) {
      Ctx sig{0x0008, Bytes(2 + 2 * r.signing_algorithms.size())};
      PutLe16(sig.data.data(), static_cast<uint16_t>(r.signing_algorithms.size()));
      for (size_t i = 0; i < r.signing_algorithms.size(); ++i) {
        PutLe16(sig.data.data() + 2 + 2 * i, r.signing_algorithms[i]);
      }
      contexts.push_back(std::move(sig));
    }
  }
  size_t size = dialects_end;
  const size_t contexts_offset = Align8(dialects_end);
  if (!contexts.empty()) {
    size = contexts_offset;
    for (size_t i = 0; i < contexts.size(); ++i) {
      if (i > 0) size = Align8(size);
      size += 8 + contexts[i].data.size();
    }
  }
  out->assign(size, 0);
  WriteHeader(h, out->data());
  uint8_t* b = out->data() + kHeaderSize;
  PutLe16(b + 0, 36);
  PutLe16(b + 2, static_cast<uint16_t>(r.dialects.size()));
  PutLe16(b + 4, r.security_mode);
  PutLe32(b + 8, r.capabilities);
  memcpy(b + 12, r.client_guid, 16);
  if (!contexts.empty()) {
    PutLe32(b + 28, static_cast<uint32_t>(contexts_offset));
    PutLe16(b + 32, static_cast<uint16_t>(contexts.size()));
  }
  for (size_t i = 0; i < r.dialects.size(); ++i) PutLe16(b + 36 + 2 * i, r.dialects[i]);
  size_t at = contexts_offset;
  for (size_t i = 0; i < contexts.size(); ++i) {
    if (i > 0) at = Align8(at);
    uint8_t* c = out->data() + at;
    PutLe16(c, contexts[i].type);
    PutLe16(c + 2, static_cast<uint16_t>(contexts[i].data.size()));
    memcpy(c + 8, contexts[i].data.data(), contexts[i].data.size());
    at += 8 + contexts[i].data.size();
  }
}

Result<NegotiateResponse> ParseNegotiateResponse(ByteView m) {
  SECMODE_ASSIGN_OR_RETURN(const uint8_t* b,
                           SuccessBody(m, Command::kNegotiate, "NEGOTIATE", 64, 65));
  NegotiateResponse r;
  r.security_mode = Le16(b + 2);
  r.dialect = Le16(b + 4);
  const uint16_t context_count = Le16(b + 6);
  r.capabilities = Le32(b + 24);
  r.max_transact_size = Le32(b + 28);
  r.max_read_size = Le32(b + 32);
  r.max_write_size = Le32(b + 36);
  SECMODE_ASSIGN_OR_RETURN(ByteView sec, BufferAt(m, Le16(b + 56), Le16(b + 58), kHeaderSize + 64,
                                                  "NEGOTIATE security buffer"));
  r.security_buffer.assign(sec.begin(), sec.end());
  if (r.dialect != kDialect311) return r;
  if (context_count == 0) {
    return Status::Corrupt("SMB 3.1.1 NEGOTIATE response without negotiate contexts");
  }
  size_t at = Le32(b + 60);
  if (at < kHeaderSize + 64 || at % 8 != 0) {
    return Status::Corrupt("NEGOTIATE NegotiateContextOffset " + N(at) +
                           " (must be 8-aligned, after the fixed part)");
  }
  for (uint16_t i = 0; i < context_count; ++i) {
    if (i > 0) at = Align8(at);
    if (at > m.size() || m.size() - at < 8) {
      return Status::Corrupt("NEGOTIATE context " + N(i) + " at offset " + N(at) + " outside the " +
                             N(m.size()) + "-byte message");
    }
    const uint16_t type = Le16(m.data() + at);
    const size_t length = Le16(m.data() + at + 2);
    if (m.size() - at - 8 < length) {
      return Status::Corrupt("NEGOTIATE context " + N(i) + " (type " + N(type) + ") has " +
                             N(length) + " data bytes, the message " + N(m.size() - at - 8));
    }
    const uint8_t* d = m.data() + at + 8;
    switch (type) {
      case 0x0001:  // PREAUTH_INTEGRITY_CAPABILITIES: exactly one algorithm in a response
        if (length < 4 || Le16(d) != 1 || length < 6) {
          return Status::Corrupt("NEGOTIATE preauth-integrity context: " + N(length) +
                                 " bytes, must name exactly one hash algorithm");
        }
        r.preauth_hash_algorithm = Le16(d + 4);
        break;
      case 0x0002:  // ENCRYPTION_CAPABILITIES: one cipher (0 = none)
        if (length < 4 || Le16(d) != 1) {
          return Status::Corrupt("NEGOTIATE encryption context must name exactly one cipher");
        }
        r.cipher = Le16(d + 2);
        break;
      case 0x0008:  // SIGNING_CAPABILITIES: one algorithm
        if (length < 4 || Le16(d) != 1) {
          return Status::Corrupt(
              "NEGOTIATE signing context must name exactly one signing algorithm");
        }
        r.has_signing_context = true;
        r.signing_algorithm = Le16(d + 2);
        break;
      default: break;  // others (compression, netname, transport ...) are not used
    }
    at += 8 + length;
  }
  if (r.preauth_hash_algorithm != 1) {
    return Status::Corrupt(
        "SMB 3.1.1 NEGOTIATE response without SHA-512 preauth integrity "
        "(hash algorithm " +
        N(r.preauth_hash_algorithm) + ")");
  }
  return r;
}

void BuildSessionSetupRequest(const HeaderFields& h, uint8_t flags, uint8_t security_mode,
                              ByteView token, Bytes* out) {
  out->assign(kHeaderSize + 24 + std::max<size_t>(token.size(), 1), 0);
  WriteHeader(h, out->data());
  uint8_t* b = out->data() + kHeaderSize;
  PutLe16(b + 0, 25);
  b[2] = flags;
  b[3] = security_mode;
  PutLe16(b + 12, static_cast<uint16_t>(kHeaderSize + 24));
  PutLe16(b + 14, static_cast<uint16_t>(token.size()));
  if (!token.empty()) memcpy(b + 24, token.data(), token.size());
  out->resize(kHeaderSize + 24 + token.size());
}

Result<SessionSetupResponse> ParseSessionSetupResponse(ByteView m) {
  SECMODE_ASSIGN_OR_RETURN(HeaderFields h,
                           ResponseHeader(m, Command::kSessionSetup, "SESSION_SETUP"));
  if (h.status == kStatusInternalError) {
    // The server failed on its side, not on the credentials (Samba as an
    // AD DC answers so when its winbindd does not map the user's SIDs).
    return Status::Unavailable("SESSION_SETUP failed in the server: " + NtStatusName(h.status));
  }
  if (h.status != kStatusSuccess && h.status != kStatusMoreProcessingRequired) {
    return Status::AuthFailed("SESSION_SETUP refused: " + NtStatusName(h.status));
  }
  SECMODE_RETURN_IF_ERROR(NeedBody(m, 8, 9, "SESSION_SETUP"));
  const uint8_t* b = m.data() + kHeaderSize;
  SessionSetupResponse r;
  r.session_flags = Le16(b + 2);
  SECMODE_ASSIGN_OR_RETURN(
      r.token, BufferAt(m, Le16(b + 4), Le16(b + 6), kHeaderSize + 8, "SESSION_SETUP token"));
  return r;
}

void BuildTreeConnectRequest(const HeaderFields& h, const std::string& unc, Bytes* out) {
  out->assign(kHeaderSize + 8 + 2 * unc.size(), 0);
  WriteHeader(h, out->data());
  uint8_t* b = out->data() + kHeaderSize;
  PutLe16(b + 0, 9);
  PutLe16(b + 4, static_cast<uint16_t>(kHeaderSize + 8));
  PutLe16(b + 6, static_cast<uint16_t>(2 * unc.size()));
  PutUtf16Ascii(unc, b + 8);
}

Result<TreeConnectResponse> ParseTreeConnectResponse(ByteView m) {
  SECMODE_ASSIGN_OR_RETURN(const uint8_t* b,
                           SuccessBody(m, Command::kTreeConnect, "TREE_CONNECT", 16, 16));
  TreeConnectResponse r;
  r.share_type = b[2];
  r.share_flags = Le32(b + 4);
  r.maximal_access = Le32(b + 12);
  return r;
}

Result<CreateResponse> ParseCreateResponse(ByteView m) {
  SECMODE_ASSIGN_OR_RETURN(const uint8_t* b, SuccessBody(m, Command::kCreate, "CREATE", 88, 89));
  CreateResponse r;
  r.end_of_file = Le64(b + 48);
  r.file.persistent = Le64(b + 64);
  r.file.volatile_id = Le64(b + 72);
  return r;
}

void BuildEmptyRequest(const HeaderFields& h, Bytes* out) {
  out->assign(kHeaderSize + 4, 0);
  WriteHeader(h, out->data());
  PutLe16(out->data() + kHeaderSize, 4);
}

Result<uint32_t> ParseWriteResponse(ByteView m) {
  SECMODE_ASSIGN_OR_RETURN(const uint8_t* b, SuccessBody(m, Command::kWrite, "WRITE", 16, 17));
  return Le32(b + 4);
}

Result<ByteView> ParseQueryInfoResponse(ByteView m) {
  SECMODE_ASSIGN_OR_RETURN(const uint8_t* b,
                           SuccessBody(m, Command::kQueryInfo, "QUERY_INFO", 8, 9));
  return BufferAt(m, Le16(b + 2), Le32(b + 4), kHeaderSize + 8, "QUERY_INFO output");
}

Status CheckBody(ByteView m, uint16_t structure_size, const char* what) {
  SECMODE_ASSIGN_OR_RETURN(HeaderFields h, ParseHeader(m));
  if (!(h.flags & kFlagServerToRedir)) {
    return Status::Corrupt(std::string(what) + " response lacks the response flag");
  }
  if (h.status != kStatusSuccess) {
    return Status::Unavailable(std::string(what) + " refused: " + NtStatusName(h.status));
  }
  return NeedBody(m, structure_size & ~1u, structure_size, what);
}

std::string DescribeError(ByteView m) {
  auto h = ParseHeader(m);
  if (!h.ok()) return h.status().message();
  return NtStatusName(h->status) + " for command 0x" +
         std::to_string(static_cast<unsigned>(h->command));
}

}  // namespace secmode::smb
