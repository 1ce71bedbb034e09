#include "gss/mit_engine.h"

#include "gss/gss_error.h"

namespace secmode::gss {

using common::ByteView;
using common::Bytes;
using common::Status;

namespace {

gss_ctx_id_t ContextOf(const ContextPair& pair, Side side) {
  return side == Side::kInitiator ? pair.initiator() : pair.acceptor();
}

class MitWrapSealer : public common::Sealer {
 public:
  MitWrapSealer(std::shared_ptr<ContextPair> pair, Side side, bool conf)
      : pair_(std::move(pair)), context_(ContextOf(*pair_, side)), conf_(conf) {}

  Status Seal(ByteView payload, Bytes* wire) override {
    gss_buffer_desc in{payload.size(), const_cast<uint8_t*>(payload.data())};
    gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major = gss_wrap(&minor, context_, conf_ ? 1 : 0, GSS_C_QOP_DEFAULT, &in,
                               &conf_state, &out);
    if (GSS_ERROR(major)) return GssError("gss_wrap", major, minor);
    const auto* p = static_cast<const uint8_t*>(out.value);
    wire->assign(p, p + out.length);
    gss_release_buffer(&minor, &out);
    if (conf_ && !conf_state) return Status::Internal("gss_wrap did not apply confidentiality");
    return Status::Ok();
  }

 private:
  std::shared_ptr<ContextPair> pair_;
  gss_ctx_id_t context_;
  bool conf_;
};

class MitWrapOpener : public common::Opener {
 public:
  MitWrapOpener(std::shared_ptr<ContextPair> pair, Side side, bool conf)
      : pair_(std::move(pair)), context_(ContextOf(*pair_, side)), conf_(conf) {}

  Status Open(ByteView wire, Bytes* payload) override {
    gss_buffer_desc in{wire.size(), const_cast<uint8_t*>(wire.data())};
    gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major = gss_unwrap(&minor, context_, &in, &out, &conf_state, nullptr);
    if (GSS_ERROR(major) || (major & (GSS_S_DUPLICATE_TOKEN | GSS_S_OLD_TOKEN))) {
      gss_release_buffer(&minor, &out);
      return GssError("gss_unwrap", major, minor);
    }
    const auto* p = static_cast<const uint8_t*>(out.value);
    payload->assign(p, p + out.length);
    gss_release_buffer(&minor, &out);
    if (conf_ && !conf_state) {
      return Status::AuthFailed("gss_unwrap: token was not sealed but krb5p requires privacy");
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<ContextPair> pair_;
  gss_ctx_id_t context_;
  bool conf_;
};

}  // namespace

std::unique_ptr<common::Sealer> NewMitSealer(std::shared_ptr<ContextPair> pair, Side side,
                                             Protection protection) {
  switch (protection) {
    case Protection::kWrapConf:
      return std::make_unique<MitWrapSealer>(std::move(pair), side, true);
  }
  return nullptr;
}

std::unique_ptr<common::Opener> NewMitOpener(std::shared_ptr<ContextPair> pair, Side side,
                                             Protection protection) {
  switch (protection) {
    case Protection::kWrapConf:
      return std::make_unique<MitWrapOpener>(std::move(pair), side, true);
  }
  return nullptr;
}

}  // namespace secmode::gss
