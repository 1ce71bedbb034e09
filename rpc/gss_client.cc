#include "rpc/gss_client.h"

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>

#include "gss/gss_error.h"
#include "gss/gss_handles.h"
#include "gss/private_ccache.h"
#include "rpc/gss_body.h"
#include "rpc/xdr.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Result;
using common::Status;

Result<std::shared_ptr<GssClientContext>> GssClientContext::Establish(const GssClientConfig& config,
                                                                      const RoundTrip& round_trip) {
  gss::PrivateCcache ccache;
  SECMODE_RETURN_IF_ERROR(ccache.Make(config.ccache));
  const std::string whose = "ccache " + ccache.source() + ", principal " + ccache.principal();
  OM_uint32 major, minor = 0;
  gss::NamePtr target;
  gss_buffer_desc tbuf{config.target.size(), const_cast<char*>(config.target.data())};
  major = gss_import_name(&minor, &tbuf, GSS_C_NT_HOSTBASED_SERVICE, gss::Out(target));
  if (GSS_ERROR(major))
    return gss::GssError("gss_import_name(" + config.target + ")", major, minor);
  gss_OID_set_desc mechs{1, const_cast<gss_OID>(gss_mech_krb5)};
  gss_key_value_element_desc elems[] = {{"ccache", ccache.name().c_str()}};
  gss_key_value_set_desc store{1, elems};
  gss::CredPtr cred;
  major = gss_acquire_cred_from(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE,
                                &store, gss::Out(cred), nullptr, nullptr);
  if (GSS_ERROR(major)) {
    return gss::GssError("gss_acquire_cred_from(initiator, " + whose + ")", major, minor);
  }
  if (config.enctype != 0) {
    krb5_enctype allowed = config.enctype;
    major = gss_krb5_set_allowable_enctypes(&minor, cred.get(), 1, &allowed);
    if (GSS_ERROR(major)) return gss::GssError("gss_krb5_set_allowable_enctypes", major, minor);
  }

  // RFC 2203 5.2.2: RPCSEC_GSS does its own replay and sequence checking
  // (the window), so GSS-level replay/sequence detection is not requested;
  // nconnect reorders tokens far beyond what the GSS layer would accept.
  const OM_uint32 flags = GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG;
  gss::ContextPtr ctx;
  Bytes handle, in_token, reply_verf, call, args;
  uint32_t window = 0;
  OM_uint32 init_major = GSS_S_CONTINUE_NEEDED;
  uint32_t server_major = GSS_S_CONTINUE_NEEDED;
  uint32_t xid = 0x5e000000u;
  for (int round = 0; round < 8; ++round) {
    gss_buffer_desc input{in_token.size(), in_token.data()};
    gss::BufferHandle output;
    if (init_major == GSS_S_CONTINUE_NEEDED) {
      init_major = gss_init_sec_context(
          &minor, cred.get(), gss::Out(ctx), target.get(), const_cast<gss_OID>(gss_mech_krb5),
          flags, 0, GSS_C_NO_CHANNEL_BINDINGS, round == 0 ? GSS_C_NO_BUFFER : &input, nullptr,
          &output.h, nullptr, nullptr);
      if (GSS_ERROR(init_major)) {
        return gss::GssError("gss_init_sec_context(" + config.target + ", " + whose + ")",
                             init_major, minor);
      }
    }
    if (output.h.length == 0 && server_major == GSS_S_COMPLETE) break;
    const ByteView token = output.view();
    if (token.empty() && init_major == GSS_S_COMPLETE) break;

    // RFC 2203 5.2.1: INIT / CONTINUE_INIT calls go to NULLPROC with an
    // AUTH_NONE verifier and rpc_gss_init_arg { opaque gss_token<>; }.
    GssCred c;
    c.proc = round == 0 ? kGssInit : kGssContinueInit;
    c.seq = 0;
    c.service = config.service;
    c.handle = handle;
    Bytes cred_body;
    EncodeGssCred(c, &cred_body);
    call.clear();
    EncodeCallPrefix(++xid, config.prog, config.vers, 0, kRpcsecGss, cred_body, &call);
    XdrEncoder e(&call);
    e.PutU32(kAuthNone);
    e.PutOpaque({});
    e.PutOpaque(token);
    auto sent = round_trip(call);
    if (!sent.ok()) {
      return sent.status().Annotate(round == 0 ? std::string("RPCSEC_GSS_INIT")
                                               : "RPCSEC_GSS_CONTINUE_INIT (round " +
                                                     std::to_string(round + 1) + ")");
    }
    Bytes reply = std::move(sent).value();
    ReplyHeader h;
    SECMODE_RETURN_IF_ERROR(DecodeReplyHeader(reply, &h).Annotate("RPCSEC_GSS_INIT reply"));
    if (h.xid != xid) {
      return Status::Corrupt("RPCSEC_GSS_INIT reply xid " + std::to_string(h.xid) +
                             " != " + std::to_string(xid));
    }
    if (h.reply_stat != kMsgAccepted || h.accept_stat != kSuccess) {
      return Status::AuthFailed("RPCSEC_GSS context creation refused: " + DescribeReply(h));
    }
    GssInitRes res;
    SECMODE_RETURN_IF_ERROR(DecodeGssInitRes(ByteView(reply).subspan(h.body_offset), &res));
    window = res.seq_window;
    if (res.major != GSS_S_COMPLETE && res.major != GSS_S_CONTINUE_NEEDED) {
      return gss::GssError("server gss_accept_sec_context", res.major, res.minor);
    }
    server_major = res.major;
    handle.assign(res.handle.begin(), res.handle.end());
    in_token.assign(res.token.begin(), res.token.end());
    reply_verf.assign(h.verf.body.begin(), h.verf.body.end());
    if (server_major == GSS_S_COMPLETE) {
      if (h.verf.flavor != kRpcsecGss) {
        return Status::AuthFailed("INIT reply completed without an RPCSEC_GSS verifier");
      }
      if (init_major == GSS_S_CONTINUE_NEEDED && !in_token.empty()) continue;  // AP-REP
      if (init_major == GSS_S_COMPLETE) break;
    }
  }
  if (init_major != GSS_S_COMPLETE || server_major != GSS_S_COMPLETE) {
    return Status::Internal("RPCSEC_GSS context creation did not complete in 8 rounds");
  }
  if (window == 0) return Status::Corrupt("server announced a sequence window of 0");
  std::shared_ptr<GssClientContext> out(new GssClientContext());
  SECMODE_ASSIGN_OR_RETURN(std::unique_ptr<gss::Protector> protector,
                           gss::NewProtector(config.engine, std::move(ctx)));
  out->protectors_ = std::make_unique<gss::ProtectorPool>(std::move(protector));
  // RFC 2203 5.2.3.1: the verifier of the final INIT reply is a MIC over the
  // XDR-encoded seq_window.
  Bytes win;
  XdrEncoder(&win).PutU32(window);
  SECMODE_ASSIGN_OR_RETURN(gss::ProtectorPool::Lease p, out->protectors_->Acquire());
  Status v = p->VerifyMic(win, reply_verf);
  if (!v.ok())
    return Status::AuthFailed("INIT reply verifier (MIC over seq_window) does not verify: " +
                              v.message());
  out->handle_ = std::move(handle);
  out->window_ = window;
  out->prog_ = config.prog;
  out->vers_ = config.vers;
  return out;
}

