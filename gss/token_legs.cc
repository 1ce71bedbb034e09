#include "gss/token_legs.h"

#include <openssl/crypto.h>

#include <cstring>
#include <string>

namespace secmode::gss {

using common::Bytes;
using common::ByteView;
using common::Status;

namespace {

void PutU32(uint8_t* p, size_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}
size_t GetU32(const uint8_t* p) {
  return size_t{p[0]} << 24 | size_t{p[1]} << 16 | size_t{p[2]} << 8 | p[3];
}

class WrapSealer : public common::Sealer {
 public:
  WrapSealer(std::shared_ptr<Protector> p, bool conf) : p_(std::move(p)), conf_(conf) {}
  Status Seal(ByteView payload, Bytes* wire) override { return p_->Wrap(payload, conf_, wire); }

 private:
  std::shared_ptr<Protector> p_;
  bool conf_;
};

class WrapOpener : public common::Opener {
 public:
  WrapOpener(std::shared_ptr<Protector> p, bool conf) : p_(std::move(p)), conf_(conf) {}
  Status Open(ByteView wire, Bytes* payload) override {
    bool sealed = false;
    SECMODE_RETURN_IF_ERROR(p_->Unwrap(wire, payload, &sealed));
    if (conf_ && !sealed) {
      OPENSSL_cleanse(payload->data(), payload->size());
      payload->clear();
      return Status::AuthFailed("wrap token was not sealed but the mode requires privacy");
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<Protector> p_;
  bool conf_;
};

// krb5i: u32 len | data | MIC(data).
class MicDataSealer : public common::Sealer {
 public:
  explicit MicDataSealer(std::shared_ptr<Protector> p) : p_(std::move(p)) {}
  Status Seal(ByteView payload, Bytes* wire) override {
    if (payload.size() > 0xFFFFFFFFu) return Status::InvalidArgument("payload too large");
    SECMODE_RETURN_IF_ERROR(p_->GetMic(payload, &mic_));
    wire->resize(4 + payload.size() + mic_.size());
    PutU32(wire->data(), payload.size());
    if (!payload.empty()) std::memcpy(wire->data() + 4, payload.data(), payload.size());
    std::memcpy(wire->data() + 4 + payload.size(), mic_.data(), mic_.size());
    return Status::Ok();
  }

 private:
  std::shared_ptr<Protector> p_;
  Bytes mic_;  // reused across messages
};

class MicDataOpener : public common::Opener {
 public:
  explicit MicDataOpener(std::shared_ptr<Protector> p) : p_(std::move(p)) {}
  Status Open(ByteView wire, Bytes* payload) override {
    payload->clear();
    if (wire.size() < 4) {
      return Status::Corrupt("truncated krb5i message: " + std::to_string(wire.size()) +
                             " bytes, need at least 4");
    }
    size_t len = GetU32(wire.data());
    if (len > wire.size() - 4) {
      return Status::Corrupt("krb5i data length " + std::to_string(len) + " exceeds the " +
                             std::to_string(wire.size() - 4) + " bytes that follow");
    }
    ByteView data = wire.subspan(4, len);
    SECMODE_RETURN_IF_ERROR(p_->VerifyMic(data, wire.subspan(4 + len)));
    payload->assign(data.begin(), data.end());
    return Status::Ok();
  }

 private:
  std::shared_ptr<Protector> p_;
};

// krb5: u32 mic_len | MIC(header stand-in) | payload.
class HeaderMicSealer : public common::Sealer {
 public:
  explicit HeaderMicSealer(std::shared_ptr<Protector> p) : p_(std::move(p)) {}
  Status Seal(ByteView payload, Bytes* wire) override {
    SECMODE_RETURN_IF_ERROR(p_->GetMic(HeaderStandIn(), &mic_));
    wire->resize(4 + mic_.size() + payload.size());
    PutU32(wire->data(), mic_.size());
    std::memcpy(wire->data() + 4, mic_.data(), mic_.size());
    if (!payload.empty())
      std::memcpy(wire->data() + 4 + mic_.size(), payload.data(), payload.size());
    return Status::Ok();
  }

 private:
  std::shared_ptr<Protector> p_;
  Bytes mic_;
};

class HeaderMicOpener : public common::Opener {
 public:
  explicit HeaderMicOpener(std::shared_ptr<Protector> p) : p_(std::move(p)) {}
  Status Open(ByteView wire, Bytes* payload) override {
    payload->clear();
    if (wire.size() < 4) {
      return Status::Corrupt("truncated krb5 message: " + std::to_string(wire.size()) +
                             " bytes, need at least 4");
    }
    size_t len = GetU32(wire.data());
    if (len > wire.size() - 4) {
      return Status::Corrupt("krb5 verifier length " + std::to_string(len) + " exceeds the " +
                             std::to_string(wire.size() - 4) + " bytes that follow");
    }
    SECMODE_RETURN_IF_ERROR(p_->VerifyMic(HeaderStandIn(), wire.subspan(4, len)));
    ByteView data = wire.subspan(4 + len);
    payload->assign(data.begin(), data.end());
    return Status::Ok();
  }

 private:
  std::shared_ptr<Protector> p_;
};

}  // namespace

const char* ProtectionName(Protection p) {
  switch (p) {
    case Protection::kHeaderMic: return "header-mic";
    case Protection::kMicData: return "mic";
    case Protection::kWrapConf: return "wrap-conf";
    case Protection::kWrapInteg: return "wrap-integ";
  }
  return "?";
}

ByteView HeaderStandIn() {
  // xid, CALL, rpcvers 2, NFS program 100003 v4 COMPOUND, then an
  // RPCSEC_GSS credential header: flavor 6, length, version 1, DATA, seq 1,
  // service 1 (40 bytes in all, RFC 5531 / RFC 2203 5.3.1).
  static const uint8_t kHeader[40] = {0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1,
                                      0x86, 0xa3, 0,    0,    0, 4, 0, 0, 0, 1, 0, 0, 0, 6,
                                      0,    0,    0,    0x18, 0, 0, 0, 1, 0, 0, 0, 0};
  return ByteView(kHeader, sizeof kHeader);
}

void MakeTokenLegs(Protection protection, std::shared_ptr<Protector> initiator,
                   std::shared_ptr<Protector> acceptor, common::Association* a) {
  switch (protection) {
    case Protection::kHeaderMic:
      a->client_seal = std::make_unique<HeaderMicSealer>(initiator);
      a->server_open = std::make_unique<HeaderMicOpener>(acceptor);
      a->server_seal = std::make_unique<HeaderMicSealer>(acceptor);
      a->client_open = std::make_unique<HeaderMicOpener>(initiator);
      break;
    case Protection::kMicData:
      a->client_seal = std::make_unique<MicDataSealer>(initiator);
      a->server_open = std::make_unique<MicDataOpener>(acceptor);
      a->server_seal = std::make_unique<MicDataSealer>(acceptor);
      a->client_open = std::make_unique<MicDataOpener>(initiator);
      break;
    case Protection::kWrapConf:
    case Protection::kWrapInteg: {
      bool conf = protection == Protection::kWrapConf;
      a->client_seal = std::make_unique<WrapSealer>(initiator, conf);
      a->server_open = std::make_unique<WrapOpener>(acceptor, conf);
      a->server_seal = std::make_unique<WrapSealer>(acceptor, conf);
      a->client_open = std::make_unique<WrapOpener>(initiator, conf);
      break;
    }
  }
}

}  // namespace secmode::gss
