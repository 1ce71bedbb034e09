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
// Several may share one key (multichannel): the nonce ledger (below) keeps
// their counters apart; creating and destroying Encryptors is thread-safe.
#ifndef SECMODE_SMB_TRANSFORM_H_
#define SECMODE_SMB_TRANSFORM_H_

#include <openssl/evp.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/bytes.h"
#include "common/openssl_handles.h"
#include "common/status.h"
#include "smb/kdf.h"

namespace secmode::smb {

inline constexpr size_t kTransformHeaderSize = 52;
inline constexpr size_t kTransformAadOffset = 20;
inline constexpr size_t kTransformAadSize = 32;
inline constexpr uint16_t kTransformFlagEncrypted = 0x0001;

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
// The same checks of the header alone (ProtocolId, Flags), on the first
// bytes of a transform whose rest may be elsewhere or not captured
// (`prefix` holds at least its 52 bytes): OriginalMessageSize unchecked.
common::Result<TransformHeader> ParseTransformHeaderPrefix(common::ByteView prefix);
void WriteTransformHeader(const TransformHeader& h, uint8_t out[kTransformHeaderSize]);

// Unique nonces for one key and one sender. WHY a counter and not random
// nonces: with 96-bit random GCM nonces, NIST SP 800-38D limits a key to
// 2^32 messages because random nonces start to collide (birthday bound) and
// a single repeated nonce under GCM leaks the GHASH key and the XOR of two
// plaintexts; CCM's 88-bit nonce is worse. A counter makes uniqueness
// certain, not probable, and costs nothing.
//
// Layout: bytes 0..7 = counter (little-endian), then the channel id in the
// remaining nonce bytes of the cipher (CipherProfile::nonce_bytes - 8: 4 for
// GCM, 3 for CCM). Once `last` has been used,
// Next() refuses with kExhausted: the key must be replaced (a new session)
// before anything else is encrypted with it.
//
// A counter is unique only inside its own sequence, so a sequence cannot be
// copied: moving one leaves the source exhausted (it refuses every Next()).
// Uniqueness across sequences that share a key is the Encryptor's job (its
// nonce ledger, below).
class NonceSequence {
 public:
  // Checks that channel_id fits the cipher's channel bytes and first <= last.
  static common::Result<NonceSequence> Create(CipherId cipher, uint32_t channel_id,
                                              uint64_t first = 0, uint64_t last = UINT64_MAX);
  NonceSequence(const NonceSequence&) = delete;
  NonceSequence& operator=(const NonceSequence&) = delete;
  NonceSequence(NonceSequence&& other) noexcept;
  NonceSequence& operator=(NonceSequence&& other) noexcept;
  ~NonceSequence() = default;

  // Writes the next nonce into nonce[0..15] (unused bytes zero).
  common::Status Next(uint8_t nonce[16]);
  CipherId cipher() const { return profile_->id; }
  const CipherProfile& profile() const { return *profile_; }
  uint32_t channel() const { return channel_; }
  uint64_t first_counter() const { return first_; }
  uint64_t last_counter() const { return last_; }
  uint64_t next_counter() const { return next_; }
  bool exhausted() const { return exhausted_; }

