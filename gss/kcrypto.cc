#include "gss/kcrypto.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "common/openssl_error.h"
#include "common/openssl_handles.h"

namespace secmode::gss {

using common::OpenSslError;

using common::Bytes;
using common::ByteView;
using common::HashKind;
using common::HashName;
using common::Result;
using common::SecretBytes;
using common::Status;

namespace {

// Work in pieces this large so HMAC and AES touch the same bytes while they
// are still in L1/L2 (one pass over memory instead of two).
constexpr size_t kChunk = 16 * 1024;

// AES-ECB single-block encryption, for RFC 3961 DR (a one-block CBC-CTS
// encryption with a zero IV is exactly one AES block encryption).
Status EcbEncryptBlocks(const EnctypeProfile& p, ByteView key, const uint8_t* in, size_t n,
                        uint8_t* out) {
  const EVP_CIPHER* ecb = p.ecb();
  common::OsslPtr<EVP_CIPHER_CTX> ctx(EVP_CIPHER_CTX_new());
  if (!ctx) return OpenSslError("EVP_CIPHER_CTX_new");
  int outl = 0;
  bool ok = EVP_EncryptInit_ex(ctx.get(), ecb, nullptr, key.data(), nullptr) == 1 &&
            EVP_CIPHER_CTX_set_padding(ctx.get(), 0) == 1 &&
            EVP_EncryptUpdate(ctx.get(), out, &outl, in, static_cast<int>(n)) == 1 &&
            static_cast<size_t>(outl) == n;
  if (!ok) return OpenSslError("AES-ECB block encryption");
  return Status::Ok();
}

// One-shot HMAC through EVP_MAC (key derivation only, not per message).
Status EvpHmac(HashKind h, ByteView key, ByteView data, uint8_t* out, size_t* out_len) {
  common::OsslPtr<EVP_MAC> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!mac) return OpenSslError("EVP_MAC_fetch(HMAC)");
  common::OsslPtr<EVP_MAC_CTX> ctx(EVP_MAC_CTX_new(mac.get()));
  if (!ctx) return OpenSslError("EVP_MAC_CTX_new");
  OSSL_PARAM params[2];
  params[0] =
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>(HashName(h)), 0);
  params[1] = OSSL_PARAM_construct_end();
  size_t len = 0;
  bool ok = EVP_MAC_init(ctx.get(), key.data(), key.size(), params) == 1 &&
            EVP_MAC_update(ctx.get(), data.data(), data.size()) == 1 &&
            EVP_MAC_final(ctx.get(), out, &len, EVP_MAX_MD_SIZE) == 1;
  if (!ok) return OpenSslError(std::string("HMAC-") + HashName(h));
  *out_len = len;
  return Status::Ok();
}

// RFC 8009 section 3: KDF-HMAC-SHA2(key, label, k) = first k bits of
// HMAC(key, 00000001 | label | 00 | k as 32-bit big-endian).
Result<SecretBytes> Kdf8009(HashKind h, ByteView key, ByteView label, size_t k_bits) {
  Bytes in = {0, 0, 0, 1};
  in.insert(in.end(), label.begin(), label.end());
  in.push_back(0);
  for (int shift = 24; shift >= 0; shift -= 8) in.push_back(static_cast<uint8_t>(k_bits >> shift));
  SecretBytes out(size_t{EVP_MAX_MD_SIZE});
  size_t len = 0;
  SECMODE_RETURN_IF_ERROR(EvpHmac(h, key, in, out.data(), &len));
  if (k_bits / 8 > len) return Status::Internal("KDF-HMAC-SHA2 asked for more than one block");
  out.Resize(k_bits / 8);  // the rest of the block is wiped
  return out;
}

}  // namespace

Result<EnctypeProfile> ProfileFor(int32_t enctype) {
  const EnctypeProfile* p = FindEnctype(enctype);
  if (p != nullptr && p->cbc != nullptr && p->ecb != nullptr) return *p;
  std::string known;
  for (const EnctypeProfile& row : kEnctypeProfiles) {
    if (row.cbc == nullptr) continue;
    if (!known.empty()) known += ", ";
    known += std::to_string(row.enctype);
  }
  return Status::InvalidArgument("unsupported enctype " + std::to_string(enctype) +
                                 " (the native engine knows " + known + ")");
}

// ---------------------------------------------------------------- n-fold

