#include "smb/transform.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/hmac.h"
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

std::string Hex64(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Fetches the cipher once and keys `ctx` once. For CCM the nonce length (11)
// and tag length (16) must be set before the key.
Status SetUpContext(const CipherProfile& cipher, ByteView key, bool encrypt,
                    common::OsslPtr<EVP_CIPHER>* evp, common::OsslPtr<EVP_CIPHER_CTX>* ctx) {
  if (key.size() != cipher.key_bytes) {
    return Status::InvalidArgument(std::string(cipher.name) + " key of " + N(key.size()) +
                                   " bytes, need " + N(cipher.key_bytes));
  }
  evp->reset(EVP_CIPHER_fetch(nullptr, cipher.evp_name, nullptr));
  if (!*evp) return OpenSslError("EVP_CIPHER_fetch");
  ctx->reset(EVP_CIPHER_CTX_new());
  if (!*ctx) return OpenSslError("EVP_CIPHER_CTX_new");
  EVP_CIPHER_CTX* c = ctx->get();
  if (EVP_CipherInit_ex2(c, evp->get(), nullptr, nullptr, encrypt ? 1 : 0, nullptr) != 1) {
    return OpenSslError("EVP_CipherInit_ex2 (cipher)");
  }
  if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, static_cast<int>(cipher.nonce_bytes),
                          nullptr) != 1) {
    return OpenSslError("EVP_CTRL_AEAD_SET_IVLEN");
  }
  // CCM bakes the tag length M into its state at key setup (both ways).
  if (cipher.aead == Aead::kCcm &&
      EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, nullptr) != 1) {
    return OpenSslError("EVP_CTRL_AEAD_SET_TAG (CCM tag length)");
  }
  if (EVP_CipherInit_ex2(c, nullptr, key.data(), nullptr, encrypt ? 1 : 0, nullptr) != 1) {
    return OpenSslError("EVP_CipherInit_ex2 (key)");
  }
  return Status::Ok();
}

// The process-wide nonce ledger (transform.h): reserved counter ranges per
// key, the key known only by HMAC-SHA256(per-process random salt, key).
class NonceLedger {
 public:
  struct Range {
    uint64_t first = 0, last = 0;
  };

  static NonceLedger& Get() {
    static NonceLedger* ledger =
        new NonceLedger();  // never destroyed: Encryptors may outlive statics
    return *ledger;
  }

  Result<std::string> KeyId(ByteView key) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!salted_) {
      if (RAND_bytes(salt_, sizeof salt_) != 1) return OpenSslError("RAND_bytes (nonce ledger)");
      salted_ = true;
    }
    common::Hmac h;
    SECMODE_RETURN_IF_ERROR(h.Init(common::HashKind::kSha256, ByteView(salt_, sizeof salt_)));
    h.Start();
    h.Update(key.data(), key.size());
    uint8_t id[32];
    h.Finish(id);
    return std::string(reinterpret_cast<const char*>(id), sizeof id);
  }

  Status Reserve(const std::string& key_id, uint64_t first, uint64_t last) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Range>& taken = ranges_[key_id];
    for (const Range& r : taken) {
      if (first <= r.last && r.first <= last) {
        return Status::InvalidArgument(
            "nonce counters " + N(first) + ".." + N(last) + " overlap counters " + N(r.first) +
            ".." + N(r.last) +
            " already given to another Encryptor with this key in this process; a (key, nonce) "
            "pair would repeat");
      }
    }
    taken.push_back({first, last});
    return Status::Ok();
  }

  // The lowest block of `size` counters (or what is left at the top of the
  // space) that no reservation of this key covers.
  Result<Range> Draw(const std::string& key_id, uint64_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Range>& taken = ranges_[key_id];
    std::sort(taken.begin(), taken.end(),
              [](const Range& a, const Range& b) { return a.first < b.first; });
    uint64_t candidate = 0;
    bool room = true;  // false once the space above `candidate` is gone
    for (const Range& r : taken) {
      if (r.first > candidate && r.first - candidate >= size) break;
      if (r.last == UINT64_MAX) {
        room = false;
        break;
      }
      candidate = std::max(candidate, r.last + 1);
    }
    if (!room) {
      if (taken.empty()) ranges_.erase(key_id);
      return Status::Exhausted(
          "no unused nonce counters left for this key in this process; the key must be "
          "replaced");
    }
    Range got{candidate, candidate + std::min(size - 1, UINT64_MAX - candidate)};
    taken.push_back(got);
    return got;
  }

  // Keeps only the counters below `next` (those were used); with
  // `exhausted` the whole range was used.
  void Release(const std::string& key_id, Range range, uint64_t next, bool exhausted) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ranges_.find(key_id);
    if (it == ranges_.end()) return;
    std::vector<Range>& taken = it->second;
    for (size_t i = 0; i < taken.size(); ++i) {
      if (taken[i].first != range.first || taken[i].last != range.last) continue;
      if (exhausted) return;
      if (next <= range.first) {
        taken.erase(taken.begin() + static_cast<ptrdiff_t>(i));
      } else {
        taken[i].last = next - 1;
      }
      break;
    }
    if (taken.empty()) ranges_.erase(it);
  }

 private:
  NonceLedger() = default;
  std::mutex mu_;
  bool salted_ = false;
  uint8_t salt_[32] = {};
  std::unordered_map<std::string, std::vector<Range>> ranges_;
};

}  // namespace

