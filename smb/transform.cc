#include "smb/transform.h"

#include <openssl/crypto.h>

#include <climits>
#include <cstring>
#include <string>

#include "common/openssl_error.h"
#include "common/openssl_handles.h"
#include "smb/message.h"

namespace secmode::smb {

using common::OpenSslError;

using common::Bytes;
using common::ByteView;
using common::MutableByteView;
using common::Result;
using common::Status;

namespace {

std::string N(size_t v) { return std::to_string(v); }

bool IsCcm(CipherId c) { return c == CipherId::kAes128Ccm || c == CipherId::kAes256Ccm; }

const char* EvpName(CipherId c) {
  switch (c) {
    case CipherId::kAes128Ccm: return "AES-128-CCM";
    case CipherId::kAes128Gcm: return "AES-128-GCM";
    case CipherId::kAes256Ccm: return "AES-256-CCM";
    case CipherId::kAes256Gcm: return "AES-256-GCM";
  }
  return "?";
}

std::string Hex64(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Fetches the cipher once and keys `ctx` once. For CCM the nonce length (11)
// and tag length (16) must be set before the key.
Status SetUpContext(CipherId cipher, ByteView key, bool encrypt, common::OsslPtr<EVP_CIPHER>* evp,
                    common::OsslPtr<EVP_CIPHER_CTX>* ctx) {
  SECMODE_RETURN_IF_ERROR(ParseCipherId(static_cast<uint16_t>(cipher)).status());
  if (key.size() != CipherKeyBytes(cipher)) {
    return Status::InvalidArgument(std::string(CipherName(cipher)) + " key of " + N(key.size()) +
                                   " bytes, need " + N(CipherKeyBytes(cipher)));
  }
  evp->reset(EVP_CIPHER_fetch(nullptr, EvpName(cipher), nullptr));
  if (!*evp) return OpenSslError("EVP_CIPHER_fetch");
  ctx->reset(EVP_CIPHER_CTX_new());
  if (!*ctx) return OpenSslError("EVP_CIPHER_CTX_new");
  EVP_CIPHER_CTX* c = ctx->get();
  if (EVP_CipherInit_ex2(c, evp->get(), nullptr, nullptr, encrypt ? 1 : 0, nullptr) != 1) {
    return OpenSslError("EVP_CipherInit_ex2 (cipher)");
  }
  if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, static_cast<int>(NonceBytes(cipher)),
                          nullptr) != 1) {
    return OpenSslError("EVP_CTRL_AEAD_SET_IVLEN");
  }
  // CCM bakes the tag length M into its state at key setup (both ways).
  if (IsCcm(cipher) && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, nullptr) != 1) {
    return OpenSslError("EVP_CTRL_AEAD_SET_TAG (CCM tag length)");
  }
  if (EVP_CipherInit_ex2(c, nullptr, key.data(), nullptr, encrypt ? 1 : 0, nullptr) != 1) {
    return OpenSslError("EVP_CipherInit_ex2 (key)");
  }
  return Status::Ok();
}

}  // namespace

Result<TransformHeader> ParseTransformHeader(ByteView w) {
  if (w.size() < kTransformHeaderSize) {
    return Status::Corrupt("truncated transform: " + N(w.size()) +
                           " bytes, the TRANSFORM_HEADER alone is 52");
  }
  if (w[0] != 0xFD || w[1] != 'S' || w[2] != 'M' || w[3] != 'B') {
    char buf[96];
    snprintf(buf, sizeof buf, "not a TRANSFORM_HEADER: ProtocolId %02x %02x %02x %02x", w[0], w[1],
             w[2], w[3]);
    return Status::Corrupt(buf);
  }
  TransformHeader h;
  memcpy(h.signature, &w[4], 16);
  memcpy(h.nonce, &w[20], 16);
  h.original_message_size = Le32(&w[36]);
  h.flags = Le16(&w[42]);
  h.session_id = Le64(&w[44]);
  if (h.flags != kTransformFlagEncrypted) {
    char buf[96];
    snprintf(buf, sizeof buf, "TRANSFORM_HEADER Flags/EncryptionAlgorithm 0x%04x, expected 0x0001",
             h.flags);
    return Status::Corrupt(buf);
  }
  const size_t body = w.size() - kTransformHeaderSize;
  if (h.original_message_size > body) {
    return Status::Corrupt("OriginalMessageSize " + N(h.original_message_size) + " but only " +
                           N(body) + " bytes follow the TRANSFORM_HEADER");
  }
  if (h.original_message_size < body) {
    return Status::Corrupt("OriginalMessageSize " + N(h.original_message_size) + " but " + N(body) +
                           " bytes follow the TRANSFORM_HEADER");
  }
  if (h.original_message_size == 0) return Status::Corrupt("OriginalMessageSize is 0");
  return h;
}

