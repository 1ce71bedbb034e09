// Protector: per-message protection on one side of an established krb5 GSS
// context (RFC 4121 wrap and MIC tokens). Engines implement it:
//   mit    - MIT's GSS-API (gss_wrap / gss_unwrap / gss_get_mic / gss_verify_mic)
//   native - RFC 4121 over RFC 3961/3962/8009 crypto with OpenSSL 3, keyed
//            from the context MIT established (issue: Kerberos engines)
// RPCSEC_GSS (rpc/) and the token-level modes (gss/token_legs.h) are written
// against this interface only, so both engines plug in underneath.
//
// Sequence: a duplicate or too-old token fails with Code::kReplay; tokens
// out of order or after a gap are accepted, because RPCSEC_GSS does its own
// windowing (RFC 2203 section 5.3.3.1) and nconnect reorders.
//
// Thread safety: one thread at a time per Protector (it holds the send
// sequence number and the receive sequence state of its side).
#ifndef SECMODE_GSS_PROTECTOR_H_
#define SECMODE_GSS_PROTECTOR_H_

#include <gssapi/gssapi.h>

#include <memory>
#include <string>

#include "common/bytes.h"
#include "common/status.h"

namespace secmode::gss {

enum class Engine { kMit, kNative };
const char* EngineName(Engine engine);  // "mit", "native"
common::Result<Engine> ParseEngine(const std::string& name);

class Protector {
 public:
  virtual ~Protector() = default;
  // RFC 4121 4.2.6.2 wrap token; `conf` selects sealing (krb5p) or
  // integrity only.
  virtual common::Status Wrap(common::ByteView message, bool conf, common::Bytes* token) = 0;
  // Verifies and unwraps; `*conf` (may be null) says whether it was sealed.
  virtual common::Status Unwrap(common::ByteView token, common::Bytes* message, bool* conf) = 0;
  // RFC 4121 4.2.6.1 MIC token over `message`.
  virtual common::Status GetMic(common::ByteView message, common::Bytes* mic) = 0;
  virtual common::Status VerifyMic(common::ByteView message, common::ByteView mic) = 0;
  virtual Engine engine() const = 0;
};

// Takes ownership of `context` (an established krb5 context) and deletes it
// when the Protector is destroyed.
std::unique_ptr<Protector> NewMitProtector(gss_ctx_id_t context);

// Builds a Protector of the given engine over `context`, taking ownership.
common::Result<std::unique_ptr<Protector>> NewProtector(Engine engine, gss_ctx_id_t context);

}  // namespace secmode::gss

#endif  // SECMODE_GSS_PROTECTOR_H_