 private:
  NonceSequence() = default;
  const CipherProfile* profile_ = nullptr;  // a row of CipherProfiles()
  uint32_t channel_ = 0;
  uint64_t first_ = 0, next_ = 0, last_ = 0;
  bool exhausted_ = false;
};

// Counters one Encryptor draws when it is not given a NonceSequence: 2^40
// messages (a million a second for twelve days) before kExhausted.
inline constexpr uint64_t kNonceBlock = uint64_t{1} << 40;

// The nonce ledger: every Encryptor reserves the counters of its sequence
// for its key, process-wide, when it is created, so no two Encryptors of one
// key can ever produce the same (key, nonce) pair, whatever their channel ids:
//   - Create(cipher, key, session, channel_id) draws a block of kNonceBlock
//     counters no other Encryptor of that key has had in this process. So the
//     channels of one session never start at the same counter, and repeated
//     runs with one fixed key (benchmarks) never reuse a nonce;
//   - Create(cipher, key, session, NonceSequence) reserves the sequence's
//     range [first, last] and refuses (kInvalidArgument) a range that
//     overlaps counters reserved for that key before, on any channel.
// When an Encryptor is destroyed the counters it did not use are released;
// the used ones stay reserved until the process ends (one small entry per
// key that sealed anything). The ledger knows a key only by a salted
// SHA-256 HMAC (random salt per process), never the key. It cannot see other
// processes: two processes must not encrypt with one key (real sessions have
// their own keys; the fixed benchmark keys protect nothing secret).
class Encryptor {
 public:
  // Draws a fresh counter block for `key` (see above).
  static common::Result<std::unique_ptr<Encryptor>> Create(CipherId cipher, common::ByteView key,
                                                           uint64_t session_id,
                                                           uint32_t channel_id = 0);
  // Uses `nonces` (its cipher's nonce size must match), reserving its range.
  static common::Result<std::unique_ptr<Encryptor>> Create(CipherId cipher, common::ByteView key,
                                                           uint64_t session_id,
                                                           NonceSequence nonces);
  ~Encryptor();
  Encryptor(const Encryptor&) = delete;
  Encryptor& operator=(const Encryptor&) = delete;

  // Encrypts the SMB2 message made of `parts` laid end to end into *wire
  // (transform header + ciphertext). GCM encrypts each part straight into
  // *wire; CCM (single-shot in OpenSSL) first lays the parts out in *wire.
  common::Status Seal(std::initializer_list<common::ByteView> parts, common::Bytes* wire);
  // Seal with a caller-chosen 16-byte Nonce field (the cipher uses its first
  // 11 or 12 bytes; the rest is sent and authenticated as given). Only for
  // known-answer tests: the nonce bypasses the sequence and the ledger, so
  // the caller must guarantee it is never reused.
  common::Status SealWithNonce(const uint8_t nonce_field[16],
                               std::initializer_list<common::ByteView> parts, common::Bytes* wire);
  CipherId cipher() const { return profile_->id; }
  const NonceSequence& nonces() const { return nonces_; }

 private:
  Encryptor(const CipherProfile* c, uint64_t s, NonceSequence n)
      : profile_(c), session_id_(s), nonces_(std::move(n)) {}
  static common::Result<std::unique_ptr<Encryptor>> Make(CipherId cipher, common::ByteView key,
                                                         uint64_t session_id, NonceSequence nonces,
                                                         bool draw);
  const CipherProfile* profile_;  // a row of CipherProfiles()
  uint64_t session_id_;
  NonceSequence nonces_;
  std::string key_id_;  // the key's ledger fingerprint; "" = nothing reserved
  uint64_t reserved_first_ = 0, reserved_last_ = 0;
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
  // size. On any failure *tail is wiped and cleared and `head` wiped: nothing
  // unverified is released, nor left behind in the caller's buffers.
  common::Result<size_t> Open(common::ByteView wire, common::MutableByteView head,
                              common::Bytes* tail);
  // The whole message into *message.
  common::Status Open(common::ByteView wire, common::Bytes* message);
  uint64_t session_id() const { return session_id_; }

 private:
  Decryptor(const CipherProfile* c, uint64_t s) : profile_(c), session_id_(s) {}
  common::Result<size_t> OpenInto(common::ByteView wire, common::MutableByteView head,
                                  common::Bytes* tail);
  const CipherProfile* profile_;  // a row of CipherProfiles()
  uint64_t session_id_;
  common::OsslPtr<EVP_CIPHER> evp_cipher_;
  common::OsslPtr<EVP_CIPHER_CTX> ctx_;
};

}  // namespace secmode::smb

#endif  // SECMODE_SMB_TRANSFORM_H_
