#include "smb/legs.h"

#include <openssl/crypto.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include "smb/client_messages.h"
#include "smb/message.h"
#include "smb/transform.h"

namespace secmode::smb {

using common::Association;
using common::Bytes;
using common::ByteView;
using common::MutableByteView;
using common::Result;
using common::Status;

namespace {

// Which message a leg builds or expects.
enum class Shape { kWriteRequest, kReadResponse };

size_t PrefixSize(Shape s) {
  return s == Shape::kWriteRequest ? kWriteDataOffset : kReadDataOffset;
}

void WritePrefix(Shape s, const HeaderFields& h, size_t data_length, uint8_t* out) {
  if (s == Shape::kWriteRequest) {
    WriteWriteRequestPrefix(h, kSampleFileId, static_cast<uint32_t>(data_length), 0, out);
  } else {
    WriteReadResponsePrefix(h, static_cast<uint32_t>(data_length), out);
  }
}

Result<DataSpan> ParsePrefix(Shape s, ByteView prefix, size_t size) {
  return s == Shape::kWriteRequest ? ParseWriteRequestPrefix(prefix, size)
                                   : ParseReadResponsePrefix(prefix, size);
}

HeaderFields BaseHeader(Shape s, uint64_t session_id) {
  HeaderFields h;
  h.session_id = session_id;
  h.command = s == Shape::kWriteRequest ? Command::kWrite : Command::kRead;
  h.flags = s == Shape::kWriteRequest ? 0 : kFlagServerToRedir;
  return h;
}

Status CheckPayloadSize(ByteView payload) {
  if (payload.size() > UINT32_MAX - 256) {
    return Status::InvalidArgument("payload of " + std::to_string(payload.size()) +
                                   " bytes does not fit one SMB2 READ/WRITE");
  }
  return Status::Ok();
}

// smb-plain and smb-sign-*: the message is built in *wire, signed in place.
class MessageSealer : public common::Sealer {
 public:
  MessageSealer(Shape shape, uint64_t session_id, std::unique_ptr<Signer> signer)
      : shape_(shape), header_(BaseHeader(shape, session_id)), signer_(std::move(signer)) {}

  Status Seal(ByteView payload, Bytes* wire) override {
    SECMODE_RETURN_IF_ERROR(CheckPayloadSize(payload));
    const size_t prefix = PrefixSize(shape_);
    header_.message_id = next_message_id_++;
    wire->resize(prefix + payload.size());
    WritePrefix(shape_, header_, payload.size(), wire->data());
    if (!payload.empty()) memcpy(wire->data() + prefix, payload.data(), payload.size());
    if (signer_) return signer_->Sign(*wire);
    return Status::Ok();
  }

 private:
  Shape shape_;
  HeaderFields header_;
  std::unique_ptr<Signer> signer_;
  uint64_t next_message_id_ = 1;
};

class MessageOpener : public common::Opener {
 public:
  MessageOpener(Shape shape, std::unique_ptr<Signer> signer)
      : shape_(shape), signer_(std::move(signer)) {}

  Status Open(ByteView wire, Bytes* payload) override {
    payload->clear();
    if (signer_) {
      SECMODE_RETURN_IF_ERROR(signer_->Verify(wire));
      // Only after the signature verified: a forged MessageId must not
      // consume a slot of the window.
      SECMODE_RETURN_IF_ERROR(window_.Accept(Le64(wire.data() + 24)));
    }
    SECMODE_ASSIGN_OR_RETURN(DataSpan span, ParsePrefix(shape_, wire, wire.size()));
    payload->assign(wire.begin() + static_cast<ptrdiff_t>(span.offset),
                    wire.begin() + static_cast<ptrdiff_t>(span.offset + span.length));
    return Status::Ok();
  }

 private:
  Shape shape_;
  std::unique_ptr<Signer> signer_;
  MessageIdWindow window_;
};

// smb-enc-*: the fixed part is built on the stack and the payload encrypted
// straight from the caller's buffer into *wire (GCM), no intermediate copy.
class TransformSealer : public common::Sealer {
 public:
  TransformSealer(Shape shape, uint64_t session_id, std::unique_ptr<Encryptor> e)
      : shape_(shape), header_(BaseHeader(shape, session_id)), encryptor_(std::move(e)) {}

  Status Seal(ByteView payload, Bytes* wire) override {
    SECMODE_RETURN_IF_ERROR(CheckPayloadSize(payload));
    uint8_t prefix[kWriteDataOffset];
    header_.message_id = next_message_id_++;
    WritePrefix(shape_, header_, payload.size(), prefix);
    return encryptor_->Seal({ByteView(prefix, PrefixSize(shape_)), payload}, wire);
  }

