#include "smb/signing.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <climits>
#include <cstring>
#include <string>

#include "common/hmac.h"
#include "common/openssl_error.h"
#include "common/openssl_handles.h"
#include "smb/message.h"

namespace secmode::smb {

using common::OpenSslError;

using common::ByteView;
using common::MutableByteView;
using common::Result;
using common::Status;

namespace {

constexpr uint8_t kZeroSignature[16] = {};

// `message` (its header first) followed by `tail`, one SMB2 message.
Status CheckMessage(ByteView message, ByteView tail = {}) {
  if (message.size() < kHeaderSize) {
    return Status::Corrupt("truncated signed message: " + N(message.size()) +
                           " bytes, need at least the 64-byte header");
  }
  // OpenSSL's cipher calls (GMAC's AAD) take int lengths: a longer message
  // would be signed over a truncated length, leaving its tail unsigned.
  const size_t size = message.size() + tail.size();
  if (size > static_cast<size_t>(INT_MAX) || size < message.size()) {
    return Status::InvalidArgument("message of " + N(size) +
                                   " bytes is larger than a signature here can cover (2^31-1)");
  }
  return Status::Ok();
}

// SMB 2.x HMAC-SHA256/128 over common::Hmac, keyed once: OpenSSL 3.0's
// EVP_MAC re-init copies the digest context onto the heap per message, which
// the per-message path must not pay (see common/hmac.h).
class HmacSigner : public Signer {
 public:
  HmacSigner() : Signer(SigningAlgorithm::kHmacSha256) {}

  Status Init(ByteView key) {
    if (key.empty()) return Status::InvalidArgument("signing key is empty");
    return hmac_.Init(common::HashKind::kSha256, key);
  }

  Status ComputeParts(ByteView m, ByteView tail, uint8_t signature[16]) override {
    SECMODE_RETURN_IF_ERROR(CheckMessage(m, tail));
    hmac_.Start();
    hmac_.Update(m.data(), kSignatureOffset);
    hmac_.Update(kZeroSignature, 16);
    hmac_.Update(m.data() + kHeaderSize, m.size() - kHeaderSize);
    if (!tail.empty()) hmac_.Update(tail.data(), tail.size());
    uint8_t out[32];
    hmac_.Finish(out);
    memcpy(signature, out, 16);
    return Status::Ok();
  }

 private:
  common::Hmac hmac_;
};

// AES-128-CMAC through EVP_MAC. The context is keyed once; EVP_MAC_init with
// a NULL key restarts it with the same key (no new key schedule).
class CmacSigner : public Signer {
 public:
  CmacSigner() : Signer(SigningAlgorithm::kAesCmac) {}

  Status Init(ByteView key) {
    if (key.size() != 16) {
      return Status::InvalidArgument("AES-128-CMAC signing key of " + N(key.size()) +
                                     " bytes, need 16");
    }
    mac_.reset(EVP_MAC_fetch(nullptr, "CMAC", nullptr));
    if (!mac_) return OpenSslError("EVP_MAC_fetch(CMAC)");
    ctx_.reset(EVP_MAC_CTX_new(mac_.get()));
    if (!ctx_) return OpenSslError("EVP_MAC_CTX_new");
    char cipher[] = "AES-128-CBC";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, cipher, 0),
                           OSSL_PARAM_construct_end()};
    if (EVP_MAC_init(ctx_.get(), key.data(), key.size(), params) != 1) {
      return OpenSslError("EVP_MAC_init (keying the signer)");
    }
    return Status::Ok();
  }

  Status ComputeParts(ByteView m, ByteView tail, uint8_t signature[16]) override {
    SECMODE_RETURN_IF_ERROR(CheckMessage(m, tail));
    if (EVP_MAC_init(ctx_.get(), nullptr, 0, nullptr) != 1) return OpenSslError("EVP_MAC_init");
    if (EVP_MAC_update(ctx_.get(), m.data(), kSignatureOffset) != 1 ||
        EVP_MAC_update(ctx_.get(), kZeroSignature, 16) != 1 ||
        EVP_MAC_update(ctx_.get(), m.data() + kHeaderSize, m.size() - kHeaderSize) != 1 ||
        (!tail.empty() && EVP_MAC_update(ctx_.get(), tail.data(), tail.size()) != 1)) {
      return OpenSslError("EVP_MAC_update");
    }
    uint8_t out[EVP_MAX_MD_SIZE];
    size_t out_len = 0;
    if (EVP_MAC_final(ctx_.get(), out, &out_len, sizeof out) != 1 || out_len < 16) {
      return OpenSslError("EVP_MAC_final");
    }
    memcpy(signature, out, 16);  // HMAC-SHA256: first 16 of 32 bytes
    return Status::Ok();
  }