// RFC 3961 section 5.1: concatenate copies of the input, each rotated right
// by 13 bits more than the last, up to lcm(in, out) bits, and add the
// out-sized pieces with ones'-complement (end-around carry) addition.
Bytes NFold(ByteView in, size_t out_bits) {
  const size_t in_bytes = in.size(), out_bytes = out_bits / 8;
  if (in_bytes == 0 || out_bytes == 0) return Bytes(out_bytes, 0);
  const size_t in_bits = in_bytes * 8;
  const size_t lcm = std::lcm(in_bytes, out_bytes);
  auto bit_of = [&](size_t k) {  // bit k of the input, bit 0 = MSB of byte 0
    return (in[k / 8] >> (7 - k % 8)) & 1;
  };
  Bytes acc(out_bytes, 0);
  Bytes piece(out_bytes, 0);
  for (size_t chunk = 0; chunk < lcm / out_bytes; ++chunk) {
    for (size_t j = 0; j < out_bytes; ++j) {
      uint8_t byte = 0;
      for (size_t b = 0; b < 8; ++b) {
        size_t pos = (chunk * out_bytes + j) * 8 + b;  // bit in the long string
        size_t copy = pos / in_bits, within = pos % in_bits;
        size_t rot = (13 * copy) % in_bits;
        size_t src = (within + in_bits - rot) % in_bits;  // rotate right by rot
        byte = static_cast<uint8_t>((byte << 1) | bit_of(src));
      }
      piece[j] = byte;
    }
    unsigned carry = 0;
    for (size_t j = out_bytes; j-- > 0;) {
      carry += acc[j] + piece[j];
      acc[j] = static_cast<uint8_t>(carry);
      carry >>= 8;
    }
    while (carry != 0) {  // end-around carry
      for (size_t j = out_bytes; j-- > 0 && carry != 0;) {
        carry += acc[j];
        acc[j] = static_cast<uint8_t>(carry);
        carry >>= 8;
      }
    }
  }
  return acc;
}

// ---------------------------------------------------------------- keys

Result<SecretBytes> DeriveKeyDk(const EnctypeProfile& p, ByteView base_key, ByteView constant) {
  if (p.rfc8009)
    return Status::InvalidArgument("DK is the RFC 3961 derivation; enctype uses RFC 8009");
  if (base_key.size() != p.key_size) {
    return Status::InvalidArgument("base key is " + std::to_string(base_key.size()) +
                                   " bytes, enctype " + std::to_string(p.enctype) + " needs " +
                                   std::to_string(p.key_size));
  }
  // DR: K1 = E(key, n-fold(constant)), K2 = E(key, K1), ... until key size;
  // random-to-key is the identity for AES (RFC 3962 section 6). `block`
  // holds each Ki in turn (encrypted in place).
  SecretBytes block(constant.size() == kAesBlock ? constant : NFold(constant, kAesBlock * 8));
  SecretBytes out(p.key_size);
  for (size_t off = 0; off < p.key_size; off += kAesBlock) {
    SECMODE_RETURN_IF_ERROR(EcbEncryptBlocks(p, base_key, block.data(), kAesBlock, block.data()));
    std::memcpy(out.data() + off, block.data(), std::min(kAesBlock, p.key_size - off));
  }
  return out;
}

Result<SecretBytes> DeriveUsageKey(const EnctypeProfile& p, ByteView base_key, uint32_t usage,
                                   uint8_t kind) {
  if (kind != 0x99 && kind != 0xAA && kind != 0x55) {
    return Status::InvalidArgument("key derivation kind must be 0x99, 0xAA or 0x55");
  }
  if (base_key.size() != p.key_size) {
    return Status::InvalidArgument("base key is " + std::to_string(base_key.size()) +
                                   " bytes, enctype " + std::to_string(p.enctype) + " needs " +
                                   std::to_string(p.key_size));
  }
  const uint8_t constant[5] = {static_cast<uint8_t>(usage >> 24), static_cast<uint8_t>(usage >> 16),
                               static_cast<uint8_t>(usage >> 8), static_cast<uint8_t>(usage), kind};
  if (!p.rfc8009) return DeriveKeyDk(p, base_key, ByteView(constant, 5));
  // RFC 8009 section 5: Ke has the cipher key size, Kc and Ki the MAC
  // output size (128 bits for 19, 192 for 20).
  size_t bits = kind == 0xAA ? p.key_size * 8 : p.checksum_size * 8;
  return Kdf8009(p.hash, base_key, ByteView(constant, 5), bits);
}

