// SMB3 encryption: the 52-byte TRANSFORM_HEADER (MS-SMB2 2.2.41), its
// per-key nonce sequence, and the AEAD that seals an SMB2 message into it
// (3.1.4.3) and opens it again (3.2.5.1.1.1 / 3.3.5.2.1.1).
//
//   0  ProtocolId 0xFD 'S' 'M' 'B'   4  Signature (AEAD tag, 16)
//  20  Nonce (16: 11 used by CCM, 12 by GCM, rest zero)
//  36  OriginalMessageSize (4)   40  Reserved (2)   42  Flags = 0x0001 (2)
//  44  SessionId (8)             52  ciphertext of the SMB2 message
// AAD = bytes 20..51 (the header without ProtocolId and Signature).
//
// Keys and EVP contexts are set up once per Encryptor/Decryptor (one cipher
// fetch, one key schedule); each message only sets a new IV.
//
// Thread safety: an Encryptor or Decryptor is used by one thread at a time.
// Several may share one key (multichannel) as long as each Encryptor's
// NonceSequence has its own channel id.
#ifndef SECMODE_SMB_TRANSFORM_H_
#define SECMODE_SMB_TRANSFORM_H_

#include <openssl/evp.h>

#include <cstdint>
#include <memory>

#include "common/bytes.h"
#include "common/openssl_handles.h"
#include "common/status.h"
#include "smb/kdf.h"

namespace secmode::smb {

inline constexpr size_t kTransformHeaderSize = 52;
inline constexpr size_t kTransformAadOffset = 20;
inline constexpr size_t kTransformAadSize = 32;
inline constexpr uint16_t kTransformFlagEncrypted = 0x0001;

inline size_t NonceBytes(CipherId c) {
  return c == CipherId::kAes128Ccm || c == CipherId::kAes256Ccm ? 11 : 12;
}

struct TransformHeader {
  uint8_t signature[16] = {};
  uint8_t nonce[16] = {};
  uint32_t original_message_size = 0;
  uint16_t flags = 0;
  uint64_t session_id = 0;
};

// Parses and checks the header of one whole transform (`wire` is exactly
// one transformed message, as NetBIOS framing delivers it): ProtocolId,
// Flags == 0x0001, and OriginalMessageSize equal to the bytes that follow.
// Every error names the field and the values.
common::Result<TransformHeader> ParseTransformHeader(common::ByteView wire);
void WriteTransformHeader(const TransformHeader& h, uint8_t out[kTransformHeaderSize]);

// Unique nonces for one key and one sender. WHY a counter and not random
// nonces: with 96-bit random GCM nonces, NIST SP 800-38D limits a key to
// 2^32 messages because random nonces start to collide (birthday bound) and
// a single repeated nonce under GCM leaks the GHASH key and the XOR of two
// plaintexts; CCM's 88-bit nonce is worse. A counter makes uniqueness
// certain, not probable, and costs nothing.
//
// Layout: bytes 0..7 = counter (little-endian), then the channel id in the
// remaining nonce bytes (4 for GCM, 3 for CCM), so channels that share a
// key (multichannel) draw from disjoint nonce spaces. Once `last` has been
// used, Next() refuses with kExhausted: the key must be replaced (a new
// session) before anything else is encrypted with it.
class NonceSequence {
 public:
  // Checks that channel_id fits the cipher's channel bytes and first <= last.
  static common::Result<NonceSequence> Create(CipherId cipher, uint32_t channel_id,
                                              uint64_t first = 0, uint64_t last = UINT64_MAX);
  // Writes the next nonce into nonce[0..15] (unused bytes zero).
  common::Status Next(uint8_t nonce[16]);
  uint64_t next_counter() const { return next_; }
  bool exhausted() const { return exhausted_; }

 private:
  NonceSequence() = default;
  CipherId cipher_ = CipherId::kAes128Gcm;
  uint32_t channel_ = 0;
  uint64_t next_ = 0, last_ = 0;
  bool exhausted_ = false;
};

class Encryptor {
 public:
  static common::Result<std::unique_ptr<Encryptor>> Create(CipherId cipher, common::ByteView key,
                                                           uint64_t session_id,
                                                           NonceSequence nonces);
  Encryptor(const Encryptor&) = delete;
  Encryptor& operator=(const Encryptor&) = delete;

  // Encrypts the SMB2 message made of `parts` laid end to end into *wire
  // (transform header + ciphertext). GCM encrypts each part straight into
  // *wire; CCM (single-shot in OpenSSL) first lays the parts out in *wire.
  common::Status Seal(std::initializer_list<common::ByteView> parts, common::Bytes* wire);
  // Seal with a caller-chosen 16-byte Nonce field (the cipher uses its first
  // 11 or 12 bytes; the rest is sent and authenticated as given). Only for
  // known-answer tests: the caller must guarantee the nonce is never reused.
  common::Status SealWithNonce(const uint8_t nonce_field[16],
                               std::initializer_list<common::ByteView> parts, common::Bytes* wire);
  CipherId cipher() const { return cipher_; }
  const NonceSequence& nonces() const { return nonces_; }

 private:
  Encryptor(CipherId c, uint64_t s, NonceSequence n) : cipher_(c), session_id_(s), nonces_(n) {}
  CipherId cipher_;
  uint64_t session_id_;
  NonceSequence nonces_;
  common::OsslPtr<EVP_CIPHER> evp_cipher_;
  common::OsslPtr<EVP_CIPHER_CTX> ctx_;
};

class Decryptor {
 public:
  static common::Result<std::unique_ptr<Decryptor>> Create(CipherId cipher, common::ByteView key,
                                                           uint64_t session_id);
  Decryptor(const Decryptor&) = delete;
  Decryptor& operator=(const Decryptor&) = delete;

  // Checks the header (and that SessionId is this session's), verifies the
  // tag and decrypts. The first min(head.size(), size) plaintext bytes go to
  // `head`, the rest to *tail (resized), so a caller can take a message's
  // fixed part and its data apart without another copy. Returns the message
  // size. On any failure *tail is cleared: nothing unverified is released.
  common::Result<size_t> Open(common::ByteView wire, common::MutableByteView head,
                              common::Bytes* tail);
  // The whole message into *message.
  common::Status Open(common::ByteView wire, common::Bytes* message);

 private:
  Decryptor(CipherId c, uint64_t s) : cipher_(c), session_id_(s) {}
  common::Result<size_t> OpenInto(common::ByteView wire, common::MutableByteView head,
                                  common::Bytes* tail);
  CipherId cipher_;
  uint64_t session_id_;
  common::OsslPtr<EVP_CIPHER> evp_cipher_;
  common::OsslPtr<EVP_CIPHER_CTX> ctx_;
};

}  // namespace secmode::smb

#endif  // SECMODE_SMB_TRANSFORM_H_