 private:
  common::OsslPtr<EVP_MAC> mac_;
  common::OsslPtr<EVP_MAC_CTX> ctx_;
};

// AES-128-GMAC = AES-128-GCM with the message as AAD and no plaintext. The
// cipher context is keyed once (AES key schedule and GHASH table); each
// message only sets a new IV.
class GmacSigner : public Signer {
 public:
  GmacSigner() : Signer(SigningAlgorithm::kAesGmac) {}

  Status Init(ByteView key) {
    if (key.size() != 16) {
      return Status::InvalidArgument("AES-128-GMAC signing key of " + N(key.size()) +
                                     " bytes, need 16");
    }
    cipher_.reset(EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr));
    if (!cipher_) return OpenSslError("EVP_CIPHER_fetch(AES-128-GCM)");
    ctx_.reset(EVP_CIPHER_CTX_new());
    if (!ctx_) return OpenSslError("EVP_CIPHER_CTX_new");
    if (EVP_EncryptInit_ex2(ctx_.get(), cipher_.get(), key.data(), nullptr, nullptr) != 1) {
      return OpenSslError("EVP_EncryptInit_ex2 (keying AES-128-GMAC)");
    }
    return Status::Ok();
  }

  Status ComputeParts(ByteView m, ByteView tail, uint8_t signature[16]) override {
    SECMODE_RETURN_IF_ERROR(CheckMessage(m, tail));
    // MS-SMB2 3.1.4.1: nonce = MessageId || role bit | cancel bit << 1.
    uint8_t nonce[12] = {};
    memcpy(nonce, m.data() + 24, 8);
    const uint32_t flags = Le32(m.data() + 16);
    const uint16_t command = Le16(m.data() + 12);
    nonce[8] = static_cast<uint8_t>((flags & kFlagServerToRedir ? 1 : 0) |
                                    (command == static_cast<uint16_t>(Command::kCancel) ? 2 : 0));
    int len = 0;
    if (EVP_EncryptInit_ex2(ctx_.get(), nullptr, nullptr, nonce, nullptr) != 1) {
      return OpenSslError("EVP_EncryptInit_ex2 (GMAC nonce)");
    }
    if (EVP_EncryptUpdate(ctx_.get(), nullptr, &len, m.data(), kSignatureOffset) != 1 ||
        EVP_EncryptUpdate(ctx_.get(), nullptr, &len, kZeroSignature, 16) != 1 ||
        (m.size() > kHeaderSize &&
         EVP_EncryptUpdate(ctx_.get(), nullptr, &len, m.data() + kHeaderSize,
                           static_cast<int>(m.size() - kHeaderSize)) != 1) ||
        (!tail.empty() && EVP_EncryptUpdate(ctx_.get(), nullptr, &len, tail.data(),
                                            static_cast<int>(tail.size())) != 1)) {
      return OpenSslError("EVP_EncryptUpdate (GMAC AAD)");
    }
    uint8_t none[16];
    if (EVP_EncryptFinal_ex(ctx_.get(), none, &len) != 1)
      return OpenSslError("EVP_EncryptFinal_ex");
    if (EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_GET_TAG, 16, signature) != 1) {
      return OpenSslError("EVP_CTRL_AEAD_GET_TAG");
    }
    return Status::Ok();
  }

 private:
  common::OsslPtr<EVP_CIPHER> cipher_;
  common::OsslPtr<EVP_CIPHER_CTX> ctx_;
};

}  // namespace

Result<std::unique_ptr<Signer>> Signer::Create(SigningAlgorithm algorithm, ByteView key) {
  SECMODE_RETURN_IF_ERROR(SigningProfileOf(algorithm).status());
  if (algorithm == SigningAlgorithm::kAesGmac) {
    auto s = std::make_unique<GmacSigner>();
    SECMODE_RETURN_IF_ERROR(s->Init(key));
    return std::unique_ptr<Signer>(std::move(s));
  }
  if (algorithm == SigningAlgorithm::kHmacSha256) {
    auto s = std::make_unique<HmacSigner>();
    SECMODE_RETURN_IF_ERROR(s->Init(key));
    return std::unique_ptr<Signer>(std::move(s));
  }
  auto s = std::make_unique<CmacSigner>();
  SECMODE_RETURN_IF_ERROR(s->Init(key));
  return std::unique_ptr<Signer>(std::move(s));
}