Status GssClientContext::Destroy(uint32_t xid, uint32_t service, uint32_t seq,
                                 const RoundTrip& round_trip) {
  Bytes call;
  SECMODE_RETURN_IF_ERROR(EncodeCall(xid, 0, service, seq, {}, &call, kGssDestroy));
  SECMODE_ASSIGN_OR_RETURN(Bytes reply, round_trip(call));
  ReplyHeader h;
  Bytes scratch;
  ByteView results;
  SECMODE_RETURN_IF_ERROR(DecodeReply(reply, service, seq, &scratch, &h, &results)
                              .Annotate("RPCSEC_GSS_DESTROY reply"));
  if (h.xid != xid) {
    return Status::Corrupt("RPCSEC_GSS_DESTROY reply xid " + std::to_string(h.xid) +
                           " != " + std::to_string(xid));
  }
  return Status::Ok();
}

Status GssClientContext::EncodeCall(uint32_t xid, uint32_t proc, uint32_t service, uint32_t seq,
                                    ByteView args, Bytes* record, uint32_t gss_proc) {
  record->clear();
  GssCred c;
  c.proc = gss_proc;
  c.seq = seq;
  c.service = service;
  c.handle = handle_;
  thread_local Bytes cred_body;  // per thread, reused: the call path allocates nothing
  cred_body.clear();
  EncodeGssCred(c, &cred_body);
  size_t cred_end = EncodeCallPrefix(xid, prog_, vers_, proc, kRpcsecGss, cred_body, record);
  thread_local Bytes mic, scratch;
  SECMODE_ASSIGN_OR_RETURN(gss::ProtectorPool::Lease p, protectors_->Acquire());
  // RFC 2203 5.3.1: verifier = MIC over the header from xid through the
  // credential.
  SECMODE_RETURN_IF_ERROR(p->GetMic(ByteView(record->data(), cred_end), &mic));
  XdrEncoder e(record);
  e.PutU32(kRpcsecGss);
  e.PutOpaque(mic);
  return SealGssBody(*p, service, seq, args, record, &scratch);
}

Status GssClientContext::DecodeReply(ByteView record, uint32_t service, uint32_t seq,
                                     Bytes* scratch, ReplyHeader* h, ByteView* results) {
  SECMODE_RETURN_IF_ERROR(DecodeReplyHeader(record, h));
  if (h->reply_stat != kMsgAccepted || h->accept_stat != kSuccess) {
    return Status::Unavailable("call failed: " + DescribeReply(*h));
  }
  if (h->verf.flavor != kRpcsecGss) {
    return Status::AuthFailed("reply verifier flavor " + std::to_string(h->verf.flavor) +
                              " is not RPCSEC_GSS");
  }
  uint8_t seq_xdr[4] = {static_cast<uint8_t>(seq >> 24), static_cast<uint8_t>(seq >> 16),
                        static_cast<uint8_t>(seq >> 8), static_cast<uint8_t>(seq)};
  SECMODE_ASSIGN_OR_RETURN(gss::ProtectorPool::Lease p, protectors_->Acquire());
  // RFC 2203 5.3.3.2: reply verifier = MIC over the XDR seq_num.
  Status v = p->VerifyMic(ByteView(seq_xdr, 4), h->verf.body);
  if (!v.ok())
    return Status::AuthFailed("reply verifier (MIC over seq_num " + std::to_string(seq) +
                              ") does not verify: " + v.message());
  return OpenGssBody(*p, service, seq, record.subspan(h->body_offset), scratch, results);
}

}  // namespace secmode::rpc
