// SMB2/SMB3 message signing (MS-SMB2 3.1.4.1) and the receiver's MessageId
// replay window.
//
// Algorithms: HMAC-SHA256 truncated to 16 bytes (dialects 2.0.2 / 2.1),
// AES-128-CMAC (3.0, 3.0.2, 3.1.1), AES-128-GMAC (3.1.1 with
// SMB2_SIGNING_CAPABILITIES). The signature covers the whole message with its
// 16-byte Signature field taken as zero; the message is never copied to zero
// it (the MAC is fed the bytes around the field plus 16 zero bytes). In a
// compound chain each message is signed on its own, from its header to the
// next header (NextCommand) or to the end of the chain.
//
// GMAC nonce (MS-SMB2 3.1.4.1): 12 bytes = MessageId (8, little-endian) ||
// 32 bits whose bit 0 is 1 when the message goes server-to-client
// (SMB2_FLAGS_SERVER_TO_REDIR) and bit 1 is 1 for an SMB2 CANCEL request.
// So the nonce is unique per key only as long as every MessageId is used
// once per direction: a receiver MUST reject a repeated MessageId, which
// MessageIdWindow does (the server's CommandSequenceWindow, MS-SMB2
// 3.3.5.2.3). A repeated GMAC nonce under one key would let an attacker
// recover the GHASH key and forge signatures. (An SMB2 CANCEL carries the
// MessageId of the request it cancels; its nonce differs by the cancel bit,
// so a receiver handles CANCEL outside the window. The measured legs carry
// only READ/WRITE.)
//
// Thread safety: a Signer holds one keyed MAC/cipher context, set up once
// (key schedule included) and reused for every message; use it from one
// thread at a time. Create one Signer per thread (channel) to sign in
// parallel.
#ifndef SECMODE_SMB_SIGNING_H_
#define SECMODE_SMB_SIGNING_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "common/bytes.h"
#include "common/status.h"
#include "smb/profiles.h"

namespace secmode::smb {

class Signer {
 public:
  // `key` is the session's SigningKey: 16 bytes for CMAC/GMAC; HMAC takes the
  // 16-byte SMB 2.x session key (any non-empty length is accepted).
  static common::Result<std::unique_ptr<Signer>> Create(SigningAlgorithm algorithm,
                                                        common::ByteView key);
  virtual ~Signer() = default;

  SigningAlgorithm algorithm() const { return algorithm_; }

  // The 16-byte signature of one message (header first), its Signature field
  // taken as zero. Fails on a message shorter than the 64-byte header
  // (kCorrupt) or longer than INT_MAX bytes (kInvalidArgument: OpenSSL's
  // lengths are int, and a truncated length would leave the tail unsigned).
  // Sign, SignChain, Verify and VerifyChain refuse the same.
  common::Status Compute(common::ByteView message, uint8_t signature[16]) {
    return ComputeParts(message, {}, signature);
  }
  // The same over `message` followed by `tail` (one SMB2 message in two
  // pieces: a WRITE's fixed part and its data, never copied together).
  virtual common::Status ComputeParts(common::ByteView message, common::ByteView tail,
                                      uint8_t signature[16]) = 0;

  // Sets SMB2_FLAGS_SIGNED and writes the signature into `message` (the
  // header's piece; `tail`, when given, is the rest of the message).
  common::Status Sign(common::MutableByteView message, common::ByteView tail = {});
  // Signs every message of a compound chain, following NextCommand.
  common::Status SignChain(common::MutableByteView chain);
  // Checks the signature of one message; an all-zero or wrong signature is
  // kAuthFailed naming which. The SIGNED flag must be set.
  common::Status Verify(common::ByteView message);
  common::Status VerifyChain(common::ByteView chain);

 protected:
  explicit Signer(SigningAlgorithm a) : algorithm_(a) {}

 private:
  SigningAlgorithm algorithm_;
};

// Splits a compound chain into its messages (MS-SMB2 3.2.4.1.4: NextCommand
// is the offset from this header to the next, 8-byte aligned; 0 ends it).
// Each span runs from its header to the next header (padding included).
struct ChainPart {
  size_t offset = 0;
  size_t length = 0;
};
common::Result<std::vector<ChainPart>> SplitChain(common::ByteView chain);

// A receiver's record of which MessageIds it has accepted: a sliding window
// of `window` ids below the highest one seen. An id seen before, or older
// than the window, is kReplay. Single-threaded.
class MessageIdWindow {
 public:
  explicit MessageIdWindow(size_t window = 8192);
  common::Status Accept(uint64_t message_id);

 private:
  size_t window_;
  bool any_ = false;
  uint64_t highest_ = 0;
  std::vector<uint64_t> bits_;  // bit (id % window) set when id accepted
};

}  // namespace secmode::smb

#endif  // SECMODE_SMB_SIGNING_H_
