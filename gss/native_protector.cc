// The `native` engine: RFC 4121 CFX tokens over gss/kcrypto (RFC 3961
// simplified profile, RFC 3962 / RFC 8009), keyed from the MIT context's
// lucid export, the way the Linux kernel's rpcsec_gss_krb5 gets its keys
// from gssd. Everything derived from the key (Ke/Ki/Kc for the four usages,
// AES key schedules, HMAC pad states) is built here once; Wrap/Unwrap/GetMic/
// VerifyMic allocate nothing beyond growing the caller's output buffer.
#include "gss/native_protector.h"

#include <gssapi/gssapi_krb5.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "gss/cfx_token.h"
#include "gss/gss_error.h"
#include "gss/gss_handles.h"
#include "gss/kcrypto.h"
#include "gss/protector.h"
#include "gss/seq_state.h"

namespace secmode::gss {

using common::Bytes;
using common::ByteView;
using common::Result;
using common::Status;

namespace {

// EVP and our length arithmetic use int/uint16 fields; RFC 4121 has no limit
// but nothing secmode measures comes near this.
constexpr size_t kMaxMessage = (size_t{1} << 31) - 4096;

// Exports the context (consuming it; whatever the export leaves is deleted
// on return) and copies out what the engine needs.
Result<NativeKeys> ExportKeys(ContextPtr context) {
  if (!context) return Status::InvalidArgument("no GSS context given");
  NativeKeys out;
  OM_uint32 minor = 0, flags = 0;
  int open = 0;
  OM_uint32 major = gss_inquire_context(&minor, context.get(), nullptr, nullptr, nullptr, nullptr,
                                        &flags, nullptr, &open);
  if (GSS_ERROR(major)) return GssError("gss_inquire_context", major, minor);
  if (!open) return Status::InvalidArgument("GSS context is not fully established");
  out.replay_detection = (flags & GSS_C_REPLAY_FLAG) != 0;
  out.sequence_detection = (flags & GSS_C_SEQUENCE_FLAG) != 0;
  LucidPtr lucid;
  major = gss_krb5_export_lucid_sec_context(&minor, Out(context), 1, Out(lucid));
  if (GSS_ERROR(major)) return GssError("gss_krb5_export_lucid_sec_context", major, minor);
  const auto* lc = static_cast<const gss_krb5_lucid_context_v1_t*>(lucid.get());
  if (lc->version != 1) {
    return Status::Internal("lucid context version " + std::to_string(lc->version) +
                            ", expected 1");
  }
  if (lc->protocol != 1) {
    return Status::InvalidArgument(
        "context uses RFC 1964 tokens (lucid protocol 0); the native engine does RFC 4121 only");
  }
  out.initiate = lc->initiate != 0;
  out.send_seq = lc->send_seq;
  out.recv_seq = lc->recv_seq;
  out.have_acceptor_subkey = lc->cfx_kd.have_acceptor_subkey != 0;
  // RFC 4121 2: with an acceptor subkey, both directions use it.
  const gss_krb5_lucid_key_t& k =
      out.have_acceptor_subkey ? lc->cfx_kd.acceptor_subkey : lc->cfx_kd.ctx_key;
  out.enctype = static_cast<int32_t>(k.type);
  const auto* data = static_cast<const uint8_t*>(k.data);
  out.key.Assign(common::ByteView(data, k.length));  // the lucid context's free wipes its copy
  return out;
}

// What the forks of one context share: its keys (wiped when the last fork
// goes: SecretBytes) and the send sequence counter, so every token of the
// context has its own SND_SEQ whichever fork sealed it.
struct SharedKeys {
  explicit SharedKeys(const NativeKeys& k) : keys(k), send_seq(k.send_seq) {}
  NativeKeys keys;
  std::atomic<uint64_t> send_seq;
};

class NativeProtector : public Protector {
 public:
  NativeProtector(std::shared_ptr<SharedKeys> shared, const NativeOptions& options)
      : shared_(std::move(shared)),
        initiate_(shared_->keys.initiate),
        have_acceptor_subkey_(shared_->keys.have_acceptor_subkey),
        options_(options),
        seq_state_(shared_->keys.recv_seq, shared_->keys.replay_detection,
                   shared_->keys.sequence_detection) {
    // The flags this side sends, and the ones it expects from its peer.
    send_flags_ = static_cast<uint8_t>((initiate_ ? 0 : kFlagSentByAcceptor) |
                                       (have_acceptor_subkey_ ? kFlagAcceptorSubkey : 0));
  }

