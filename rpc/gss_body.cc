#include "rpc/gss_body.h"

#include "rpc/rpc_msg.h"
#include "rpc/xdr.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Status;

namespace {

// One token buffer per thread, reused: a fresh one per message would
// allocate (and, at 1 MiB, page-fault) on every krb5p call and reply.
thread_local Bytes tl_token;

Status CheckInnerSeq(ByteView data, uint32_t seq, const char* what) {
  XdrDecoder d(data);
  uint32_t inner;
  SECMODE_RETURN_IF_ERROR(d.GetU32(&inner, what));
  // RFC 2203 5.3.2.2: the receiver checks that the seq_num inside matches
  // the one in the credential.
  if (inner != seq) {
    return Status::Corrupt(std::string(what) + " carries seq_num " + std::to_string(inner) +
                           " but the credential says " + std::to_string(seq));
  }
  return Status::Ok();
}

}  // namespace

Status SealGssBody(gss::Protector& p, uint32_t service, uint32_t seq, ByteView body, Bytes* out,
                   Bytes* scratch) {
  XdrEncoder e(out);
  switch (service) {
    case kGssSvcNone: e.PutRaw(body); return Status::Ok();
    case kGssSvcIntegrity: {
      // databody_integ is built in place, then the MIC is taken over it.
      size_t len_at = e.ReserveU32();
      size_t start = out->size();
      e.PutU32(seq);
      e.PutRaw(body);
      size_t len = out->size() - start;
      e.PatchU32(len_at, static_cast<uint32_t>(len));
      SECMODE_RETURN_IF_ERROR(p.GetMic(ByteView(out->data() + start, len), scratch));
      out->insert(out->end(), XdrPad(len), 0);
      e.PutOpaque(*scratch);
      return Status::Ok();
    }
    case kGssSvcPrivacy: {
      Bytes plain;
      plain.swap(*scratch);
      plain.clear();
      XdrEncoder pe(&plain);
      pe.PutU32(seq);
      pe.PutRaw(body);
      Bytes& token = tl_token;
      Status s = p.Wrap(plain, true, &token);
      plain.swap(*scratch);
      SECMODE_RETURN_IF_ERROR(s);
      e.PutOpaque(token);
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("unknown RPCSEC_GSS service " + std::to_string(service));
}

bool ReleaseGssBodyBuffers() {
  if (tl_token.capacity() <= (64u << 10)) return false;
  Bytes().swap(tl_token);
  return true;
}

Status OpenGssBody(gss::Protector& p, uint32_t service, uint32_t seq, ByteView in, Bytes* scratch,
                   ByteView* body) {
  switch (service) {
    case kGssSvcNone: *body = in; return Status::Ok();
    case kGssSvcIntegrity: {
      XdrDecoder d(in);
      ByteView data, mic;
      SECMODE_RETURN_IF_ERROR(d.GetOpaque(&data, in.size(), "rpc_gss_integ_data databody_integ"));
      SECMODE_RETURN_IF_ERROR(d.GetOpaque(&mic, 1024, "rpc_gss_integ_data checksum"));
      SECMODE_RETURN_IF_ERROR(d.ExpectEnd("rpc_gss_integ_data"));
      Status v = p.VerifyMic(data, mic);
      if (!v.ok()) {
        return Status::AuthFailed("integrity checksum over databody_integ does not verify: " +
                                  v.message());
      }
      SECMODE_RETURN_IF_ERROR(CheckInnerSeq(data, seq, "databody_integ"));
      *body = data.subspan(4);
      return Status::Ok();
    }
    case kGssSvcPrivacy: {
      XdrDecoder d(in);
      ByteView token;
      SECMODE_RETURN_IF_ERROR(d.GetOpaque(&token, in.size(), "rpc_gss_priv_data databody_priv"));
      SECMODE_RETURN_IF_ERROR(d.ExpectEnd("rpc_gss_priv_data"));
      bool conf = false;
      Status u = p.Unwrap(token, scratch, &conf);
      if (!u.ok()) return Status::AuthFailed("privacy token does not unwrap: " + u.message());
      if (!conf) return Status::AuthFailed("privacy body was wrapped without confidentiality");
      SECMODE_RETURN_IF_ERROR(CheckInnerSeq(*scratch, seq, "databody_priv"));
      *body = ByteView(*scratch).subspan(4);
      return Status::Ok();
    }
  }
  return Status::Corrupt("unknown RPCSEC_GSS service " + std::to_string(service));
}

}  // namespace secmode::rpc
