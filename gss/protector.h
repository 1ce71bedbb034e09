// Protector: per-message protection on one side of an established krb5 GSS
// context (RFC 4121 wrap and MIC tokens). Engines implement it:
//   mit     - MIT's GSS-API (gss_wrap / gss_unwrap / gss_get_mic / gss_verify_mic)
//   mit-iov - MIT's iov calls (gss_wrap_iov / gss_unwrap_iov / gss_get_mic_iov /
//             gss_verify_mic_iov) on caller-owned buffers
//   native  - RFC 4121 over RFC 3961/3962/8009 crypto with OpenSSL 3, keyed
//             from the context MIT established (gss/native_protector.cc)
// RPCSEC_GSS (rpc/) and the token-level modes (gss/token_legs.h) are written
// against this interface only, so both engines plug in underneath.
//
// What is checked where. Every engine checks, for every received token: its
// structure (RFC 4121 4.2.6), its direction (SentByAcceptor) and key
// (AcceptorSubkey) flags, its checksum (the HMAC of RFC 3962 / RFC 8009), and
// for a sealed token the encrypted copy of its header. Nothing is handed out before all of
// these passed; a failed Unwrap wipes what it decrypted (see below).
//
// Then the token's sequence number, as MIT's g_seqstate does it (both engines
// give the same verdicts, gss/seq_state.h), and only if the context asked for
// it (GSS_C_REPLAY_FLAG / GSS_C_SEQUENCE_FLAG at establishment):
//   - in order, ahead (a gap) or late but inside the last 64: accepted and
//     counted (sequence_counts(): in_order, gap, unseq);
//   - a repeat of one of the last 64 numbers, with replay detection:
//     Code::kReplay, message "duplicate ...";
//   - more than 64 behind the highest number received: the 64-bit history
//     cannot tell whether it is a replay. With sequence detection on it is
//     ACCEPTED and counted as unseq, replay or not (MIT returns
//     GSS_S_UNSEQ_TOKEN, a supplementary status, not an error); with replay
//     detection alone it is Code::kReplay, message "old ..." (MIT's
//     GSS_S_OLD_TOKEN).
// So the GSS layer is not the replay defence of anything measured here; the
// layer above owns replay:
//   - RPCSEC_GSS (rpc/): contexts are made without GSS replay or sequence
//     detection (RFC 2203 5.2.2, rpc/gss_client.cc), so no token is refused
//     for its number here; the server's RFC 2203 window over the seq_num of
//     the MIC-verified call header drops replays (rpc/sequence_window.h,
//     RFC 2203 5.3.3.1);
//   - the token-level legs (gss/token_legs.h) use contexts with both flags
//     (gss/context_pair.h) and inherit exactly the rules above: a replay of
//     one of the last 64 tokens is refused, an older one is accepted.
//
// Thread safety: one thread at a time per Protector (it holds the receive
// sequence state of its side and its cipher state); Fork() gives another
// thread its own Protector of the same context where the engine can.
#ifndef SECMODE_GSS_PROTECTOR_H_
#define SECMODE_GSS_PROTECTOR_H_

#include <gssapi/gssapi.h>

#include <memory>
#include <string>

#include "common/bytes.h"
#include "common/status.h"
#include "gss/gss_handles.h"

namespace secmode::gss {

enum class Engine { kMit, kNative, kMitIov };
inline constexpr Engine kAllEngines[] = {Engine::kMit, Engine::kNative, Engine::kMitIov};
const char* EngineName(Engine engine);  // "mit", "native", "mit-iov"
common::Result<Engine> ParseEngine(const std::string& name);

// Received tokens by verdict (only tokens whose checksum verified count).
struct SequenceCounts {
  uint64_t in_order = 0, gap = 0, unseq = 0, duplicate = 0, old = 0;
};

// Output buffers are replaced (their capacity reused across calls); an input
// view must not point into the output buffer of the same call. A failed call
// leaves no plaintext in its output: it is emptied, and whatever an engine
// decrypted into it before a check failed is overwritten with zeros first.
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
  // Verdicts of received tokens so far. The default (for test doubles
  // written against the older interface) reports nothing received.
  virtual SequenceCounts sequence_counts() const { return {}; }
  // Another Protector of the same context for another thread, so one
  // context's messages can be protected on many threads at once: it shares
  // the keys and the send sequence number (every token keeps its own
  // SND_SEQ) and has its own cipher state. Only for contexts without
  // GSS-level replay or sequence detection (RPCSEC_GSS's: it windows the
  // calls itself), since each fork sees only the tokens it opens.
  // Unavailable where the engine cannot (MIT's contexts are not safe for
  // concurrent use); gss/protector_pool.h then serialises.
  virtual common::Result<std::unique_ptr<Protector>> Fork() {
    return common::Status::Unavailable(std::string(EngineName(engine())) +
                                       " engine: a context cannot be forked");
  }
};

// Both take ownership of `context` (an established krb5 context); the
// Protector deletes it when destroyed.
std::unique_ptr<Protector> NewMitProtector(ContextPtr context);
std::unique_ptr<Protector> NewMitIovProtector(ContextPtr context);

// Native engine knobs; the defaults are what MIT sends.
struct NativeOptions {
  // RRC (RFC 4121 4.2.5) to send in wrap tokens. MIT's gss_wrap sends 0;
  // a non-zero value exercises the receiver's rotation handling.
  uint16_t send_rrc = 0;
  // EC (filler bytes, RFC 4121 4.2.4) in sealed wrap tokens. MIT sends 0; a
  // non-zero value exercises the receiver's filler handling.
  uint16_t send_ec = 0;
};
// Exports the context's keys (gss_krb5_export_lucid_sec_context) and builds
// the native engine; `context` is consumed whatever the outcome.
common::Result<std::unique_ptr<Protector>> NewNativeProtector(ContextPtr context,
                                                              const NativeOptions& options = {});

// Builds a Protector of the given engine over `context`, taking ownership.
common::Result<std::unique_ptr<Protector>> NewProtector(Engine engine, ContextPtr context);

}  // namespace secmode::gss

#endif  // SECMODE_GSS_PROTECTOR_H_