Result<SecretBytes> StringToKey(const EnctypeProfile& p, std::string_view password, ByteView salt,
                                uint32_t iterations) {
  Bytes saltp;
  // PBKDF2 with the profile's hash: SHA-1 for RFC 3962, SHA-256/384 for 8009.
  const EVP_MD* md = EVP_get_digestbyname(HashName(p.hash));
  if (md == nullptr) return OpenSslError(std::string("EVP_get_digestbyname ") + HashName(p.hash));
  if (p.rfc8009) {
    // RFC 8009 section 4: saltp = enctype-name | 0x00 | salt.
    const std::string name = p.name;
    saltp.assign(name.begin(), name.end());
    saltp.push_back(0);
  }
  saltp.insert(saltp.end(), salt.begin(), salt.end());
  SecretBytes tkey(p.key_size);
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), saltp.data(),
                        static_cast<int>(saltp.size()), static_cast<int>(iterations), md,
                        static_cast<int>(tkey.size()), tkey.data()) != 1) {
    return OpenSslError("PKCS5_PBKDF2_HMAC");
  }
  const std::string_view kerberos = "kerberos";
  ByteView label(reinterpret_cast<const uint8_t*>(kerberos.data()), kerberos.size());
  if (p.rfc8009) return Kdf8009(p.hash, tkey, label, p.key_size * 8);
  return DeriveKeyDk(p, tkey, label);
}

// ---------------------------------------------------------------- UsageKeys

Status UsageKeys::Init(const EnctypeProfile& profile, ByteView base_key, uint32_t usage) {
  SECMODE_ASSIGN_OR_RETURN(SecretBytes ke, DeriveUsageKey(profile, base_key, usage, 0xAA));
  SECMODE_ASSIGN_OR_RETURN(SecretBytes ki, DeriveUsageKey(profile, base_key, usage, 0x55));
  SECMODE_ASSIGN_OR_RETURN(SecretBytes kc, DeriveUsageKey(profile, base_key, usage, 0x99));
  return InitWithKeys(profile, ke, ki, kc);
}

Status UsageKeys::InitWithKeys(const EnctypeProfile& profile, ByteView ke, ByteView ki,
                               ByteView kc) {
  if (ke.size() != profile.key_size) {
    return Status::InvalidArgument("Ke is " + std::to_string(ke.size()) + " bytes, enctype " +
                                   std::to_string(profile.enctype) + " needs " +
                                   std::to_string(profile.key_size));
  }
  profile_ = profile;
  if (!enc_) enc_.reset(EVP_CIPHER_CTX_new());
  if (!dec_) dec_.reset(EVP_CIPHER_CTX_new());
  if (!ecb_dec_) ecb_dec_.reset(EVP_CIPHER_CTX_new());
  if (!enc_ || !dec_ || !ecb_dec_) return OpenSslError("EVP_CIPHER_CTX_new");
  const uint8_t zero_iv[kAesBlock] = {};
  const EVP_CIPHER* ecb = profile.ecb();
  bool ok = EVP_EncryptInit_ex(enc_.get(), profile.cbc(), nullptr, ke.data(), zero_iv) == 1 &&
            EVP_CIPHER_CTX_set_padding(enc_.get(), 0) == 1 &&
            EVP_DecryptInit_ex(dec_.get(), profile.cbc(), nullptr, ke.data(), zero_iv) == 1 &&
            EVP_CIPHER_CTX_set_padding(dec_.get(), 0) == 1 &&
            EVP_DecryptInit_ex(ecb_dec_.get(), ecb, nullptr, ke.data(), nullptr) == 1 &&
            EVP_CIPHER_CTX_set_padding(ecb_dec_.get(), 0) == 1;
  if (!ok) return OpenSslError("AES-CBC key setup");
  std::memset(enc_chain_, 0, kAesBlock);
  std::memset(dec_chain_, 0, kAesBlock);
  SECMODE_RETURN_IF_ERROR(ki_.Init(profile.hash, ki));
  SECMODE_RETURN_IF_ERROR(kc_.Init(profile.hash, kc));
  return Status::Ok();
}

Status UsageKeys::CbcUpdate(EVP_CIPHER_CTX* ctx, const uint8_t* in, size_t n, uint8_t* out,
                            const char* what) {
  if (n == 0) return Status::Ok();
  int outl = 0;
  if (EVP_CipherUpdate(ctx, out, &outl, in, static_cast<int>(n)) != 1 ||
      static_cast<size_t>(outl) != n) {
    return OpenSslError(what);
  }
  return Status::Ok();
}

Status UsageKeys::Rechain() {
  const uint8_t zero_iv[kAesBlock] = {};
  std::memset(enc_chain_, 0, kAesBlock);
  std::memset(dec_chain_, 0, kAesBlock);
  if (EVP_EncryptInit_ex(enc_.get(), nullptr, nullptr, nullptr, zero_iv) != 1 ||
      EVP_DecryptInit_ex(dec_.get(), nullptr, nullptr, nullptr, zero_iv) != 1) {
    return OpenSslError("AES-CBC IV reset");
  }
  return Status::Ok();
}