 private:
  Shape shape_;
  HeaderFields header_;
  std::unique_ptr<Encryptor> encryptor_;
  uint64_t next_message_id_ = 1;
};

class TransformOpener : public common::Opener {
 public:
  TransformOpener(Shape shape, std::unique_ptr<Decryptor> d)
      : shape_(shape), decryptor_(std::move(d)) {}

  Status Open(ByteView wire, Bytes* payload) override {
    uint8_t prefix[kWriteDataOffset];
    Status s = OpenInto(wire, prefix, payload);
    // Whatever was decrypted of a refused message is wiped (the Decryptor
    // does so for its own failures; these are the checks after it). An
    // accepted one's prefix is its header, given to the caller anyway.
    if (!s.ok()) {
      OPENSSL_cleanse(prefix, sizeof prefix);
      OPENSSL_cleanse(payload->data(), payload->size());
      payload->clear();
    }
    return s;
  }

 private:
  Status OpenInto(ByteView wire, uint8_t* prefix, Bytes* payload) {
    const size_t prefix_size = PrefixSize(shape_);
    SECMODE_ASSIGN_OR_RETURN(size_t total,
                             decryptor_->Open(wire, MutableByteView(prefix, prefix_size), payload));
    auto span = ParsePrefix(shape_, ByteView(prefix, std::min(total, prefix_size)), total);
    if (!span.ok()) return span.status().Annotate("decrypted message");
    // The SMB2 header inside must belong to the session the transform was
    // addressed to (the Decryptor checked the TRANSFORM_HEADER's SessionId),
    // as MS-SMB2 3.3.5.2.1.1 has a server check; the client legs check the
    // same.
    const uint64_t inner = Le64(prefix + 40);
    if (inner != decryptor_->session_id()) {
      char buf[160];
      snprintf(buf, sizeof buf,
               "decrypted SMB2 header has SessionId 0x%llx, the TRANSFORM_HEADER 0x%llx",
               static_cast<unsigned long long>(inner),
               static_cast<unsigned long long>(decryptor_->session_id()));
      return Status::AuthFailed(buf);
    }
    // A replayed transform decrypts fine; its MessageId must be new (the
    // same window the signed openers use, checked only after the AEAD tag
    // verified so a forgery cannot consume a slot).
    SECMODE_RETURN_IF_ERROR(window_.Accept(Le64(prefix + 24)));
    // The data normally starts right after the fixed part, so *payload
    // already holds exactly it; otherwise move it into place.
    if (span->length == 0) {
      payload->clear();
    } else if (span->offset != prefix_size || span->length != payload->size()) {
      const size_t from = span->offset - prefix_size;
      memmove(payload->data(), payload->data() + from, span->length);
      payload->resize(span->length);
    }
    return Status::Ok();
  }