Status Signer::Sign(MutableByteView message, ByteView tail) {
  SECMODE_RETURN_IF_ERROR(CheckMessage(message, tail));
  PutLe32(message.data() + 16, Le32(message.data() + 16) | kFlagSigned);
  uint8_t sig[16];
  SECMODE_RETURN_IF_ERROR(ComputeParts(message, tail, sig));
  memcpy(message.data() + kSignatureOffset, sig, 16);
  return Status::Ok();
}

Status Signer::Verify(ByteView message) {
  SECMODE_RETURN_IF_ERROR(CheckMessage(message));
  if (!(Le32(message.data() + 16) & kFlagSigned)) {
    return Status::AuthFailed("message is not signed (SMB2_FLAGS_SIGNED clear)");
  }
  const uint8_t* got = message.data() + kSignatureOffset;
  if (CRYPTO_memcmp(got, kZeroSignature, 16) == 0) {
    return Status::AuthFailed("signature is all zero");
  }
  uint8_t want[16];
  SECMODE_RETURN_IF_ERROR(Compute(message, want));
  if (CRYPTO_memcmp(got, want, 16) != 0) {
    return Status::AuthFailed(std::string(SigningAlgorithmName(algorithm())) +
                              " signature mismatch (MessageId " +
                              std::to_string(Le64(message.data() + 24)) + ")");
  }
  return Status::Ok();
}

Result<std::vector<ChainPart>> SplitChain(ByteView chain) {
  std::vector<ChainPart> parts;
  size_t at = 0;
  while (true) {
    if (chain.size() - at < kHeaderSize) {
      return Status::Corrupt("compound message " + N(parts.size()) + " at byte " + N(at) +
                             " is truncated: " + N(chain.size() - at) + " bytes left, need 64");
    }
    const uint32_t next = Le32(chain.data() + at + 20);
    if (next == 0) {
      parts.push_back({at, chain.size() - at});
      return parts;
    }
    if (next < kHeaderSize || next % 8 != 0 || next > chain.size() - at) {
      return Status::Corrupt("compound message " + N(parts.size()) + " at byte " + N(at) +
                             ": NextCommand " + N(next) +
                             " is not an 8-byte aligned offset inside the chain");
    }
    parts.push_back({at, next});
    at += next;
  }
}

Status Signer::SignChain(MutableByteView chain) {
  SECMODE_ASSIGN_OR_RETURN(auto parts, SplitChain(chain));
  for (const auto& p : parts) SECMODE_RETURN_IF_ERROR(Sign(chain.subspan(p.offset, p.length)));
  return Status::Ok();
}

Status Signer::VerifyChain(ByteView chain) {
  SECMODE_ASSIGN_OR_RETURN(auto parts, SplitChain(chain));
  for (size_t i = 0; i < parts.size(); ++i) {
    Status s = Verify(chain.subspan(parts[i].offset, parts[i].length));
    if (!s.ok()) return s.Annotate("compound message " + N(i));
  }
  return Status::Ok();
}

MessageIdWindow::MessageIdWindow(size_t window)
    : window_(window == 0 ? 1 : window), bits_((window_ + 63) / 64, 0) {}

Status MessageIdWindow::Accept(uint64_t id) {
  auto slot = [this](uint64_t v) { return static_cast<size_t>(v % window_); };
  auto test = [&](uint64_t v) { return (bits_[slot(v) / 64] >> (slot(v) % 64)) & 1; };
  auto set = [&](uint64_t v, bool on) {
    uint64_t mask = uint64_t{1} << (slot(v) % 64);
    if (on) {
      bits_[slot(v) / 64] |= mask;
    } else {
      bits_[slot(v) / 64] &= ~mask;
    }
  };
  if (!any_ || id > highest_) {
    if (!any_ || id - highest_ >= window_) {
      std::fill(bits_.begin(), bits_.end(), 0);
    } else {
      for (uint64_t v = highest_ + 1; v < id; ++v) set(v, false);
    }
    set(id, true);
    highest_ = id;
    any_ = true;
    return Status::Ok();
  }
  if (highest_ - id >= window_) {
    return Status::Replay("MessageId " + std::to_string(id) + " is below the window (highest " +
                          std::to_string(highest_) + ", window " + N(window_) + ")");
  }
  if (test(id)) {
    return Status::Replay("MessageId " + std::to_string(id) + " was already used");
  }
  set(id, true);
  return Status::Ok();
}

}  // namespace secmode::smb