namespace {

void XorBlock(uint8_t* a, const uint8_t* b) {
  for (size_t i = 0; i < kAesBlock; ++i) a[i] ^= b[i];
}

}  // namespace

// RFC 3962 section 5 / RFC 8009 section 5 encryption, in place: CBC with a
// zero IV over confounder | plaintext zero-padded to whole blocks, then
// CTS: the last two ciphertext blocks swapped and the padding's share of
// the (now last) one dropped.
Status UsageKeys::EncryptInPlace(uint8_t* buf, size_t n, size_t capacity, uint8_t* tag) {
  if (!enc_) return Status::Internal("UsageKeys used before Init");
  if (n < kAesBlock) {
    return Status::InvalidArgument("CTS input is " + std::to_string(n) + " bytes, need >= 16");
  }
  const size_t blocks = (n + kAesBlock - 1) / kAesBlock;
  const size_t total = blocks * kAesBlock;
  if (capacity < total || n > (size_t{1} << 31) - 64) {
    return Status::InvalidArgument("encryption buffer too small or message too large");
  }
  std::memset(buf + n, 0, total - n);
  const bool mac_plain = !profile_.rfc8009;  // 3962: HMAC(Ki, plaintext)
  const uint8_t zero_iv[kAesBlock] = {};
  ki_.Start();
  if (!mac_plain) ki_.Update(zero_iv, kAesBlock);  // 8009: HMAC(Ki, IV | C)
  // The blocks before the last two are final once encrypted; the last two
  // are swapped afterwards.
  const size_t head = blocks >= 2 ? (blocks - 2) * kAesBlock : 0;
  // In pieces of kChunk so HMAC and AES touch the same bytes while they are
  // in cache; a small message is one piece, one CBC call.
  for (size_t off = 0; off < total; off += kChunk) {
    const size_t len = std::min(kChunk, total - off);
    if (mac_plain) ki_.Update(buf + off, std::min(len, n - off));
    if (off == 0) XorBlock(buf, enc_chain_);  // the chain starts as from a zero IV
    Status st = CbcUpdate(enc_.get(), buf + off, len, buf + off, "AES-CBC encrypt");
    if (!st.ok()) {
      (void)Rechain();
      return st;
    }
    if (!mac_plain && off < head) ki_.Update(buf + off, std::min(len, head - off));
  }
  std::memcpy(enc_chain_, buf + total - kAesBlock, kAesBlock);
  uint8_t* tail = buf + head;
  const size_t tail_len = n - head;  // 16 (one block) or 17..32
  if (blocks >= 2) {
    // C(m) = E(padded P(m)) first, then the leading d bytes of E(P(m-1)).
    uint8_t prev[kAesBlock];
    std::memcpy(prev, tail, kAesBlock);
    std::memcpy(tail, tail + kAesBlock, kAesBlock);
    std::memcpy(tail + kAesBlock, prev, tail_len - kAesBlock);
  }
  if (!mac_plain) ki_.Update(tail, tail_len);
  uint8_t full[SHA384_DIGEST_LENGTH];
  ki_.Finish(full);
  std::memcpy(tag, full, profile_.checksum_size);
  return Status::Ok();
}

