#include "rpc/rpc_msg.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Status;

const char* AcceptStatName(uint32_t s) {
  switch (s) {
    case kSuccess: return "SUCCESS";
    case kProgUnavail: return "PROG_UNAVAIL";
    case kProgMismatch: return "PROG_MISMATCH";
    case kProcUnavail: return "PROC_UNAVAIL";
    case kGarbageArgs: return "GARBAGE_ARGS";
    case kSystemErr: return "SYSTEM_ERR";
  }
  return "accept_stat?";
}

const char* AuthStatName(uint32_t s) {
  switch (s) {
    case kAuthOk: return "AUTH_OK";
    case kAuthBadCred: return "AUTH_BADCRED";
    case kAuthRejectedCred: return "AUTH_REJECTEDCRED";
    case kAuthBadVerf: return "AUTH_BADVERF";
    case kAuthRejectedVerf: return "AUTH_REJECTEDVERF";
    case kAuthTooWeak: return "AUTH_TOOWEAK";
    case kRpcsecGssCredProblem: return "RPCSEC_GSS_CREDPROBLEM";
    case kRpcsecGssCtxProblem: return "RPCSEC_GSS_CTXPROBLEM";
  }
  return "auth_stat?";
}

const char* GssProcName(uint32_t p) {
  switch (p) {
    case kGssData: return "DATA";
    case kGssInit: return "INIT";
    case kGssContinueInit: return "CONTINUE_INIT";
    case kGssDestroy: return "DESTROY";
  }
  return "gss_proc?";
}

const char* GssServiceName(uint32_t s) {
  switch (s) {
    case kGssSvcNone: return "none";
    case kGssSvcIntegrity: return "integrity";
    case kGssSvcPrivacy: return "privacy";
  }
  return "service?";
}

namespace {

Status GetAuth(XdrDecoder& d, OpaqueAuth* a, const char* what) {
  SECMODE_RETURN_IF_ERROR(d.GetU32(&a->flavor, what));
  return d.GetOpaque(&a->body, kMaxAuthBody, what);
}

void PutAuth(XdrEncoder& e, uint32_t flavor, ByteView body) {
  e.PutU32(flavor);
  e.PutOpaque(body);
}

}  // namespace

// RFC 5531 section 9: rpc_msg { xid; union { CALL: call_body } }.
namespace {

Status DecodeThroughCredential(XdrDecoder& d, CallHeader* h) {
  uint32_t type;
  SECMODE_RETURN_IF_ERROR(d.GetU32(&h->xid, "xid"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&type, "msg_type"));
  if (type != kCall) {
    return Status::Corrupt("msg_type " + std::to_string(type) + " where a CALL (0) was expected");
  }
  SECMODE_RETURN_IF_ERROR(d.GetU32(&h->rpcvers, "rpcvers"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&h->prog, "prog"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&h->vers, "vers"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&h->proc, "proc"));
  SECMODE_RETURN_IF_ERROR(GetAuth(d, &h->cred, "cred"));
  h->cred_end = d.position();
  return Status::Ok();
}

}  // namespace

Status DecodeCallCredential(ByteView record, CallHeader* h) {
  XdrDecoder d(record);
  return DecodeThroughCredential(d, h);
}

Status DecodeCallHeader(ByteView record, CallHeader* h) {
  XdrDecoder d(record);
  SECMODE_RETURN_IF_ERROR(DecodeThroughCredential(d, h));
  SECMODE_RETURN_IF_ERROR(GetAuth(d, &h->verf, "verf"));
  h->body_offset = d.position();
  return Status::Ok();
}

size_t EncodeCallPrefix(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                        uint32_t cred_flavor, ByteView cred_body, Bytes* out) {
  XdrEncoder e(out);
  e.PutU32(xid);
  e.PutU32(kCall);
  e.PutU32(kRpcVersion);
  e.PutU32(prog);
  e.PutU32(vers);
  e.PutU32(proc);
  PutAuth(e, cred_flavor, cred_body);
  return out->size();
}

// RFC 5531 section 9: reply_body, accepted_reply, rejected_reply.
Status DecodeReplyHeader(ByteView record, ReplyHeader* h) {
  XdrDecoder d(record);
  uint32_t type;
  SECMODE_RETURN_IF_ERROR(d.GetU32(&h->xid, "xid"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&type, "msg_type"));
  if (type != kReply) {
    return Status::Corrupt("msg_type " + std::to_string(type) + " where a REPLY (1) was expected");
  }
  SECMODE_RETURN_IF_ERROR(d.GetU32(&h->reply_stat, "reply_stat"));
  if (h->reply_stat == kMsgAccepted) {
    SECMODE_RETURN_IF_ERROR(GetAuth(d, &h->verf, "reply verf"));
    SECMODE_RETURN_IF_ERROR(d.GetU32(&h->accept_stat, "accept_stat"));
    if (h->accept_stat == kProgMismatch) {
      SECMODE_RETURN_IF_ERROR(d.GetU32(&h->mismatch_low, "mismatch_info.low"));
      SECMODE_RETURN_IF_ERROR(d.GetU32(&h->mismatch_high, "mismatch_info.high"));
    }
  } else if (h->reply_stat == kMsgDenied) {
    SECMODE_RETURN_IF_ERROR(d.GetU32(&h->reject_stat, "reject_stat"));
    if (h->reject_stat == kRpcMismatch) {
      SECMODE_RETURN_IF_ERROR(d.GetU32(&h->mismatch_low, "mismatch_info.low"));
      SECMODE_RETURN_IF_ERROR(d.GetU32(&h->mismatch_high, "mismatch_info.high"));
    } else if (h->reject_stat == kAuthError) {
      SECMODE_RETURN_IF_ERROR(d.GetU32(&h->auth_stat, "auth_stat"));
    } else {
      return Status::Corrupt("unknown reject_stat " + std::to_string(h->reject_stat));
    }
  } else {
    return Status::Corrupt("unknown reply_stat " + std::to_string(h->reply_stat));
  }
  h->body_offset = d.position();
  return Status::Ok();
}

