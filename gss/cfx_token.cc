#include "gss/cfx_token.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace secmode::gss {

using common::ByteView;
using common::Status;

namespace {

void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void Put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}
uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint64_t Get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | p[i];
  return v;
}
std::string Hex16(uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", v);
  return buf;
}

}  // namespace

void WriteWrapHeader(uint8_t* p, uint8_t flags, uint16_t ec, uint16_t rrc, uint64_t seq) {
  Put16(p, kTokWrap);
  p[2] = flags;
  p[3] = 0xFF;
  Put16(p + 4, ec);
  Put16(p + 6, rrc);
  Put64(p + 8, seq);
}

void WriteMicHeader(uint8_t* p, uint8_t flags, uint64_t seq) {
  Put16(p, kTokMic);
  p[2] = flags;
  std::fill(p + 3, p + 8, 0xFF);
  Put64(p + 8, seq);
}

Status ParseCfxHeader(ByteView token, uint16_t tok_id, CfxHeader* out) {
  const char* kind = tok_id == kTokWrap ? "wrap" : "MIC";
  if (token.size() < kCfxHeaderSize) {
    return Status::Corrupt(std::string("truncated ") + kind +
                           " token: " + std::to_string(token.size()) + " bytes, need at least 16");
  }
  const uint8_t* p = token.data();
  out->tok_id = Get16(p);
  if (out->tok_id != tok_id) {
    return Status::Corrupt(std::string("wrong token ID 0x") + Hex16(out->tok_id) + ", expected 0x" +
                           Hex16(tok_id) + " (RFC 4121 " + kind + " token)");
  }
  out->flags = p[2];
  // RFC 4121 4.2.6: the filler is 0xFF; MIC tokens carry five filler bytes.
  size_t filler_end = tok_id == kTokWrap ? 4 : 8;
  for (size_t i = 3; i < filler_end; ++i) {
    if (p[i] != 0xFF) {
      return Status::Corrupt(std::string("bad filler byte 0x") + Hex16(p[i]).substr(2) +
                             " at offset " + std::to_string(i) + " of a " + kind + " token");
    }
  }
  out->ec = tok_id == kTokWrap ? Get16(p + 4) : 0;
  out->rrc = tok_id == kTokWrap ? Get16(p + 6) : 0;
  out->seq = Get64(p + 8);
  return Status::Ok();
}

void RotateLeft(common::MutableByteView data, size_t count) {
  if (data.empty()) return;
  count %= data.size();
  std::rotate(data.begin(), data.begin() + static_cast<long>(count), data.end());
}

}  // namespace secmode::gss
