#include "rpc/xdr.h"

#include <cstring>

namespace secmode::rpc {

using common::ByteView;
using common::Status;

void XdrEncoder::PutU32(uint32_t v) {
  // RFC 4506 4.1: big-endian.
  uint8_t b[4] = {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
                  static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
  out_->insert(out_->end(), b, b + 4);
}

void XdrEncoder::PutU64(uint64_t v) {
  // RFC 4506 4.5: hyper, most significant word first.
  PutU32(static_cast<uint32_t>(v >> 32));
  PutU32(static_cast<uint32_t>(v));
}

void XdrEncoder::PutFixedOpaque(ByteView data) {
  PutRaw(data);
  out_->insert(out_->end(), XdrPad(data.size()), 0);
}

void XdrEncoder::PutOpaque(ByteView data) {
  PutU32(static_cast<uint32_t>(data.size()));
  PutFixedOpaque(data);
}

void XdrEncoder::PutRaw(ByteView data) {
  if (!data.empty()) out_->insert(out_->end(), data.begin(), data.end());
}

size_t XdrEncoder::ReserveU32() {
  size_t at = out_->size();
  out_->insert(out_->end(), 4, 0);
  return at;
}

void XdrEncoder::PatchU32(size_t offset, uint32_t v) {
  uint8_t* p = out_->data() + offset;
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

Status XdrDecoder::Need(size_t n, const char* what) const {
  if (in_.size() - pos_ < n) {
    return Status::Corrupt(std::string("truncated '") + what + "': need " + std::to_string(n) +
                           " bytes at offset " + std::to_string(base_ + pos_) + ", have " +
                           std::to_string(in_.size() - pos_));
  }
  return Status::Ok();
}

Status XdrDecoder::GetU32(uint32_t* v, const char* what) {
  SECMODE_RETURN_IF_ERROR(Need(4, what));
  const uint8_t* p = in_.data() + pos_;
  *v = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
  pos_ += 4;
  return Status::Ok();
}

Status XdrDecoder::GetI32(int32_t* v, const char* what) {
  uint32_t u;
  SECMODE_RETURN_IF_ERROR(GetU32(&u, what));
  *v = static_cast<int32_t>(u);
  return Status::Ok();
}

Status XdrDecoder::GetU64(uint64_t* v, const char* what) {
  uint32_t hi, lo;
  SECMODE_RETURN_IF_ERROR(GetU32(&hi, what));
  SECMODE_RETURN_IF_ERROR(GetU32(&lo, what));
  *v = (uint64_t{hi} << 32) | lo;
  return Status::Ok();
}

Status XdrDecoder::GetBool(bool* v, const char* what) {
  uint32_t u;
  SECMODE_RETURN_IF_ERROR(GetU32(&u, what));
  // RFC 4506 4.4: a bool is an enum { FALSE = 0, TRUE = 1 }.
  if (u > 1) {
    return Status::Corrupt(std::string("bad bool '") + what + "': " + std::to_string(u) +
                           " at offset " + std::to_string(base_ + pos_ - 4));
  }
  *v = u == 1;
  return Status::Ok();
}

Status XdrDecoder::GetFixedOpaque(size_t n, ByteView* v, const char* what) {
  size_t padded = n + XdrPad(n);
  if (padded < n) return Status::Corrupt(std::string("opaque '") + what + "' length overflows");
  SECMODE_RETURN_IF_ERROR(Need(padded, what));
  *v = in_.subspan(pos_, n);
  pos_ += padded;
  return Status::Ok();
}

Status XdrDecoder::GetOpaque(ByteView* v, size_t max, const char* what) {
  uint32_t n;
  SECMODE_RETURN_IF_ERROR(GetU32(&n, what));
  if (n > max) {
    return Status::Corrupt(std::string("opaque '") + what + "' of " + std::to_string(n) +
                           " bytes exceeds its limit of " + std::to_string(max));
  }
  return GetFixedOpaque(n, v, what);
}

Status XdrDecoder::GetString(std::string* v, size_t max, const char* what) {
  ByteView b;
  SECMODE_RETURN_IF_ERROR(GetOpaque(&b, max, what));
  v->assign(reinterpret_cast<const char*>(b.data()), b.size());
  return Status::Ok();
}

Status XdrDecoder::Skip(size_t n, const char* what) {
  SECMODE_RETURN_IF_ERROR(Need(n, what));
  pos_ += n;
  return Status::Ok();
}

Status XdrDecoder::ExpectEnd(const char* what) const {
  if (pos_ != in_.size()) {
    return Status::Corrupt(std::to_string(in_.size() - pos_) + " trailing bytes after '" + what +
                           "'");
  }
  return Status::Ok();
}

}  // namespace secmode::rpc
