#include "harness/smb_ops.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <time.h>

#include <algorithm>
#include <cstring>

#include "common/clock.h"
#include "common/openssl_handles.h"
#include "smb/legs.h"
#include "smb/message.h"
#include "smb/transform.h"

namespace secmode::harness {

using common::Bytes;
using common::Result;
using common::Status;

namespace {

Status EvpFailed(const char* what) { return Status::Internal(std::string(what) + " failed"); }

// A random key per op: ops built again (every round, every run) then never
// repeat a (key, nonce) pair, although each numbers its nonces from 1.
Result<Bytes> FreshKey(size_t size) {
  Bytes key(size);
  if (RAND_bytes(key.data(), static_cast<int>(size)) != 1) return EvpFailed("RAND_bytes (key)");
  return key;
}

class SmbSealOpen : public Op {
 public:
  SmbSealOpen(common::Association a, size_t payload)
      : a_(std::move(a)), payload_(common::PatternBytes(payload, 21)) {}
  Status Run() override {
    SECMODE_RETURN_IF_ERROR(a_.client_seal->Seal(payload_, &wire_));
    return a_.server_open->Open(wire_, &opened_);
  }
  size_t bytes() const override { return payload_.size(); }

 private:
  common::Association a_;
  Bytes payload_, wire_, opened_;
};

class RawAead : public Op {
 public:
  Status Init(smb::CipherId c, size_t payload) {
    SECMODE_ASSIGN_OR_RETURN(const smb::CipherProfile* profile, smb::CipherProfileOf(c));
    ccm_ = profile->aead == smb::Aead::kCcm;
    nonce_len_ = static_cast<int>(profile->nonce_bytes);
    message_.resize(smb::kWriteDataOffset + payload);
    smb::HeaderFields h;
    smb::WriteWriteRequestPrefix(h, smb::kSampleFileId, static_cast<uint32_t>(payload), 0,
                                 message_.data());
    Bytes data = common::PatternBytes(payload, 21);
    if (payload) memcpy(message_.data() + smb::kWriteDataOffset, data.data(), payload);
    ct_.resize(message_.size());
    pt_.resize(message_.size());
    aad_ = common::PatternBytes(32, 3);
    payload_ = payload;
    cipher_.reset(EVP_CIPHER_fetch(nullptr, profile->evp_name, nullptr));
    if (!cipher_) return EvpFailed("EVP_CIPHER_fetch");
    SECMODE_ASSIGN_OR_RETURN(Bytes key, FreshKey(profile->key_bytes));
    for (int enc = 0; enc < 2; ++enc) {
      common::OsslPtr<EVP_CIPHER_CTX>& owner = enc ? enc_ : dec_;
      owner.reset(EVP_CIPHER_CTX_new());
      EVP_CIPHER_CTX* ctx = owner.get();
      if (!ctx || EVP_CipherInit_ex2(ctx, cipher_.get(), nullptr, nullptr, enc, nullptr) != 1 ||
          EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, nonce_len_, nullptr) != 1 ||
          (ccm_ && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, nullptr) != 1) ||
          EVP_CipherInit_ex2(ctx, nullptr, key.data(), nullptr, enc, nullptr) != 1) {
        return EvpFailed("raw AEAD setup");
      }
    }
    return Status::Ok();
  }
  Status Run() override {
    EVP_CIPHER_CTX* enc_ctx = enc_.get();
    EVP_CIPHER_CTX* dec_ctx = dec_.get();
    uint8_t nonce[16] = {};
    memcpy(nonce, &counter_, sizeof counter_);
    ++counter_;
    const int n = static_cast<int>(message_.size());
    int len = 0;
    uint8_t tag[16], none[16];
    if (EVP_EncryptInit_ex2(enc_ctx, nullptr, nullptr, nonce, nullptr) != 1 ||
        (ccm_ && EVP_EncryptUpdate(enc_ctx, nullptr, &len, nullptr, n) != 1) ||
        EVP_EncryptUpdate(enc_ctx, nullptr, &len, aad_.data(), 32) != 1 ||
        EVP_EncryptUpdate(enc_ctx, ct_.data(), &len, message_.data(), n) != 1 ||
        EVP_EncryptFinal_ex(enc_ctx, none, &len) != 1 ||
        EVP_CIPHER_CTX_ctrl(enc_ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1) {
      return EvpFailed("raw AEAD encrypt");
    }
    if (EVP_DecryptInit_ex2(dec_ctx, nullptr, nullptr, nonce, nullptr) != 1 ||
        EVP_CIPHER_CTX_ctrl(dec_ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag) != 1 ||
        (ccm_ && EVP_DecryptUpdate(dec_ctx, nullptr, &len, nullptr, n) != 1) ||
        EVP_DecryptUpdate(dec_ctx, nullptr, &len, aad_.data(), 32) != 1 ||
        EVP_DecryptUpdate(dec_ctx, pt_.data(), &len, ct_.data(), n) != 1 ||
        (!ccm_ && EVP_DecryptFinal_ex(dec_ctx, none, &len) != 1)) {
      return EvpFailed("raw AEAD decrypt");
    }
    return Status::Ok();
  }
  size_t bytes() const override { return payload_; }

 private:
  bool ccm_ = false;
  int nonce_len_ = 12;
  uint64_t counter_ = 0;
  size_t payload_ = 0;
  Bytes message_, ct_, pt_, aad_;
  common::OsslPtr<EVP_CIPHER> cipher_;
  common::OsslPtr<EVP_CIPHER_CTX> enc_, dec_;
};

Bytes SigningMessage(size_t payload) {
  smb::HeaderFields h;
  h.message_id = 1;
  Bytes m;
  smb::BuildWriteRequest(h, common::PatternBytes(payload, 21), &m);
  return m;
}

class SmbSign : public Op {
 public:
  SmbSign(std::unique_ptr<smb::Signer> s, size_t payload)
      : signer_(std::move(s)), message_(SigningMessage(payload)), payload_(payload) {}
  Status Run() override {
    // A new MessageId per message, as a real sender does (GMAC's nonce).
    smb::PutLe64(message_.data() + 24, ++id_);
    return signer_->Sign(message_);
  }
  size_t bytes() const override { return payload_; }