bool ContextGone(const ReplyHeader& h) {
  return h.reply_stat == kMsgDenied && h.reject_stat == kAuthError &&
         (h.auth_stat == kRpcsecGssCredProblem || h.auth_stat == kRpcsecGssCtxProblem);
}

std::string DescribeReply(const ReplyHeader& h) {
  if (h.reply_stat == kMsgAccepted) return std::string("accepted ") + AcceptStatName(h.accept_stat);
  if (h.reject_stat == kRpcMismatch) return "denied RPC_MISMATCH";
  return std::string("denied AUTH_ERROR ") + AuthStatName(h.auth_stat);
}

void EncodeAcceptedReply(uint32_t xid, uint32_t verf_flavor, ByteView verf_body,
                         uint32_t accept_stat, Bytes* out) {
  XdrEncoder e(out);
  e.PutU32(xid);
  e.PutU32(kReply);
  e.PutU32(kMsgAccepted);
  PutAuth(e, verf_flavor, verf_body);
  e.PutU32(accept_stat);
}

void EncodeProgMismatchReply(uint32_t xid, uint32_t low, uint32_t high, Bytes* out) {
  EncodeAcceptedReply(xid, kAuthNone, {}, kProgMismatch, out);
  XdrEncoder e(out);
  e.PutU32(low);
  e.PutU32(high);
}

void EncodeAuthErrorReply(uint32_t xid, uint32_t auth_stat, Bytes* out) {
  XdrEncoder e(out);
  e.PutU32(xid);
  e.PutU32(kReply);
  e.PutU32(kMsgDenied);
  e.PutU32(kAuthError);
  e.PutU32(auth_stat);
}

void EncodeRpcMismatchReply(uint32_t xid, Bytes* out) {
  XdrEncoder e(out);
  e.PutU32(xid);
  e.PutU32(kReply);
  e.PutU32(kMsgDenied);
  e.PutU32(kRpcMismatch);
  e.PutU32(kRpcVersion);
  e.PutU32(kRpcVersion);
}

void EncodeAuthSys(const AuthSysParms& p, Bytes* out) {
  XdrEncoder e(out);
  e.PutU32(p.stamp);
  e.PutString(p.machine);
  e.PutU32(p.uid);
  e.PutU32(p.gid);
  e.PutU32(static_cast<uint32_t>(p.gids.size()));
  for (uint32_t g : p.gids) e.PutU32(g);
}

Status DecodeAuthSys(ByteView body, AuthSysParms* p) {
  XdrDecoder d(body);
  SECMODE_RETURN_IF_ERROR(d.GetU32(&p->stamp, "authsys stamp"));
  SECMODE_RETURN_IF_ERROR(d.GetString(&p->machine, 255, "authsys machinename"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&p->uid, "authsys uid"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&p->gid, "authsys gid"));
  uint32_t n;
  SECMODE_RETURN_IF_ERROR(d.GetU32(&n, "authsys gids count"));
  if (n > 16) return Status::Corrupt("authsys gids count " + std::to_string(n) + " exceeds 16");
  p->gids.resize(n);
  for (uint32_t i = 0; i < n; ++i) SECMODE_RETURN_IF_ERROR(d.GetU32(&p->gids[i], "authsys gid"));
  return d.ExpectEnd("authsys_parms");
}

// RFC 2203 section 5: rpc_gss_cred_t, a union on the version.
void EncodeGssCred(const GssCred& c, Bytes* out) {
  XdrEncoder e(out);
  e.PutU32(c.version);
  e.PutU32(c.proc);
  e.PutU32(c.seq);
  e.PutU32(c.service);
  e.PutOpaque(c.handle);
}

Status DecodeGssCred(ByteView body, GssCred* c) {
  XdrDecoder d(body);
  SECMODE_RETURN_IF_ERROR(d.GetU32(&c->version, "rpc_gss_cred version"));
  if (c->version != kRpcsecGssVers1) return Status::Ok();
  SECMODE_RETURN_IF_ERROR(d.GetU32(&c->proc, "rpc_gss_cred gss_proc"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&c->seq, "rpc_gss_cred seq_num"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&c->service, "rpc_gss_cred service"));
  SECMODE_RETURN_IF_ERROR(d.GetOpaque(&c->handle, kMaxGssHandle, "rpc_gss_cred handle"));
  return d.ExpectEnd("rpc_gss_cred");
}

Status DecodeGssInitRes(ByteView results, GssInitRes* r) {
  XdrDecoder d(results);
  SECMODE_RETURN_IF_ERROR(d.GetOpaque(&r->handle, kMaxGssHandle, "rpc_gss_init_res handle"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&r->major, "rpc_gss_init_res gss_major"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&r->minor, "rpc_gss_init_res gss_minor"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&r->seq_window, "rpc_gss_init_res seq_window"));
  return d.GetOpaque(&r->token, kMaxGssInitToken, "rpc_gss_init_res gss_token");
}

}  // namespace secmode::rpc