Status UsageKeys::Decrypt(ByteView in, uint8_t* confounder, uint8_t* rest) {
  if (!dec_) return Status::Internal("UsageKeys used before Init");
  const size_t h = profile_.checksum_size;
  if (in.size() < kAesBlock + h) {
    return Status::Corrupt("ciphertext is " + std::to_string(in.size()) + " bytes, need at least " +
                           std::to_string(kAesBlock + h) + " (confounder and checksum)");
  }
  if (in.size() > (size_t{1} << 31)) return Status::InvalidArgument("ciphertext too large");
  const size_t n = in.size() - h;
  const uint8_t* c = in.data();
  const uint8_t* tag = c + n;
  const size_t blocks = (n + kAesBlock - 1) / kAesBlock;
  const bool mac_plain = !profile_.rfc8009;
  const uint8_t zero_iv[kAesBlock] = {};
  // Plaintext byte i goes to confounder[i] for i < 16, else rest[i - 16].
  auto out_at = [&](size_t i) { return i < kAesBlock ? confounder + i : rest + (i - kAesBlock); };
  auto failed = [&](Status st) {
    (void)Rechain();
    return st;
  };

  ki_.Start();
  if (!mac_plain) {
    ki_.Update(zero_iv, kAesBlock);
    ki_.Update(c, n);
  }
  // CTS: the ciphertext's last two blocks are C(m) (whole) and the first
  // d bytes of E(P(m-1)). X = D(C(m)) = padded P(m) xor E(P(m-1)) gives the
  // rest of E(P(m-1)), which CBC-decrypts after C(m-2) to P(m-1); and
  // P(m) = X[0..d) xor the d bytes. So the CBC input is the head's blocks
  // then e = E(P(m-1)): blocks - 1 of them (one block without stealing).
  const size_t head = blocks >= 2 ? (blocks - 2) * kAesBlock : 0;
  const size_t d = n - (blocks - 1) * kAesBlock;
  uint8_t e[kAesBlock], pm[kAesBlock];
  if (blocks >= 2) {
    uint8_t x[kAesBlock];
    SECMODE_RETURN_IF_ERROR(CbcUpdate(ecb_dec_.get(), c + head, kAesBlock, x, "AES-ECB decrypt"));
    const uint8_t* cm = c + head + kAesBlock;
    std::memcpy(e, cm, d);
    std::memcpy(e + d, x + d, kAesBlock - d);
    for (size_t i = 0; i < d; ++i) pm[i] = x[i] ^ cm[i];
  } else {
    std::memcpy(e, c, kAesBlock);  // one block: no stealing
  }
  const size_t cbc_len = blocks >= 2 ? head + kAesBlock : kAesBlock;  // CBC input bytes
  const uint8_t* const last_in = e;                                   // the CBC input's last block
  if (n <= kSmallMessage) {
    // One CBC call: the head then e, contiguous, into small_out_.
    std::memcpy(small_in_, c, head);
    std::memcpy(small_in_ + head, e, kAesBlock);
    Status st = CbcUpdate(dec_.get(), small_in_, cbc_len, small_out_, "AES-CBC decrypt");
    if (!st.ok()) return failed(st);
    XorBlock(small_out_, dec_chain_);  // as from a zero IV
    if (blocks >= 2) std::memcpy(small_out_ + cbc_len, pm, d);
    if (mac_plain) ki_.Update(small_out_, n);
    std::memcpy(confounder, small_out_, kAesBlock);
    if (n > kAesBlock)
      std::memcpy(rest, small_out_ + kAesBlock, n - kAesBlock);  // rest may be null
  } else {
    // Larger than kSmallMessage, so head > 0: the first block to the
    // confounder, the rest of the head in chunks, then e.
    Status st = CbcUpdate(dec_.get(), c, kAesBlock, confounder, "AES-CBC decrypt");
    if (!st.ok()) return failed(st);
    XorBlock(confounder, dec_chain_);
    if (mac_plain) ki_.Update(confounder, kAesBlock);
    for (size_t off = kAesBlock; off < head; off += kChunk) {
      const size_t len = std::min(kChunk, head - off);
      uint8_t* out = out_at(off);
      st = CbcUpdate(dec_.get(), c + off, len, out, "AES-CBC decrypt");
      if (!st.ok()) return failed(st);
      if (mac_plain) ki_.Update(out, len);
    }
    uint8_t last[2 * kAesBlock];  // P(m-1) | P(m), contiguous for the MAC
    st = CbcUpdate(dec_.get(), e, kAesBlock, last, "AES-CBC decrypt");
    if (!st.ok()) return failed(st);
    std::memcpy(last + kAesBlock, pm, d);
    if (mac_plain) ki_.Update(last, kAesBlock + d);
    for (size_t i = 0; i < kAesBlock + d; ++i) *out_at(head + i) = last[i];
  }
  std::memcpy(dec_chain_, last_in, kAesBlock);
  uint8_t full[SHA384_DIGEST_LENGTH];
  ki_.Finish(full);
  if (CRYPTO_memcmp(full, tag, h) != 0) {
    // What the failed message decrypted to must not stay readable here.
    if (n <= kSmallMessage) OPENSSL_cleanse(small_out_, n);
    return Status::AuthFailed("bad checksum: HMAC-" + std::string(HashName(profile_.hash)) +
                              " over the " + (mac_plain ? "plaintext" : "ciphertext") +
                              " does not match (wrong key, usage or altered token)");
  }
  return Status::Ok();
}

void UsageKeys::Checksum(ByteView a, ByteView b, uint8_t* out) {
  uint8_t full[SHA384_DIGEST_LENGTH];
  kc_.Start();
  kc_.Update(a.data(), a.size());
  kc_.Update(b.data(), b.size());
  kc_.Finish(full);
  std::memcpy(out, full, profile_.checksum_size);
}

}  // namespace secmode::gss