 private:
  std::unique_ptr<smb::Signer> signer_;
  Bytes message_;
  size_t payload_;
  uint64_t id_ = 0;
};

class RawMac : public Op {
 public:
  Status Init(smb::SigningAlgorithm alg, size_t payload) {
    SECMODE_ASSIGN_OR_RETURN(const smb::SigningProfile* profile, smb::SigningProfileOf(alg));
    message_ = SigningMessage(payload);
    payload_ = payload;
    SECMODE_ASSIGN_OR_RETURN(Bytes key, FreshKey(16));
    if (profile->evp_mac == nullptr) {  // GMAC: the AEAD's tag over the message as AAD
      cipher_.reset(EVP_CIPHER_fetch(nullptr, profile->evp_param, nullptr));
      gcm_.reset(EVP_CIPHER_CTX_new());
      if (!cipher_ || !gcm_ ||
          EVP_EncryptInit_ex2(gcm_.get(), cipher_.get(), key.data(), nullptr, nullptr) != 1) {
        return EvpFailed("raw GMAC setup");
      }
      return Status::Ok();
    }
    mac_.reset(EVP_MAC_fetch(nullptr, profile->evp_mac, nullptr));
    if (mac_) mac_ctx_.reset(EVP_MAC_CTX_new(mac_.get()));
    if (!mac_ctx_) return EvpFailed("raw MAC setup");
    std::string param = profile->evp_param;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(profile->evp_param_name, param.data(), 0),
        OSSL_PARAM_construct_end()};
    if (EVP_MAC_init(mac_ctx_.get(), key.data(), key.size(), params) != 1) {
      return EvpFailed("raw MAC key");
    }
    return Status::Ok();
  }
  Status Run() override {
    uint8_t out[64];
    if (gcm_) {
      uint8_t nonce[12] = {};
      ++id_;
      memcpy(nonce, &id_, 8);
      int len = 0;
      EVP_CIPHER_CTX* gcm = gcm_.get();
      if (EVP_EncryptInit_ex2(gcm, nullptr, nullptr, nonce, nullptr) != 1 ||
          EVP_EncryptUpdate(gcm, nullptr, &len, message_.data(),
                            static_cast<int>(message_.size())) != 1 ||
          EVP_EncryptFinal_ex(gcm, out, &len) != 1 ||
          EVP_CIPHER_CTX_ctrl(gcm, EVP_CTRL_AEAD_GET_TAG, 16, out) != 1) {
        return EvpFailed("raw GMAC");
      }
      return Status::Ok();
    }
    size_t len = 0;
    if (EVP_MAC_init(mac_ctx_.get(), nullptr, 0, nullptr) != 1 ||
        EVP_MAC_update(mac_ctx_.get(), message_.data(), message_.size()) != 1 ||
        EVP_MAC_final(mac_ctx_.get(), out, &len, sizeof out) != 1) {
      return EvpFailed("raw MAC");
    }
    return Status::Ok();
  }
  size_t bytes() const override { return payload_; }

