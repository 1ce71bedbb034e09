// XDR (RFC 4506) encoding and decoding of the types ONC RPC uses: unsigned
// and signed 32/64-bit integers, bool, enum, fixed and variable-length opaque
// (padded to a multiple of 4 bytes, RFC 4506 sections 4.9 and 4.10) and
// strings (section 4.11).
//
// XdrEncoder appends to a caller-owned Bytes. XdrDecoder reads from a
// borrowed view; every Get* fails with a Status naming the field and the
// offset ("truncated opaque 'gss_token': need 100 bytes at offset 24, have
// 12"), so decoders of bigger structures just propagate.
// Thread safety: plain values, one thread at a time.
#ifndef SECMODE_RPC_XDR_H_
#define SECMODE_RPC_XDR_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/status.h"

namespace secmode::rpc {

inline size_t XdrPad(size_t n) { return (4 - (n & 3)) & 3; }

class XdrEncoder {
 public:
  explicit XdrEncoder(common::Bytes* out) : out_(out) {}
  void PutU32(uint32_t v);
  void PutI32(int32_t v) { PutU32(static_cast<uint32_t>(v)); }
  void PutU64(uint64_t v);
  void PutBool(bool v) { PutU32(v ? 1 : 0); }
  // RFC 4506 4.9: fixed-length opaque, padded.
  void PutFixedOpaque(common::ByteView data);
  // RFC 4506 4.10: length, bytes, padding.
  void PutOpaque(common::ByteView data);
  void PutString(std::string_view s) { PutOpaque(common::AsBytes(s)); }
  // Raw bytes with no length and no padding (an already-encoded body).
  void PutRaw(common::ByteView data);
  // Reserves a 4-byte slot and returns its offset, for lengths known later.
  size_t ReserveU32();
  void PatchU32(size_t offset, uint32_t v);
  size_t size() const { return out_->size(); }
  common::Bytes* out() { return out_; }

 private:
  common::Bytes* out_;
};

class XdrDecoder {
 public:
  explicit XdrDecoder(common::ByteView in, size_t base_offset = 0) : in_(in), base_(base_offset) {}
  common::Status GetU32(uint32_t* v, const char* what);
  common::Status GetI32(int32_t* v, const char* what);
  common::Status GetU64(uint64_t* v, const char* what);
  common::Status GetBool(bool* v, const char* what);
  common::Status GetFixedOpaque(size_t n, common::ByteView* v, const char* what);
  // Variable-length opaque of at most `max` bytes (view into the input).
  common::Status GetOpaque(common::ByteView* v, size_t max, const char* what);
  common::Status GetString(std::string* v, size_t max, const char* what);
  common::Status Skip(size_t n, const char* what);
  // Everything not yet read.
  common::ByteView Rest() const { return in_.subspan(pos_); }
  size_t position() const { return pos_; }
  size_t remaining() const { return in_.size() - pos_; }
  // Fails if bytes are left over ("3 trailing bytes after 'GETATTR args'").
  common::Status ExpectEnd(const char* what) const;

 private:
  common::Status Need(size_t n, const char* what) const;
  common::ByteView in_;
  size_t pos_ = 0;
  size_t base_;
};

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_XDR_H_
