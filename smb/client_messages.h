// The SMB2/3 messages a client exchanges with a real server (MS-SMB2 2.2):
// request builders and the parsers of the server's responses, kept apart
// from the connection (client.h) so each parser can be fuzzed on its own
// (tests/fuzz/smb_parsers_fuzz.cc).
//
// Builders write whole messages (64-byte header included) into a caller's
// buffer; offsets in the messages count from the header's first byte, as
// MS-SMB2 says. Parsers take one whole SMB2 message (no NetBIOS header, no
// transform), check every length and offset against it, and name the first
// thing wrong. All functions are thread-safe.
#ifndef SECMODE_SMB_CLIENT_MESSAGES_H_
#define SECMODE_SMB_CLIENT_MESSAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/status.h"
#include "smb/kdf.h"
#include "smb/message.h"

namespace secmode::smb {

// NTSTATUS values the client acts on (MS-ERREF 2.3).
inline constexpr uint32_t kStatusSuccess = 0x00000000;
inline constexpr uint32_t kStatusPending = 0x00000103;
inline constexpr uint32_t kStatusMoreProcessingRequired = 0xC0000016;
inline constexpr uint32_t kStatusAccessDenied = 0xC0000022;
inline constexpr uint32_t kStatusEndOfFile = 0xC0000011;
inline constexpr uint32_t kStatusInternalError = 0xC00000E5;
// "STATUS_ACCESS_DENIED (0xc0000022)" for the few the client names, else
// "NTSTATUS 0x........".
std::string NtStatusName(uint32_t status);

inline constexpr uint16_t kDialect210 = 0x0210;
inline constexpr uint16_t kDialect311 = 0x0311;
// "2.1", "3.0", "3.0.2", "3.1.1" (MS-SMB2's names); "0x...." otherwise.
std::string DialectName(uint16_t dialect);

// SecurityMode (2.2.3).
inline constexpr uint16_t kSigningEnabled = 0x0001;
inline constexpr uint16_t kSigningRequired = 0x0002;
// Capabilities (2.2.3).
inline constexpr uint32_t kCapLargeMtu = 0x00000004;
inline constexpr uint32_t kCapMultiChannel = 0x00000008;
inline constexpr uint32_t kCapEncryption = 0x00000040;
// SESSION_SETUP request Flags (2.2.5): bind a new channel to the session.
inline constexpr uint8_t kSessionSetupBinding = 0x01;
// SessionFlags (2.2.6) and ShareFlags (2.2.10).
inline constexpr uint16_t kSessionFlagEncryptData = 0x0004;
inline constexpr uint32_t kShareFlagEncryptData = 0x00008000;

struct NegotiateRequest {
  std::vector<uint16_t> dialects;  // e.g. {0x0311}
  uint16_t security_mode = kSigningEnabled;
  uint32_t capabilities = kCapLargeMtu | kCapMultiChannel;
  uint8_t client_guid[16] = {};
  // SMB 3.1.1 negotiate contexts (only when 0x0311 is offered): the
  // preauth-integrity context (SHA-512, this salt) always; an encryption
  // and a signing capabilities context when not empty.
  uint8_t salt[32] = {};
  std::vector<CipherId> ciphers;
  std::vector<uint16_t> signing_algorithms;
};
// `h`: the header (command NEGOTIATE, CreditCharge 0).
void BuildNegotiateRequest(const NegotiateRequest& r, const HeaderFields& h, common::Bytes* out);

struct NegotiateResponse {
  uint16_t security_mode = 0;
  uint16_t dialect = 0;
  uint32_t capabilities = 0;
  uint32_t max_transact_size = 0, max_read_size = 0, max_write_size = 0;
  common::Bytes security_buffer;  // the server's SPNEGO hint (not used)
  // From the 3.1.1 contexts: 0 / empty when absent.
  uint16_t preauth_hash_algorithm = 0;
  uint16_t cipher = 0;  // 0: the server chose none
  bool has_signing_context = false;
  uint16_t signing_algorithm = 0;
};
common::Result<NegotiateResponse> ParseNegotiateResponse(common::ByteView message);

// SESSION_SETUP request (2.2.5) carrying a GSS token. `security_mode` as
// in NEGOTIATE; `flags` 0x01 binds a new channel to `session_id` (header).
void BuildSessionSetupRequest(const HeaderFields& h, uint8_t flags, uint8_t security_mode,
                              common::ByteView token, common::Bytes* out);
struct SessionSetupResponse {
  uint16_t session_flags = 0;
  common::ByteView token;  // points into the message
};
common::Result<SessionSetupResponse> ParseSessionSetupResponse(common::ByteView message);

// TREE_CONNECT (2.2.9) of `unc` ("\\server\share", sent as UTF-16LE).
void BuildTreeConnectRequest(const HeaderFields& h, const std::string& unc, common::Bytes* out);
struct TreeConnectResponse {
  uint8_t share_type = 0;
  uint32_t share_flags = 0;
  uint32_t maximal_access = 0;
};
common::Result<TreeConnectResponse> ParseTreeConnectResponse(common::ByteView message);

struct CreateResponse {
  FileId file;
  uint64_t end_of_file = 0;
};
common::Result<CreateResponse> ParseCreateResponse(common::ByteView message);

// LOGOFF (2.2.7) and TREE_DISCONNECT (2.2.11): StructureSize 4.
void BuildEmptyRequest(const HeaderFields& h, common::Bytes* out);

// WRITE response (2.2.22): the count written.
common::Result<uint32_t> ParseWriteResponse(common::ByteView message);
// QUERY_INFO response (2.2.38): the output buffer (into the message).
common::Result<common::ByteView> ParseQueryInfoResponse(common::ByteView message);
// A body of StructureSize `structure_size` is there (CLOSE 60, LOGOFF 4 ...).
common::Status CheckBody(common::ByteView message, uint16_t structure_size, const char* what);

// The server's answer to an error (2.2.2): "STATUS_... for <command>".
std::string DescribeError(common::ByteView message);

}  // namespace secmode::smb

#endif  // SECMODE_SMB_CLIENT_MESSAGES_H_
