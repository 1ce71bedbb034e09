// cfx_token: the RFC 4121 section 4.2.6 token header, shared by the native
// engine's wrap and MIC paths.
//
//   MIC  (4.2.6.1): 04 04 | flags | FF FF FF FF FF | SND_SEQ(8) | checksum
//   Wrap (4.2.6.2): 05 04 | flags | FF | EC(2) | RRC(2) | SND_SEQ(8) | body
// flags (4.2.2): 0x01 SentByAcceptor, 0x02 Sealed, 0x04 AcceptorSubkey;
// other bits are reserved and ignored on receipt.
// Thread safety: plain functions on caller-owned bytes.
#ifndef SECMODE_GSS_CFX_TOKEN_H_
#define SECMODE_GSS_CFX_TOKEN_H_

#include <cstdint>

#include "common/bytes.h"
#include "common/status.h"

namespace secmode::gss {

inline constexpr size_t kCfxHeaderSize = 16;
inline constexpr uint16_t kTokMic = 0x0404;
inline constexpr uint16_t kTokWrap = 0x0504;
inline constexpr uint8_t kFlagSentByAcceptor = 0x01;
inline constexpr uint8_t kFlagSealed = 0x02;
inline constexpr uint8_t kFlagAcceptorSubkey = 0x04;

// RFC 4121 section 2 key usages.
inline constexpr uint32_t kUsageAcceptorSeal = 22;
inline constexpr uint32_t kUsageAcceptorSign = 23;
inline constexpr uint32_t kUsageInitiatorSeal = 24;
inline constexpr uint32_t kUsageInitiatorSign = 25;

struct CfxHeader {
  uint16_t tok_id = 0;
  uint8_t flags = 0;
  uint16_t ec = 0;   // wrap only
  uint16_t rrc = 0;  // wrap only
  uint64_t seq = 0;
};

void WriteWrapHeader(uint8_t* p, uint8_t flags, uint16_t ec, uint16_t rrc, uint64_t seq);
void WriteMicHeader(uint8_t* p, uint8_t flags, uint64_t seq);

// Parses the 16-byte header of a token that must be `tok_id`. Errors (all
// kCorrupt) name the cause: truncation, a wrong or foreign token ID (e.g. an
// RFC 1964 token), a bad filler byte.
common::Status ParseCfxHeader(common::ByteView token, uint16_t tok_id, CfxHeader* out);

// Rotates `data` left by `count` bytes (RFC 4121 4.2.5 undoes a right
// rotation by RRC this way), in place.
void RotateLeft(common::MutableByteView data, size_t count);

}  // namespace secmode::gss

#endif  // SECMODE_GSS_CFX_TOKEN_H_