Result<TransformHeader> ParseTransformHeaderPrefix(ByteView w) {
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
  return h;
}

Result<TransformHeader> ParseTransformHeader(ByteView w) {
  SECMODE_ASSIGN_OR_RETURN(TransformHeader h, ParseTransformHeaderPrefix(w));
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
  SECMODE_ASSIGN_OR_RETURN(const CipherProfile* profile, CipherProfileOf(cipher));
  const size_t channel_bytes = profile->nonce_bytes - 8;
  if (channel_bytes < 4 && channel_id >> (8 * channel_bytes) != 0) {
    return Status::InvalidArgument("channel id " + N(channel_id) + " does not fit the " +
                                   N(channel_bytes) + " channel bytes of an " +
                                   N(profile->nonce_bytes) + "-byte " + profile->name + " nonce");
  }
  if (first > last) {
    return Status::InvalidArgument("nonce counter range is empty: first " + N(first) + " > last " +
                                   N(last));
  }
  NonceSequence n;
  n.profile_ = profile;
  n.channel_ = channel_id;
  n.first_ = first;
  n.next_ = first;
  n.last_ = last;
  return n;
}

NonceSequence::NonceSequence(NonceSequence&& o) noexcept
    : profile_(o.profile_),
      channel_(o.channel_),
      first_(o.first_),
      next_(o.next_),
      last_(o.last_),
      exhausted_(o.exhausted_) {
  o.exhausted_ = true;  // the source must never hand out these nonces again
}

NonceSequence& NonceSequence::operator=(NonceSequence&& o) noexcept {
  if (this != &o) {
    profile_ = o.profile_;
    channel_ = o.channel_;
    first_ = o.first_;
    next_ = o.next_;
    last_ = o.last_;
    exhausted_ = o.exhausted_;
    o.exhausted_ = true;
  }
  return *this;
}

Status NonceSequence::Next(uint8_t nonce[16]) {
  if (exhausted_) {
    return Status::Exhausted("nonce space of this key is used up (last counter " + N(last_) +
                             ", channel " + N(channel_) + "); the key must be replaced");
  }
  memset(nonce, 0, 16);
  PutLe64(nonce, next_);
  for (size_t i = 8; i < profile_->nonce_bytes; ++i) {
    nonce[i] = static_cast<uint8_t>(channel_ >> (8 * (i - 8)));
  }
  if (next_ == last_) {
    exhausted_ = true;
  } else {
    ++next_;
  }
  return Status::Ok();
}

Result<std::unique_ptr<Encryptor>> Encryptor::Create(CipherId cipher, ByteView key,
                                                     uint64_t session_id, uint32_t channel_id) {
  SECMODE_ASSIGN_OR_RETURN(NonceSequence n, NonceSequence::Create(cipher, channel_id));
  return Make(cipher, key, session_id, std::move(n), true);
}

