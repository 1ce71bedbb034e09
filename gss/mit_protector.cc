// The `mit` engine: Protector over MIT's GSS-API calls.
#include "gss/gss_error.h"
#include "gss/mit_status.h"
#include "gss/protector.h"

namespace secmode::gss {

using common::Bytes;
using common::ByteView;
using common::Status;

namespace {

void TakeBuffer(gss_buffer_desc* buf, Bytes* out) {
  const auto* p = static_cast<const uint8_t*>(buf->value);
  out->assign(p, p + buf->length);
  OM_uint32 minor;
  gss_release_buffer(&minor, buf);
}

class MitProtector : public Protector {
 public:
  explicit MitProtector(gss_ctx_id_t context) : context_(context) {}
  ~MitProtector() override {
    OM_uint32 minor;
    if (context_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &context_, GSS_C_NO_BUFFER);
  }

  Status Wrap(ByteView message, bool conf, Bytes* token) override {
    gss_buffer_desc in{message.size(), const_cast<uint8_t*>(message.data())};
    gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major =
        gss_wrap(&minor, context_, conf ? 1 : 0, GSS_C_QOP_DEFAULT, &in, &conf_state, &out);
    if (GSS_ERROR(major)) return GssError("gss_wrap", major, minor);
    TakeBuffer(&out, token);
    if (conf && !conf_state) return Status::Internal("gss_wrap did not apply confidentiality");
    return Status::Ok();
  }

  Status Unwrap(ByteView token, Bytes* message, bool* conf) override {
    gss_buffer_desc in{token.size(), const_cast<uint8_t*>(token.data())};
    gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major = gss_unwrap(&minor, context_, &in, &out, &conf_state, nullptr);
    if (GSS_ERROR(major)) {
      gss_release_buffer(&minor, &out);
      message->clear();
      return GssError("gss_unwrap", major, minor);
    }
    Status seq = CheckMitSequence("gss_unwrap", major, minor, &counts_);
    if (!seq.ok()) {
      gss_release_buffer(&minor, &out);
      message->clear();
      return seq;
    }
    TakeBuffer(&out, message);
    if (conf) *conf = conf_state != 0;
    return Status::Ok();
  }

  Status GetMic(ByteView message, Bytes* mic) override {
    gss_buffer_desc in{message.size(), const_cast<uint8_t*>(message.data())};
    gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    OM_uint32 major = gss_get_mic(&minor, context_, GSS_C_QOP_DEFAULT, &in, &out);
    if (GSS_ERROR(major)) return GssError("gss_get_mic", major, minor);
    TakeBuffer(&out, mic);
    return Status::Ok();
  }

  Status VerifyMic(ByteView message, ByteView mic) override {
    gss_buffer_desc msg{message.size(), const_cast<uint8_t*>(message.data())};
    gss_buffer_desc tok{mic.size(), const_cast<uint8_t*>(mic.data())};
    OM_uint32 minor = 0;
    OM_uint32 major = gss_verify_mic(&minor, context_, &msg, &tok, nullptr);
    if (GSS_ERROR(major)) return GssError("gss_verify_mic", major, minor);
    return CheckMitSequence("gss_verify_mic", major, minor, &counts_);
  }

  Engine engine() const override { return Engine::kMit; }
  SequenceCounts sequence_counts() const override { return counts_; }

 private:
  gss_ctx_id_t context_;
  SequenceCounts counts_;
};

}  // namespace

const char* EngineName(Engine engine) {
  switch (engine) {
    case Engine::kMit: return "mit";
    case Engine::kNative: return "native";
    case Engine::kMitIov: return "mit-iov";
  }
  return "unknown";
}

common::Result<Engine> ParseEngine(const std::string& name) {
  if (name == "mit") return Engine::kMit;
  if (name == "native") return Engine::kNative;
  if (name == "mit-iov") return Engine::kMitIov;
  return Status::InvalidArgument("unknown engine '" + name + "' (known: mit, native, mit-iov)");
}

std::unique_ptr<Protector> NewMitProtector(gss_ctx_id_t context) {
  return std::make_unique<MitProtector>(context);
}

common::Result<std::unique_ptr<Protector>> NewProtector(Engine engine, gss_ctx_id_t context) {
  switch (engine) {
    case Engine::kMit: return NewMitProtector(context);
    case Engine::kMitIov: return NewMitIovProtector(context);
    case Engine::kNative: return NewNativeProtector(context);
  }
  OM_uint32 minor;
  gss_delete_sec_context(&minor, &context, GSS_C_NO_BUFFER);
  return Status::InvalidArgument("unknown engine value " +
                                 std::to_string(static_cast<int>(engine)));
}

}  // namespace secmode::gss