  Status Init() {
    const NativeKeys& keys = shared_->keys;
    SECMODE_ASSIGN_OR_RETURN(EnctypeProfile profile, ProfileFor(keys.enctype));
    if (keys.key.size() != profile.key_size) {
      return Status::Internal("lucid key is " + std::to_string(keys.key.size()) +
                              " bytes, enctype " + std::to_string(keys.enctype) + " needs " +
                              std::to_string(profile.key_size));
    }
    // RFC 4121 2: a sender uses its own SEAL usage for wrap tokens and its
    // SIGN usage for MIC tokens; the receiver uses the peer's.
    uint32_t my_seal = initiate_ ? kUsageInitiatorSeal : kUsageAcceptorSeal;
    uint32_t my_sign = initiate_ ? kUsageInitiatorSign : kUsageAcceptorSign;
    uint32_t peer_seal = initiate_ ? kUsageAcceptorSeal : kUsageInitiatorSeal;
    uint32_t peer_sign = initiate_ ? kUsageAcceptorSign : kUsageInitiatorSign;
    SECMODE_RETURN_IF_ERROR(send_seal_.Init(profile, keys.key, my_seal));
    SECMODE_RETURN_IF_ERROR(send_sign_.Init(profile, keys.key, my_sign));
    SECMODE_RETURN_IF_ERROR(recv_seal_.Init(profile, keys.key, peer_seal));
    SECMODE_RETURN_IF_ERROR(recv_sign_.Init(profile, keys.key, peer_sign));
    h_ = profile.checksum_size;
    return Status::Ok();
  }

  // RFC 4121 4.2.4 / 4.2.6.2.
  Status Wrap(ByteView message, bool conf, Bytes* token) override {
    if (message.size() > kMaxMessage) return Status::InvalidArgument("message too large to wrap");
    const size_t len = message.size();
    const uint64_t send_seq = shared_->send_seq.fetch_add(1, std::memory_order_relaxed);
    if (conf) {
      // Body = E(confounder | message | filler(EC bytes; 0 by default, as
      // MIT) | header) | tag, where the encrypted header copy has RRC = 0.
      const size_t ec = options_.send_ec;
      const size_t n = kConfounderSize + len + ec + kCfxHeaderSize;
      const size_t total = kCfxHeaderSize + n + h_;
      token->resize(total + kAesBlock);  // slack: CTS pads the last block
      uint8_t* t = token->data();
      WriteWrapHeader(t, send_flags_ | kFlagSealed, options_.send_ec, 0, send_seq);
      SECMODE_RETURN_IF_ERROR(NextConfounder(t + kCfxHeaderSize));
      if (len > 0) std::memcpy(t + kCfxHeaderSize + kConfounderSize, message.data(), len);
      if (ec > 0) std::memset(t + kCfxHeaderSize + kConfounderSize + len, 'x', ec);
      std::memcpy(t + kCfxHeaderSize + kConfounderSize + len + ec, t, kCfxHeaderSize);
      uint8_t tag[kMaxChecksumSize];
      SECMODE_RETURN_IF_ERROR(send_seal_.EncryptInPlace(t + kCfxHeaderSize, n, n + kAesBlock, tag));
      std::memcpy(t + kCfxHeaderSize + n, tag, h_);
      token->resize(total);
    } else {
      // Body = message | checksum over (message | header with EC = RRC = 0);
      // EC then says how long the checksum is.
      const size_t total = kCfxHeaderSize + len + h_;
      token->resize(total);
      uint8_t* t = token->data();
      WriteWrapHeader(t, send_flags_, 0, 0, send_seq);
      if (len > 0) std::memcpy(t + kCfxHeaderSize, message.data(), len);
      send_seal_.Checksum(message, ByteView(t, kCfxHeaderSize), t + kCfxHeaderSize + len);
      t[4] = static_cast<uint8_t>(h_ >> 8);
      t[5] = static_cast<uint8_t>(h_);
    }
    if (options_.send_rrc != 0) {
      // RFC 4121 4.2.5: rotate the body right by RRC.
      common::MutableByteView body(token->data() + kCfxHeaderSize, token->size() - kCfxHeaderSize);
      RotateLeft(body, body.size() - options_.send_rrc % body.size());
      (*token)[6] = static_cast<uint8_t>(options_.send_rrc >> 8);
      (*token)[7] = static_cast<uint8_t>(options_.send_rrc);
    }
    return Status::Ok();
  }

  Status Unwrap(ByteView token, Bytes* message, bool* conf) override {
    Status s = UnwrapImpl(token, message, conf);
    if (!s.ok()) {
      // A sealed token is decrypted before its checksum and header copy are
      // compared (RFC 3962 MACs the plaintext): what failed must not stay
      // readable in the caller's buffer.
      OPENSSL_cleanse(message->data(), message->size());
      message->clear();
      if (!scratch_.empty()) OPENSSL_cleanse(scratch_.data(), scratch_.size());
    }
    return s;
  }

