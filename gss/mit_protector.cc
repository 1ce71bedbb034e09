// The `mit` engine: Protector over MIT's GSS-API calls.
#include <openssl/crypto.h>

#include <utility>

#include "gss/gss_error.h"
#include "gss/gss_handles.h"
#include "gss/mit_status.h"
#include "gss/protector.h"

namespace secmode::gss {

using common::Bytes;
using common::ByteView;
using common::Status;

namespace {

void CopyOut(const BufferHandle& buf, Bytes* out) {
  const ByteView v = buf.view();
  out->assign(v.begin(), v.end());
}

class MitProtector : public Protector {
 public:
  explicit MitProtector(ContextPtr context) : context_(std::move(context)) {}

  Status Wrap(ByteView message, bool conf, Bytes* token) override {
    gss_buffer_desc in{message.size(), const_cast<uint8_t*>(message.data())};
    BufferHandle out;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major =
        gss_wrap(&minor, context_.get(), conf ? 1 : 0, GSS_C_QOP_DEFAULT, &in, &conf_state, &out.h);
    if (GSS_ERROR(major)) return GssError("gss_wrap", major, minor);
    CopyOut(out, token);
    if (conf && !conf_state) return Status::Internal("gss_wrap did not apply confidentiality");
    return Status::Ok();
  }

  Status Unwrap(ByteView token, Bytes* message, bool* conf) override {
    gss_buffer_desc in{token.size(), const_cast<uint8_t*>(token.data())};
    BufferHandle out;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major = gss_unwrap(&minor, context_.get(), &in, &out.h, &conf_state, nullptr);
    if (GSS_ERROR(major)) {
      if (out.h.value != nullptr) OPENSSL_cleanse(out.h.value, out.h.length);
      message->clear();
      return GssError("gss_unwrap", major, minor);
    }
    Status seq = CheckMitSequence("gss_unwrap", major, minor, &counts_);
    if (!seq.ok()) {
      // Refused for its sequence number: MIT's buffer holds the plaintext.
      if (out.h.value != nullptr) OPENSSL_cleanse(out.h.value, out.h.length);
      message->clear();
      return seq;
    }
    CopyOut(out, message);
    if (conf) *conf = conf_state != 0;
    return Status::Ok();
  }

  Status GetMic(ByteView message, Bytes* mic) override {
    gss_buffer_desc in{message.size(), const_cast<uint8_t*>(message.data())};
    BufferHandle out;
    OM_uint32 minor = 0;
    OM_uint32 major = gss_get_mic(&minor, context_.get(), GSS_C_QOP_DEFAULT, &in, &out.h);
    if (GSS_ERROR(major)) return GssError("gss_get_mic", major, minor);
    CopyOut(out, mic);
    return Status::Ok();
  }

  Status VerifyMic(ByteView message, ByteView mic) override {
    gss_buffer_desc msg{message.size(), const_cast<uint8_t*>(message.data())};
    gss_buffer_desc tok{mic.size(), const_cast<uint8_t*>(mic.data())};
    OM_uint32 minor = 0;
    OM_uint32 major = gss_verify_mic(&minor, context_.get(), &msg, &tok, nullptr);
    if (GSS_ERROR(major)) return GssError("gss_verify_mic", major, minor);
    return CheckMitSequence("gss_verify_mic", major, minor, &counts_);
  }

  Engine engine() const override { return Engine::kMit; }
  SequenceCounts sequence_counts() const override { return counts_; }

 private:
  ContextPtr context_;
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

std::unique_ptr<Protector> NewMitProtector(ContextPtr context) {
  return std::make_unique<MitProtector>(std::move(context));
}

common::Result<std::unique_ptr<Protector>> NewProtector(Engine engine, ContextPtr context) {
  switch (engine) {
    case Engine::kMit: return NewMitProtector(std::move(context));
    case Engine::kMitIov: return NewMitIovProtector(std::move(context));
    case Engine::kNative: return NewNativeProtector(std::move(context));
  }
  return Status::InvalidArgument("unknown engine value " +
                                 std::to_string(static_cast<int>(engine)));
}

}  // namespace secmode::gss