  Shape shape_;
  std::unique_ptr<Decryptor> decryptor_;
  MessageIdWindow window_;
};

}  // namespace

SmbMode SigningMode(SigningAlgorithm a) {
  auto row = SigningProfileOf(a);
  return {Protection::kSign, row.ok() ? *row : nullptr, nullptr};
}

SmbMode EncryptingMode(CipherId c) {
  auto row = CipherProfileOf(c);
  return {Protection::kEncrypt, nullptr, row.ok() ? *row : nullptr};
}

Status CheckSmbMode(const SmbMode& mode) {
  if (mode.protection == Protection::kSign && mode.signing == nullptr) {
    return Status::InvalidArgument("SMB signing mode without a signing algorithm");
  }
  if (mode.protection == Protection::kEncrypt && mode.cipher == nullptr) {
    return Status::InvalidArgument("SMB encryption mode without a cipher");
  }
  return Status::Ok();
}

Result<SmbMode> ParseSmbModeName(const std::string& f) {
  if (f == "smb-plain") return SmbMode{};
  for (const SigningProfile& s : SigningProfiles()) {
    if (f == s.mode) return SmbMode{Protection::kSign, &s, nullptr};
  }
  for (const CipherProfile& c : CipherProfiles()) {
    if (f == c.mode) return SmbMode{Protection::kEncrypt, nullptr, &c};
  }
  return Status::InvalidArgument("unknown SMB mode '" + f + "'");
}

const char* SmbModeName(const SmbMode& mode) {
  if (mode.protection == Protection::kSign && mode.signing) return mode.signing->mode;
  if (mode.protection == Protection::kEncrypt && mode.cipher) return mode.cipher->mode;
  return mode.protection == Protection::kPlain ? "smb-plain" : "smb-unknown";
}

std::string SmbModeNames() {
  std::string out = "smb-plain";
  for (const SigningProfile& s : SigningProfiles()) out += std::string(", ") + s.mode;
  for (const CipherProfile& c : CipherProfiles()) out += std::string(", ") + c.mode;
  return out;
}

uint16_t SmbModeDialect(const SmbMode& mode) {
  if (mode.protection == Protection::kSign && mode.signing) return mode.signing->dialect;
  return kDialect311;
}

Result<Association> MakeSmbAssociation(const SmbMode& mode, const SessionKeys& keys,
                                       uint64_t session_id) {
  SECMODE_RETURN_IF_ERROR(CheckSmbMode(mode));
  Association a;
  switch (mode.protection) {
    case Protection::kPlain:
      a.client_seal = std::make_unique<MessageSealer>(Shape::kWriteRequest, session_id, nullptr);
      a.server_open = std::make_unique<MessageOpener>(Shape::kWriteRequest, nullptr);
      a.server_seal = std::make_unique<MessageSealer>(Shape::kReadResponse, session_id, nullptr);
      a.client_open = std::make_unique<MessageOpener>(Shape::kReadResponse, nullptr);
      return a;
    case Protection::kSign: {
      // Each leg gets its own keyed context: the two sides run on different
      // threads and a context is single-threaded.
      std::unique_ptr<Signer> s[4];
      for (auto& signer : s) {
        SECMODE_ASSIGN_OR_RETURN(signer, Signer::Create(mode.signing->id, keys.signing));
      }
      a.client_seal =
          std::make_unique<MessageSealer>(Shape::kWriteRequest, session_id, std::move(s[0]));
      a.server_open = std::make_unique<MessageOpener>(Shape::kWriteRequest, std::move(s[1]));
      a.server_seal =
          std::make_unique<MessageSealer>(Shape::kReadResponse, session_id, std::move(s[2]));
      a.client_open = std::make_unique<MessageOpener>(Shape::kReadResponse, std::move(s[3]));
      return a;
    }
    case Protection::kEncrypt: {
      // Each Encryptor draws its own counters from the nonce ledger
      // (transform.h), so even equal direction keys never share a nonce.
      const CipherId c = mode.cipher->id;
      SECMODE_ASSIGN_OR_RETURN(auto ce, Encryptor::Create(c, keys.client_to_server, session_id, 0));
      SECMODE_ASSIGN_OR_RETURN(auto sd, Decryptor::Create(c, keys.client_to_server, session_id));
      SECMODE_ASSIGN_OR_RETURN(auto se, Encryptor::Create(c, keys.server_to_client, session_id, 0));
      SECMODE_ASSIGN_OR_RETURN(auto cd, Decryptor::Create(c, keys.server_to_client, session_id));
      a.client_seal =
          std::make_unique<TransformSealer>(Shape::kWriteRequest, session_id, std::move(ce));
      a.server_open = std::make_unique<TransformOpener>(Shape::kWriteRequest, std::move(sd));
      a.server_seal =
          std::make_unique<TransformSealer>(Shape::kReadResponse, session_id, std::move(se));
      a.client_open = std::make_unique<TransformOpener>(Shape::kReadResponse, std::move(cd));
      return a;
    }
  }
  return Status::InvalidArgument("unknown SMB protection");
}

Result<SessionKeys> DeriveKeysForMode(const SmbMode& mode, ByteView gss_key,
                                      ByteView preauth_hash) {
  SECMODE_RETURN_IF_ERROR(CheckSmbMode(mode));
  if (mode.protection == Protection::kPlain) return SessionKeys{};
  if (SmbModeDialect(mode) != kDialect311) return DeriveSmb2Keys(gss_key);
  const CipherId cipher =
      mode.protection == Protection::kEncrypt ? mode.cipher->id : CipherId::kAes128Gcm;
  return DeriveSmb311Keys(gss_key, preauth_hash, cipher);
}

Result<Bytes> SyntheticPreauthHash(ByteView gss_token_hash) {
  Bytes hash(64, 0);
  Bytes message;
  const Command commands[] = {Command::kNegotiate, Command::kNegotiate, Command::kSessionSetup,
                              Command::kSessionSetup};
  for (int i = 0; i < 4; ++i) {
    HeaderFields h;
    h.command = commands[i];
    h.flags = (i % 2) ? kFlagServerToRedir : 0;
    h.message_id = static_cast<uint64_t>(i / 2);
    message.assign(kHeaderSize, 0);
    WriteHeader(h, message.data());
    message.insert(message.end(), gss_token_hash.begin(), gss_token_hash.end());
    SECMODE_RETURN_IF_ERROR(UpdatePreauthHash(&hash, message));
  }
  return hash;
}

}  // namespace secmode::smb
