// The `mit-iov` engine: MIT's iov calls on caller-owned buffers, the way an
// implementation that avoids MIT's per-call allocations uses the library
// (RFC 4121 tokens with RRC = 0, byte-identical in layout to gss_wrap's).
//   Wrap:   HEADER | DATA | PADDING | TRAILER laid out in the output token,
//           the data copied in once and sealed in place.
//   Unwrap: the token copied into the output buffer as a STREAM, opened in
//           place, the payload moved to the front (a token accepted out of
//           sequence is opened again with gss_unwrap: MIT's STREAM unwrap
//           does not return its data, see UnwrapInPlace).
//   MIC:    DATA + MIC_TOKEN, the MIC written straight into the output.
#include <gssapi/gssapi_ext.h>
#include <openssl/crypto.h>

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

  // The token is opened in place in *message, so MIT may have decrypted
  // into it before a check failed: every failure wipes it.
  Status Unwrap(ByteView token, Bytes* message, bool* conf) override {
    Status s = UnwrapInPlace(token, message, conf);
    if (!s.ok()) {
      OPENSSL_cleanse(message->data(), message->size());
      message->clear();
    }
    return s;
  }

  Status UnwrapInPlace(ByteView token, Bytes* message, bool* conf) {
    message->assign(token.begin(), token.end());
    gss_iov_buffer_desc iov[2] = {};
    iov[0].type = GSS_IOV_BUFFER_TYPE_STREAM;
    iov[0].buffer = gss_buffer_desc{message->size(), message->data()};
    iov[1].type = GSS_IOV_BUFFER_TYPE_DATA;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major = gss_unwrap_iov(&minor, context_.get(), &conf_state, nullptr, iov, 2);
    if (GSS_ERROR(major)) return GssError("gss_unwrap_iov", major, minor);
    SECMODE_RETURN_IF_ERROR(CheckMitSequence("gss_unwrap_iov", major, minor, &counts_));
    if (iov[1].buffer.value == nullptr && (major & (GSS_S_GAP_TOKEN | GSS_S_UNSEQ_TOKEN))) {
      // MIT's STREAM unwrap (kg_unseal_stream_iov) fills in the DATA buffer
      // only when the status is exactly GSS_S_COMPLETE: a token it accepted
      // with a supplementary sequence status (a gap, or late) is verified but
      // its data not handed out. gss_unwrap hands it out; its verdict on this
      // second look (a repeat) is not counted again.
      return UnwrapCopy(token, message, conf);
    }
    const auto* data = static_cast<const uint8_t*>(iov[1].buffer.value);
    const size_t len = iov[1].buffer.length;
    if (len > 0 && (data < message->data() || data + len > message->data() + message->size())) {
      return Status::Internal("gss_unwrap_iov returned data outside the stream buffer");
    }
    if (len > 0) std::memmove(message->data(), data, len);
    message->resize(len);
    if (conf) *conf = conf_state != 0;
    return Status::Ok();
  }

  // gss_unwrap of a token this context already accepted, data copied out.
  Status UnwrapCopy(ByteView token, Bytes* message, bool* conf) {
    gss_buffer_desc in = View(token);
    BufferHandle out;
    OM_uint32 minor = 0;
    int conf_state = 0;
    OM_uint32 major = gss_unwrap(&minor, context_.get(), &in, &out.h, &conf_state, nullptr);
    if (GSS_ERROR(major)) {
      if (out.h.value != nullptr) OPENSSL_cleanse(out.h.value, out.h.length);
      return GssError("gss_unwrap (after gss_unwrap_iov)", major, minor);
    }
    OPENSSL_cleanse(message->data(), message->size());  // the in-place attempt
    const ByteView v = out.view();
    message->assign(v.begin(), v.end());
    if (out.h.value != nullptr) OPENSSL_cleanse(out.h.value, out.h.length);
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