void WriteTransformHeader(const TransformHeader& h, uint8_t out[kTransformHeaderSize]) {
  out[0] = 0xFD;
  out[1] = 'S';
  out[2] = 'M';
  out[3] = 'B';
  memcpy(out + 4, h.signature, 16);
  memcpy(out + 20, h.nonce, 16);
  PutLe32(out + 36, h.original_message_size);
  PutLe16(out + 40, 0);
  PutLe16(out + 42, h.flags);
  PutLe64(out + 44, h.session_id);
}

Result<NonceSequence> NonceSequence::Create(CipherId cipher, uint32_t channel_id, uint64_t first,
                                            uint64_t last) {
  SECMODE_RETURN_IF_ERROR(ParseCipherId(static_cast<uint16_t>(cipher)).status());
  if (IsCcm(cipher) && channel_id >= (1u << 24)) {
    return Status::InvalidArgument("channel id " + N(channel_id) +
                                   " does not fit the 3 channel bytes of an 11-byte CCM nonce");
  }
  if (first > last) {
    return Status::InvalidArgument("nonce counter range is empty: first " + N(first) + " > last " +
                                   N(last));
  }
  NonceSequence n;
  n.cipher_ = cipher;
  n.channel_ = channel_id;
  n.next_ = first;
  n.last_ = last;
  return n;
}

Status NonceSequence::Next(uint8_t nonce[16]) {
  if (exhausted_) {
    return Status::Exhausted("nonce space of this key is used up (last counter " + N(last_) +
                             ", channel " + N(channel_) + "); the key must be replaced");
  }
  memset(nonce, 0, 16);
  PutLe64(nonce, next_);
  nonce[8] = static_cast<uint8_t>(channel_);
  nonce[9] = static_cast<uint8_t>(channel_ >> 8);
  nonce[10] = static_cast<uint8_t>(channel_ >> 16);
  if (!IsCcm(cipher_)) nonce[11] = static_cast<uint8_t>(channel_ >> 24);
  if (next_ == last_) {
    exhausted_ = true;
  } else {
    ++next_;
  }
  return Status::Ok();
}

Result<std::unique_ptr<Encryptor>> Encryptor::Create(CipherId cipher, ByteView key,
                                                     uint64_t session_id, NonceSequence nonces) {
  std::unique_ptr<Encryptor> e(new Encryptor(cipher, session_id, nonces));
  SECMODE_RETURN_IF_ERROR(SetUpContext(cipher, key, true, &e->evp_cipher_, &e->ctx_));
  return e;
}

Status Encryptor::Seal(std::initializer_list<ByteView> parts, Bytes* wire) {
  uint8_t nonce[16];
  SECMODE_RETURN_IF_ERROR(nonces_.Next(nonce));
  return SealWithNonce(nonce, parts, wire);
}