  Status GetMic(ByteView message, Bytes* mic) override {
    mic->resize(kCfxHeaderSize + h_);
    uint8_t* t = mic->data();
    WriteMicHeader(t, send_flags_, shared_->send_seq.fetch_add(1, std::memory_order_relaxed));
    send_sign_.Checksum(message, ByteView(t, kCfxHeaderSize), t + kCfxHeaderSize);
    return Status::Ok();
  }

  // RFC 4121 4.2.6.1.
  Status VerifyMic(ByteView message, ByteView mic) override {
    CfxHeader hdr;
    SECMODE_RETURN_IF_ERROR(ParseCfxHeader(mic, kTokMic, &hdr));
    if (mic.size() != kCfxHeaderSize + h_) {
      return Status::Corrupt("MIC token is " + std::to_string(mic.size()) + " bytes, expected " +
                             std::to_string(kCfxHeaderSize + h_) + " (16-byte header and " +
                             std::to_string(h_) + "-byte checksum)");
    }
    SECMODE_RETURN_IF_ERROR(CheckFlags(hdr.flags, "MIC"));
    uint8_t want[kMaxChecksumSize];
    recv_sign_.Checksum(message, mic.subspan(0, kCfxHeaderSize), want);
    if (CRYPTO_memcmp(want, mic.data() + kCfxHeaderSize, h_) != 0) {
      return Status::AuthFailed("bad MIC: checksum over the message and MIC header does not match");
    }
    return CheckSequence(hdr.seq);
  }

  Engine engine() const override { return Engine::kNative; }
  SequenceCounts sequence_counts() const override { return counts_; }

  Result<std::unique_ptr<Protector>> Fork() override {
    if (shared_->keys.replay_detection || shared_->keys.sequence_detection) {
      return Status::InvalidArgument(
          "a context with GSS replay or sequence detection cannot be forked: each fork would "
          "see only its share of the received tokens");
    }
    auto fork = std::make_unique<NativeProtector>(shared_, options_);
    SECMODE_RETURN_IF_ERROR(fork->Init());
    return std::unique_ptr<Protector>(std::move(fork));
  }

 private:
  // RFC 4121 4.2.2: SentByAcceptor must name the peer; AcceptorSubkey must
  // say which key we use (MIT would try the other key and fail the checksum).
  Status CheckFlags(uint8_t flags, const char* kind) const {
    const bool from_acceptor = (flags & kFlagSentByAcceptor) != 0;
    if (from_acceptor != initiate_) {
      return Status::AuthFailed(std::string("wrong direction: ") + kind +
                                " token has SentByAcceptor=" + (from_acceptor ? "1" : "0") +
                                " but this side is the " + (initiate_ ? "initiator" : "acceptor") +
                                " (a reflected token or one this side sent)");
    }
    const bool subkey = (flags & kFlagAcceptorSubkey) != 0;
    if (subkey != have_acceptor_subkey_) {
      return Status::AuthFailed(
          std::string(kind) + " token has AcceptorSubkey=" + (subkey ? "1" : "0") +
          " but the context " + (have_acceptor_subkey_ ? "has" : "has no") + " acceptor subkey");
    }
    return Status::Ok();
  }

  // Confounders come from OpenSSL's DRBG in blocks of kConfounderPool:
  // RAND_bytes costs about a microsecond per call (locking, DRBG update),
  // more than the whole 128-byte seal; a confounder needs to be random,
  // not fetched one by one (RFC 3961 5.3).
  Status NextConfounder(uint8_t* out) {
    if (pool_used_ == sizeof pool_) {
      if (RAND_bytes(pool_, sizeof pool_) != 1) {
        return Status::Internal("RAND_bytes failed for the confounders");
      }
      pool_used_ = 0;
    }
    std::memcpy(out, pool_ + pool_used_, kConfounderSize);
    OPENSSL_cleanse(pool_ + pool_used_, kConfounderSize);
    pool_used_ += kConfounderSize;
    return Status::Ok();
  }

  Status CheckSequence(uint64_t seq) {
    SeqState::Verdict v = seq_state_.Check(seq);
    switch (v) {
      case SeqState::Verdict::kInOrder: ++counts_.in_order; break;
      case SeqState::Verdict::kGap: ++counts_.gap; break;
      case SeqState::Verdict::kUnseq: ++counts_.unseq; break;
      case SeqState::Verdict::kDuplicate:
        ++counts_.duplicate;
        return Status::Replay("duplicate token: sequence number " + std::to_string(seq) +
                              " was already received");
      case SeqState::Verdict::kOld:
        ++counts_.old;
        return Status::Replay("old token: sequence number " + std::to_string(seq) +
                              " is more than 64 below the highest received");
    }
    return Status::Ok();
  }