 private:
  Bytes message_;
  size_t payload_ = 0;
  uint64_t id_ = 0;
  common::OsslPtr<EVP_MAC> mac_;
  common::OsslPtr<EVP_MAC_CTX> mac_ctx_;
  common::OsslPtr<EVP_CIPHER> cipher_;
  common::OsslPtr<EVP_CIPHER_CTX> gcm_;
};

// Runs op for about `seconds` of CPU time; bytes per CPU-second.
Result<double> Round(Op& op, double seconds) {
  const uint64_t budget = static_cast<uint64_t>(seconds * 1e9);
  uint64_t n = 0;
  const uint64_t t0 = common::ThreadCpuNs();
  uint64_t t = t0;
  do {
    SECMODE_RETURN_IF_ERROR(op.Run());
    ++n;
    t = common::ThreadCpuNs();
  } while (t - t0 < budget || n < 3);
  return static_cast<double>(n) * static_cast<double>(op.bytes()) /
         (static_cast<double>(t - t0) / 1e9);
}

}  // namespace

Result<std::unique_ptr<Op>> MakeSmbSealOpenOp(smb::CipherId cipher, size_t payload) {
  const smb::SmbMode mode = smb::EncryptingMode(cipher);
  SECMODE_RETURN_IF_ERROR(smb::CheckSmbMode(mode));
  smb::SessionKeys keys;
  keys.client_to_server = common::SecretBytes(common::PatternBytes(mode.cipher->key_bytes, 9));
  keys.server_to_client = common::SecretBytes(common::PatternBytes(mode.cipher->key_bytes, 10));
  SECMODE_ASSIGN_OR_RETURN(auto a, smb::MakeSmbAssociation(mode, keys, 0x0000100000000025ull));
  return std::unique_ptr<Op>(new SmbSealOpen(std::move(a), payload));
}

Result<std::unique_ptr<Op>> MakeRawAeadOp(smb::CipherId cipher, size_t payload) {
  auto op = std::make_unique<RawAead>();
  SECMODE_RETURN_IF_ERROR(op->Init(cipher, payload));
  return std::unique_ptr<Op>(std::move(op));
}

Result<std::unique_ptr<Op>> MakeSmbSignOp(smb::SigningAlgorithm alg, size_t payload) {
  SECMODE_ASSIGN_OR_RETURN(Bytes key, FreshKey(16));  // GMAC's nonce is the MessageId, from 1
  SECMODE_ASSIGN_OR_RETURN(auto signer, smb::Signer::Create(alg, key));
  return std::unique_ptr<Op>(new SmbSign(std::move(signer), payload));
}

Result<std::unique_ptr<Op>> MakeRawMacOp(smb::SigningAlgorithm alg, size_t payload) {
  auto op = std::make_unique<RawMac>();
  SECMODE_RETURN_IF_ERROR(op->Init(alg, payload));
  return std::unique_ptr<Op>(std::move(op));
}

Result<Comparison> CompareOps(Op& a, Op& b, int rounds, double seconds) {
  SECMODE_RETURN_IF_ERROR(a.Run());  // warm up caches and contexts
  SECMODE_RETURN_IF_ERROR(b.Run());
  Comparison c;
  for (int i = 0; i < std::max(1, rounds); ++i) {
    SECMODE_ASSIGN_OR_RETURN(double ra, Round(a, seconds));
    SECMODE_ASSIGN_OR_RETURN(double rb, Round(b, seconds));
    c.a_bytes_per_second = std::max(c.a_bytes_per_second, ra);
    c.b_bytes_per_second = std::max(c.b_bytes_per_second, rb);
  }
  return c;
}

}  // namespace secmode::harness