Status Encryptor::SealWithNonce(const uint8_t nonce_field[16],
                                std::initializer_list<ByteView> parts, Bytes* wire) {
  size_t total = 0;
  for (ByteView p : parts) total += p.size();
  if (total == 0) return Status::InvalidArgument("nothing to encrypt: empty message");
  // OpenSSL takes int lengths; SMB messages are far smaller (MaxWriteSize
  // is 8 MiB on Windows), so anything past INT_MAX is a caller error.
  if (total > static_cast<size_t>(INT_MAX)) {
    return Status::InvalidArgument("message of " + N(total) +
                                   " bytes is larger than one transform can carry here (2^31-1)");
  }
  TransformHeader h;
  memcpy(h.nonce, nonce_field, 16);
  h.original_message_size = static_cast<uint32_t>(total);
  h.flags = kTransformFlagEncrypted;
  h.session_id = session_id_;
  wire->resize(kTransformHeaderSize + total);
  uint8_t* w = wire->data();
  WriteTransformHeader(h, w);

  int len = 0;
  if (EVP_EncryptInit_ex2(ctx_.get(), nullptr, nullptr, h.nonce, nullptr) != 1) {
    return OpenSslError("EVP_EncryptInit_ex2 (nonce)");
  }
  uint8_t* out = w + kTransformHeaderSize;
  if (IsCcm(cipher_)) {
    // CCM needs the total length first and takes the data in one call.
    for (ByteView p : parts) {
      if (!p.empty()) memcpy(out, p.data(), p.size());
      out += p.size();
    }
    out = w + kTransformHeaderSize;
    if (EVP_EncryptUpdate(ctx_.get(), nullptr, &len, nullptr, static_cast<int>(total)) != 1 ||
        EVP_EncryptUpdate(ctx_.get(), nullptr, &len, w + kTransformAadOffset, kTransformAadSize) !=
            1 ||
        EVP_EncryptUpdate(ctx_.get(), out, &len, out, static_cast<int>(total)) != 1) {
      return OpenSslError("EVP_EncryptUpdate (CCM)");
    }
  } else {
    if (EVP_EncryptUpdate(ctx_.get(), nullptr, &len, w + kTransformAadOffset, kTransformAadSize) !=
        1) {
      return OpenSslError("EVP_EncryptUpdate (GCM AAD)");
    }
    for (ByteView p : parts) {
      if (p.empty()) continue;
      if (EVP_EncryptUpdate(ctx_.get(), out, &len, p.data(), static_cast<int>(p.size())) != 1) {
        return OpenSslError("EVP_EncryptUpdate (GCM)");
      }
      out += len;
    }
  }
  uint8_t none[16];
  if (EVP_EncryptFinal_ex(ctx_.get(), none, &len) != 1) return OpenSslError("EVP_EncryptFinal_ex");
  if (EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_GET_TAG, 16, w + 4) != 1) {
    return OpenSslError("EVP_CTRL_AEAD_GET_TAG");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Decryptor>> Decryptor::Create(CipherId cipher, ByteView key,
                                                     uint64_t session_id) {
  std::unique_ptr<Decryptor> d(new Decryptor(cipher, session_id));
  SECMODE_RETURN_IF_ERROR(SetUpContext(cipher, key, false, &d->evp_cipher_, &d->ctx_));
  return d;
}

Result<size_t> Decryptor::Open(ByteView wire, MutableByteView head, Bytes* tail) {
  // *tail keeps its size when it already fits (the common case of one
  // buffer reused per message): clearing it first would make resize() zero
  // a whole payload per message. Every failure clears it.
  Result<size_t> r = OpenInto(wire, head, tail);
  if (!r.ok()) {
    tail->clear();
    if (!head.empty()) OPENSSL_cleanse(head.data(), head.size());
  }
  return r;
}

Result<size_t> Decryptor::OpenInto(ByteView wire, MutableByteView head, Bytes* tail) {
  SECMODE_ASSIGN_OR_RETURN(TransformHeader h, ParseTransformHeader(wire));
  if (h.session_id != session_id_) {
    return Status::AuthFailed("TRANSFORM_HEADER SessionId " + Hex64(h.session_id) +
                              " is not this session's " + Hex64(session_id_));
  }
  const size_t total = h.original_message_size;
  if (total > static_cast<size_t>(INT_MAX)) {
    return Status::Corrupt("OriginalMessageSize " + N(total) + " is larger than 2^31-1");
  }
  const uint8_t* in = wire.data() + kTransformHeaderSize;
  const uint8_t* aad = wire.data() + kTransformAadOffset;
  const size_t head_len = std::min(head.size(), total);
  int len = 0;
  auto fail = [&](const char* what) { return OpenSslError(what); };
  auto auth_failed = [&]() {
    return Status::AuthFailed(
        std::string(CipherName(cipher_)) +
        " tag mismatch: header, AAD or ciphertext was altered (or wrong key)");
  };
  if (EVP_DecryptInit_ex2(ctx_.get(), nullptr, nullptr, h.nonce, nullptr) != 1) {
    return fail("EVP_DecryptInit_ex2 (nonce)");
  }
  if (EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_SET_TAG, 16, h.signature) != 1) {
    return fail("EVP_CTRL_AEAD_SET_TAG");
  }
  if (IsCcm(cipher_)) {
    // Single shot: decrypt everything into *tail, then split.
    tail->resize(total);
    if (EVP_DecryptUpdate(ctx_.get(), nullptr, &len, nullptr, static_cast<int>(total)) != 1 ||
        EVP_DecryptUpdate(ctx_.get(), nullptr, &len, aad, kTransformAadSize) != 1) {
      return fail("EVP_DecryptUpdate (CCM length/AAD)");
    }
    // For CCM the tag is checked inside this call.
    if (EVP_DecryptUpdate(ctx_.get(), tail->data(), &len, in, static_cast<int>(total)) != 1) {
      return auth_failed();
    }
    if (head_len) {
      memcpy(head.data(), tail->data(), head_len);
      tail->erase(tail->begin(), tail->begin() + static_cast<ptrdiff_t>(head_len));
    }
    return total;
  }
  if (EVP_DecryptUpdate(ctx_.get(), nullptr, &len, aad, kTransformAadSize) != 1) {
    return fail("EVP_DecryptUpdate (GCM AAD)");
  }
  if (head_len &&
      EVP_DecryptUpdate(ctx_.get(), head.data(), &len, in, static_cast<int>(head_len)) != 1) {
    return fail("EVP_DecryptUpdate (GCM head)");
  }
  tail->resize(total - head_len);
  if (!tail->empty() && EVP_DecryptUpdate(ctx_.get(), tail->data(), &len, in + head_len,
                                          static_cast<int>(tail->size())) != 1) {
    return fail("EVP_DecryptUpdate (GCM)");
  }
  uint8_t none[16];
  if (EVP_DecryptFinal_ex(ctx_.get(), none, &len) != 1) return auth_failed();
  return total;
}

Status Decryptor::Open(ByteView wire, Bytes* message) {
  SECMODE_ASSIGN_OR_RETURN(size_t n, Open(wire, MutableByteView(), message));
  (void)n;
  return Status::Ok();
}

}  // namespace secmode::smb
