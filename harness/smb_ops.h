// Repeatable SMB operations and the raw OpenSSL primitives under them, for
// the SMB bounds (suite section "smb") and the smb_bench micro-benchmarks.
//
// Each pair works on the same bytes: an SMB op seals+opens (or signs) a
// WRITE request of `payload` data bytes through secmode_smb; its raw twin
// runs only the OpenSSL primitive over the same message with contexts keyed
// once, as a best case no SMB implementation on top of OpenSSL can beat.
// Keys are fixed test keys: the cost does not depend on their value.
//
// Thread safety: an Op is used by one thread at a time.
#ifndef SECMODE_HARNESS_SMB_OPS_H_
#define SECMODE_HARNESS_SMB_OPS_H_

#include <memory>
#include <string>
#include <utility>

#include "common/status.h"
#include "smb/kdf.h"
#include "smb/signing.h"

namespace secmode::harness {

class Op {
 public:
  virtual ~Op() = default;
  virtual common::Status Run() = 0;
  // Payload bytes one Run() handles (for bytes per second).
  virtual size_t bytes() const = 0;
};

// smb-enc legs: client-seal of a WRITE request + server-open of it.
common::Result<std::unique_ptr<Op>> MakeSmbSealOpenOp(smb::CipherId cipher, size_t payload);
// Raw EVP AEAD: encrypt + decrypt of the same 112+payload-byte message with
// a 32-byte AAD and 16-byte tag.
common::Result<std::unique_ptr<Op>> MakeRawAeadOp(smb::CipherId cipher, size_t payload);
// Signer::Sign of a WRITE request carrying `payload` bytes.
common::Result<std::unique_ptr<Op>> MakeSmbSignOp(smb::SigningAlgorithm alg, size_t payload);
// Raw MAC over the same message: EVP_MAC HMAC-SHA256 / CMAC, or for GMAC
// AES-128-GCM with empty plaintext and the message as AAD (GHASH only).
common::Result<std::unique_ptr<Op>> MakeRawMacOp(smb::SigningAlgorithm alg, size_t payload);

struct Comparison {
  double a_bytes_per_second = 0;
  double b_bytes_per_second = 0;
};
// Runs a and b in `rounds` alternating rounds of about `seconds` of thread
// CPU time each (so both see the same machine state) and keeps each one's
// best round. Rates are bytes per CPU-second of the measuring thread.
common::Result<Comparison> CompareOps(Op& a, Op& b, int rounds, double seconds);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_SMB_OPS_H_
