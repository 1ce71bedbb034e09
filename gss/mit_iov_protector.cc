// The `mit-iov` engine: MIT's iov calls on caller-owned buffers, the way an
// implementation that avoids MIT's per-call allocations uses the library
// (RFC 4121 tokens with RRC = 0, byte-identical in layout to gss_wrap's).
//   Wrap:   HEADER | DATA | PADDING | TRAILER laid out in the output token,
//           the data copied in once and sealed in place.
//   Unwrap: the token copied into the output buffer as a STREAM, opened in
//           place, the payload moved to the front.
//   MIC:    DATA + MIC_TOKEN, the MIC written straight into the output.
#include <gssapi/gssapi_ext.h>

#include <cstring>
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

gss_buffer_desc View(ByteView v) {
  return gss_buffer_desc{v.size(), const_cast<uint8_t*>(v.data())};
}

class MitIovProtector : public Protector {
 public:
  explicit MitIovProtector(ContextPtr context) : context_(std::move(context)) {}

  Status Wrap(ByteView message, bool conf, Bytes* token) override {
    gss_iov_buffer_desc iov[4] = {};
    iov[0].type = GSS_IOV_BUFFER_TYPE_HEADER;
    iov[1].type = GSS_IOV_BUFFER_TYPE_DATA;
    iov[1].buffer = View(message);
    iov[2].type = GSS_IOV_BUFFER_TYPE_PADDING;
    iov[3].type = GSS_IOV_BUFFER_TYPE_TRAILER;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major = gss_wrap_iov_length(&minor, context_.get(), conf ? 1 : 0, GSS_C_QOP_DEFAULT,
                                          &conf_state, iov, 4);
    if (GSS_ERROR(major)) return GssError("gss_wrap_iov_length", major, minor);
    const size_t header = iov[0].buffer.length, padding = iov[2].buffer.length,
                 trailer = iov[3].buffer.length, len = message.size();
    token->resize(header + len + padding + trailer);
    uint8_t* t = token->data();
    if (len > 0) std::memcpy(t + header, message.data(), len);
    iov[0].buffer.value = t;
    iov[1].buffer.value = t + header;
    iov[2].buffer.value = t + header + len;
    iov[3].buffer.value = t + header + len + padding;
    major =
        gss_wrap_iov(&minor, context_.get(), conf ? 1 : 0, GSS_C_QOP_DEFAULT, &conf_state, iov, 4);
    if (GSS_ERROR(major)) return GssError("gss_wrap_iov", major, minor);
    if (conf && !conf_state) return Status::Internal("gss_wrap_iov did not apply confidentiality");
    return Status::Ok();
  }

  Status Unwrap(ByteView token, Bytes* message, bool* conf) override {
    message->assign(token.begin(), token.end());
    gss_iov_buffer_desc iov[2] = {};
    iov[0].type = GSS_IOV_BUFFER_TYPE_STREAM;
    iov[0].buffer = gss_buffer_desc{message->size(), message->data()};
    iov[1].type = GSS_IOV_BUFFER_TYPE_DATA;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major = gss_unwrap_iov(&minor, context_.get(), &conf_state, nullptr, iov, 2);
    if (GSS_ERROR(major)) {
      message->clear();
      return GssError("gss_unwrap_iov", major, minor);
    }
    Status seq = CheckMitSequence("gss_unwrap_iov", major, minor, &counts_);
    if (!seq.ok()) {
      message->clear();
      return seq;
    }
    const auto* data = static_cast<const uint8_t*>(iov[1].buffer.value);
    const size_t len = iov[1].buffer.length;
    if (len > 0 && (data < message->data() || data + len > message->data() + message->size())) {
      message->clear();
      return Status::Internal("gss_unwrap_iov returned data outside the stream buffer");
    }
    if (len > 0) std::memmove(message->data(), data, len);
    message->resize(len);
    if (conf) *conf = conf_state != 0;
    return Status::Ok();
  }

  Status GetMic(ByteView message, Bytes* mic) override {
    gss_iov_buffer_desc iov[2] = {};
    iov[0].type = GSS_IOV_BUFFER_TYPE_DATA;
    iov[0].buffer = View(message);
    iov[1].type = GSS_IOV_BUFFER_TYPE_MIC_TOKEN;
    OM_uint32 minor = 0;
    OM_uint32 major = gss_get_mic_iov_length(&minor, context_.get(), GSS_C_QOP_DEFAULT, iov, 2);
    if (GSS_ERROR(major)) return GssError("gss_get_mic_iov_length", major, minor);
    mic->resize(iov[1].buffer.length);
    iov[1].buffer.value = mic->data();
    major = gss_get_mic_iov(&minor, context_.get(), GSS_C_QOP_DEFAULT, iov, 2);
    if (GSS_ERROR(major)) return GssError("gss_get_mic_iov", major, minor);
    return Status::Ok();
  }

  Status VerifyMic(ByteView message, ByteView mic) override {
    gss_iov_buffer_desc iov[2] = {};
    iov[0].type = GSS_IOV_BUFFER_TYPE_DATA;
    iov[0].buffer = View(message);
    iov[1].type = GSS_IOV_BUFFER_TYPE_MIC_TOKEN;
    iov[1].buffer = View(mic);
    OM_uint32 minor = 0;
    OM_uint32 major = gss_verify_mic_iov(&minor, context_.get(), nullptr, iov, 2);
    if (GSS_ERROR(major)) return GssError("gss_verify_mic_iov", major, minor);
    return CheckMitSequence("gss_verify_mic_iov", major, minor, &counts_);
  }

  Engine engine() const override { return Engine::kMitIov; }
  SequenceCounts sequence_counts() const override { return counts_; }

 private:
  ContextPtr context_;
  SequenceCounts counts_;
};

}  // namespace

std::unique_ptr<Protector> NewMitIovProtector(ContextPtr context) {
  return std::make_unique<MitIovProtector>(std::move(context));
}

}  // namespace secmode::gss
