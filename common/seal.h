// Sealer / Opener: the two ends of one direction of a protected conversation.
//
// A mode's factory returns the four legs of one association (see
// ../shared/DESIGN.md): client-seal (request), server-open (request),
// server-seal (reply), client-open (reply). Benchmarks, transports and the
// simulator's cost inputs all go through these legs, so a number always means
// the same work.
//
// Thread safety: a leg holds per-direction state (sequence numbers, nonce
// counters) and may share a security context with the other leg of the same
// side (client-seal with client-open, server-open with server-seal). Use each
// side from one thread at a time; the client and server sides are
// independent of each other.
#ifndef SECMODE_COMMON_SEAL_H_
#define SECMODE_COMMON_SEAL_H_

#include <memory>
#include <string>

#include "common/bytes.h"
#include "common/status.h"

namespace secmode::common {

class Sealer {
 public:
  virtual ~Sealer() = default;
  // Protects `payload` and writes the whole wire message to `*wire`
  // (replacing its contents; its capacity is reused across calls).
  virtual Status Seal(ByteView payload, Bytes* wire) = 0;
};

class Opener {
 public:
  virtual ~Opener() = default;
  // Verifies and unprotects one wire message produced by the peer's Sealer,
  // writing the payload to `*payload`. Any rejection names its cause.
  virtual Status Open(ByteView wire, Bytes* payload) = 0;
};

enum class Leg { kClientSeal, kServerOpen, kServerSeal, kClientOpen };
inline constexpr Leg kAllLegs[] = {Leg::kClientSeal, Leg::kServerOpen, Leg::kServerSeal,
                                   Leg::kClientOpen};
const char* LegName(Leg leg);  // "client-seal", ...

// The four legs of one association plus the labels a report needs.
struct Association {
  std::string mode;     // family as users type it: "krb5p", "sys", "smb-enc-aes-128-gcm"
  std::string engine;   // "mit", "native", "openssl", "none"
  std::string enctype;  // Kerberos enctype name or cipher name; "" if none
  std::unique_ptr<Sealer> client_seal;
  std::unique_ptr<Opener> server_open;
  std::unique_ptr<Sealer> server_seal;
  std::unique_ptr<Opener> client_open;
};

}  // namespace secmode::common

#endif  // SECMODE_COMMON_SEAL_H_
