// Token-level legs: the Sealer/Opener ends of a krb5 mode built on two
// Protectors (initiator = client, acceptor = server). The wire is the GSS
// token(s) with minimal framing; RPC framing (rpc/) replaces these with whole
// RPC messages built on the same Protector calls.
//
//   kHeaderMic  krb5:  MIC over a fixed 40-byte stand-in for the RPC header
//               (the RPCSEC_GSS verifier); the payload travels in clear.
//               wire = u32 mic_len | MIC | payload
//   kMicData    krb5i: MIC over the data (RFC 2203 rpc_gss_integ_data).
//               wire = u32 data_len | data | MIC
//   kWrapConf   krb5p: wrap token with confidentiality; wire = token
//   kWrapInteg  integrity-only wrap token; wire = token (not an RFC 2203
//               service; measured for completeness)
// u32 = 4-byte big-endian length, like XDR opaque counts.
//
// What an Opener checks: the framing (a length larger than the message is
// kCorrupt), then the Protector's checks of the MIC or wrap token
// (gss/protector.h), then for kWrapConf that the token was sealed. The legs
// keep no sequence state of their own, so replay is exactly what the
// Protector's context gives: with the replay and sequence flags that
// gss/context_pair.h requests, a replay of one of the last 64 tokens of a
// direction is refused (kReplay) and an older one is accepted (counted as
// unseq). The krb5 leg (kHeaderMic) protects only the header stand-in: its
// payload can be altered in transit. A failed Open empties the payload and
// wipes whatever plaintext it held.
#ifndef SECMODE_GSS_TOKEN_LEGS_H_
#define SECMODE_GSS_TOKEN_LEGS_H_

#include <memory>

#include "common/seal.h"
#include "gss/protector.h"

namespace secmode::gss {

enum class Protection { kHeaderMic, kMicData, kWrapConf, kWrapInteg };
const char* ProtectionName(Protection p);  // "header-mic", "mic", "wrap-conf", "wrap-integ"

// The 40 bytes the krb5 legs sign: a stand-in for an RPC call header up to
// and including the credential (RFC 2203 5.3.1), fixed so runs compare.
common::ByteView HeaderStandIn();

// Fills the four legs of `association`; the client legs share `initiator`,
// the server legs share `acceptor`.
void MakeTokenLegs(Protection protection, std::shared_ptr<Protector> initiator,
                   std::shared_ptr<Protector> acceptor, common::Association* association);

}  // namespace secmode::gss

#endif  // SECMODE_GSS_TOKEN_LEGS_H_