  Status UnwrapImpl(ByteView token, Bytes* message, bool* conf) {
    CfxHeader hdr;
    SECMODE_RETURN_IF_ERROR(ParseCfxHeader(token, kTokWrap, &hdr));
    SECMODE_RETURN_IF_ERROR(CheckFlags(hdr.flags, "wrap"));
    if (token.size() > kMaxMessage) return Status::InvalidArgument("wrap token too large");
    ByteView body = token.subspan(kCfxHeaderSize);
    if (hdr.rrc != 0 && !body.empty()) {
      // RFC 4121 4.2.5: undo the right rotation. Off the common path (MIT
      // and this engine send RRC = 0), so a reused scratch copy is fine.
      scratch_.assign(body.begin(), body.end());
      RotateLeft(scratch_, hdr.rrc % scratch_.size());
      body = scratch_;
    }
    const bool sealed = (hdr.flags & kFlagSealed) != 0;
    if (sealed) {
      const size_t need = kConfounderSize + size_t{hdr.ec} + kCfxHeaderSize + h_;
      if (body.size() < need) {
        return Status::Corrupt("truncated sealed wrap token: body is " +
                               std::to_string(body.size()) + " bytes, need at least " +
                               std::to_string(need) + " (confounder, EC " + std::to_string(hdr.ec) +
                               ", header copy, checksum)");
      }
      const size_t rest = body.size() - h_ - kConfounderSize;  // message|filler|header
      message->resize(rest);
      uint8_t confounder[kConfounderSize];
      SECMODE_RETURN_IF_ERROR(recv_seal_.Decrypt(body, confounder, message->data()));
      // RFC 4121 4.2.4: the encrypted copy of the header must match the
      // clear one, RRC excepted (MIT checks the same fields).
      const uint8_t* copy = message->data() + rest - kCfxHeaderSize;
      if (std::memcmp(copy, token.data(), 6) != 0 ||
          std::memcmp(copy + 8, token.data() + 8, 8) != 0) {
        return Status::Corrupt(
            "encrypted header copy does not match the token header (altered EC, flags or "
            "sequence number)");
      }
      message->resize(rest - kCfxHeaderSize - hdr.ec);
    } else {
      if (hdr.ec != h_) {
        return Status::Corrupt("integrity-only wrap token has EC " + std::to_string(hdr.ec) +
                               ", expected the checksum length " + std::to_string(h_));
      }
      if (body.size() < h_) {
        return Status::Corrupt("truncated wrap token: body is " + std::to_string(body.size()) +
                               " bytes, shorter than the " + std::to_string(h_) + "-byte checksum");
      }
      ByteView data = body.subspan(0, body.size() - h_);
      uint8_t header[kCfxHeaderSize];
      std::memcpy(header, token.data(), kCfxHeaderSize);
      std::memset(header + 4, 0, 4);  // EC and RRC are 0 under the checksum
      uint8_t want[kMaxChecksumSize];
      recv_seal_.Checksum(data, ByteView(header, kCfxHeaderSize), want);
      if (CRYPTO_memcmp(want, body.data() + data.size(), h_) != 0) {
        return Status::AuthFailed(
            "bad checksum on integrity-only wrap token (wrong key or altered token)");
      }
      message->assign(data.begin(), data.end());
    }
    SECMODE_RETURN_IF_ERROR(CheckSequence(hdr.seq));
    if (conf != nullptr) *conf = sealed;
    return Status::Ok();
  }

  const std::shared_ptr<SharedKeys> shared_;
  const bool initiate_;
  const bool have_acceptor_subkey_;
  const NativeOptions options_;
  SeqState seq_state_;
  uint8_t send_flags_ = 0;
  size_t h_ = 0;
  UsageKeys send_seal_, send_sign_, recv_seal_, recv_sign_;
  SequenceCounts counts_;
  Bytes scratch_;
  static constexpr size_t kConfounderPool = 256;
  uint8_t pool_[kConfounderPool * kConfounderSize];
  size_t pool_used_ = sizeof pool_;
};

}  // namespace

Result<std::unique_ptr<Protector>> NewNativeProtectorFromKeys(const NativeKeys& keys,
                                                              const NativeOptions& options) {
  auto p = std::make_unique<NativeProtector>(std::make_shared<SharedKeys>(keys), options);
  Status s = p->Init();
  if (!s.ok()) return s.Annotate("native engine");
  return std::unique_ptr<Protector>(std::move(p));
}

Result<std::unique_ptr<Protector>> NewNativeProtector(ContextPtr context,
                                                      const NativeOptions& options) {
  SECMODE_ASSIGN_OR_RETURN(NativeKeys keys, ExportKeys(std::move(context)));
  return NewNativeProtectorFromKeys(keys, options);
}

}  // namespace secmode::gss