Result<std::unique_ptr<Encryptor>> Encryptor::Create(CipherId cipher, ByteView key,
                                                     uint64_t session_id, NonceSequence nonces) {
  return Make(cipher, key, session_id, std::move(nonces), false);
}

Result<std::unique_ptr<Encryptor>> Encryptor::Make(CipherId cipher, ByteView key,
                                                   uint64_t session_id, NonceSequence nonces,
                                                   bool draw) {
  SECMODE_ASSIGN_OR_RETURN(const CipherProfile* profile, CipherProfileOf(cipher));
  if (nonces.profile().nonce_bytes != profile->nonce_bytes) {
    return Status::InvalidArgument(std::string("nonce sequence made for ") + nonces.profile().name +
                                   " (" + N(nonces.profile().nonce_bytes) +
                                   "-byte nonces) given to a " + profile->name + " Encryptor (" +
                                   N(profile->nonce_bytes) + "-byte nonces)");
  }
  if (nonces.exhausted()) {
    return Status::Exhausted("nonce sequence given to the Encryptor is already used up");
  }
  const uint32_t channel = nonces.channel();
  std::unique_ptr<Encryptor> e(new Encryptor(profile, session_id, std::move(nonces)));
  SECMODE_RETURN_IF_ERROR(SetUpContext(*profile, key, true, &e->evp_cipher_, &e->ctx_));
  NonceLedger& ledger = NonceLedger::Get();
  SECMODE_ASSIGN_OR_RETURN(std::string key_id, ledger.KeyId(key));
  if (draw) {
    SECMODE_ASSIGN_OR_RETURN(NonceLedger::Range r, ledger.Draw(key_id, kNonceBlock));
    SECMODE_ASSIGN_OR_RETURN(e->nonces_, NonceSequence::Create(cipher, channel, r.first, r.last));
    e->reserved_first_ = r.first;
    e->reserved_last_ = r.last;
  } else {
    e->reserved_first_ = e->nonces_.next_counter();
    e->reserved_last_ = e->nonces_.last_counter();
    SECMODE_RETURN_IF_ERROR(ledger.Reserve(key_id, e->reserved_first_, e->reserved_last_));
  }
  e->key_id_ = std::move(key_id);
  return e;
}

Encryptor::~Encryptor() {
  if (key_id_.empty()) return;
  NonceLedger::Get().Release(key_id_, {reserved_first_, reserved_last_}, nonces_.next_counter(),
                             nonces_.exhausted());
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
  if (profile_->aead == Aead::kCcm) {
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
  SECMODE_ASSIGN_OR_RETURN(const CipherProfile* profile, CipherProfileOf(cipher));
  std::unique_ptr<Decryptor> d(new Decryptor(profile, session_id));
  SECMODE_RETURN_IF_ERROR(SetUpContext(*profile, key, false, &d->evp_cipher_, &d->ctx_));
  return d;
}

Result<size_t> Decryptor::Open(ByteView wire, MutableByteView head, Bytes* tail) {
  // *tail keeps its size when it already fits (the common case of one
  // buffer reused per message): clearing it first would make resize() zero
  // a whole payload per message. Every failure clears it.
  Result<size_t> r = OpenInto(wire, head, tail);
  if (!r.ok()) {
    // GCM decrypts before the tag is checked at the end: what it wrote is
    // unauthenticated and must not linger in the caller's buffers.
    OPENSSL_cleanse(tail->data(), tail->size());
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
        std::string(profile_->name) +
        " tag mismatch: header, AAD or ciphertext was altered (or wrong key)");
  };
  if (EVP_DecryptInit_ex2(ctx_.get(), nullptr, nullptr, h.nonce, nullptr) != 1) {
    return fail("EVP_DecryptInit_ex2 (nonce)");
  }
  if (EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_SET_TAG, 16, h.signature) != 1) {
    return fail("EVP_CTRL_AEAD_SET_TAG");
  }
  if (profile_->aead == Aead::kCcm) {
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
