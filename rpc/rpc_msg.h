// ONC RPC messages (RFC 5531 section 9) and the credentials this project
// speaks: AUTH_NONE, AUTH_SYS (RFC 5531 appendix A) and the RPCSEC_GSS
// version 1 credential (RFC 2203 section 5).
//
// Decoded headers hold views into the record they came from; they are valid
// while the record is. Every decode error names the field and offset.
#ifndef SECMODE_RPC_RPC_MSG_H_
#define SECMODE_RPC_RPC_MSG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/status.h"
#include "rpc/xdr.h"

namespace secmode::rpc {

inline constexpr uint32_t kRpcVersion = 2;  // RFC 5531 section 9
enum MsgType : uint32_t { kCall = 0, kReply = 1 };
enum ReplyStat : uint32_t { kMsgAccepted = 0, kMsgDenied = 1 };
enum AcceptStat : uint32_t {
  kSuccess = 0,
  kProgUnavail = 1,
  kProgMismatch = 2,
  kProcUnavail = 3,
  kGarbageArgs = 4,
  kSystemErr = 5,
};
enum RejectStat : uint32_t { kRpcMismatch = 0, kAuthError = 1 };
// RFC 5531 section 9 plus RFC 2203 section 4 (13, 14).
enum AuthStat : uint32_t {
  kAuthOk = 0,
  kAuthBadCred = 1,
  kAuthRejectedCred = 2,
  kAuthBadVerf = 3,
  kAuthRejectedVerf = 4,
  kAuthTooWeak = 5,
  kRpcsecGssCredProblem = 13,
  kRpcsecGssCtxProblem = 14,
};
enum AuthFlavor : uint32_t { kAuthNone = 0, kAuthSys = 1, kRpcsecGss = 6 };
const char* AcceptStatName(uint32_t s);
const char* AuthStatName(uint32_t s);

// RFC 5531 section 8.2: opaque_auth bodies are at most 400 bytes.
inline constexpr size_t kMaxAuthBody = 400;

struct OpaqueAuth {
  uint32_t flavor = kAuthNone;
  common::ByteView body;
};

struct CallHeader {
  uint32_t xid = 0;
  uint32_t rpcvers = 0;
  uint32_t prog = 0, vers = 0, proc = 0;
  OpaqueAuth cred, verf;
  size_t cred_end = 0;  // offset just past the credential (RFC 2203 5.3.1 MIC span)
  size_t body_offset = 0;
};

// Decodes the call header. Fails on truncation, a msg_type that is not CALL
// or an over-long auth body. An rpcvers other than 2 is decoded (the caller
// answers RPC_MISMATCH).
common::Status DecodeCallHeader(common::ByteView record, CallHeader* h);
// The same up to and including the credential (cred_end set; verf and
// body_offset not): what a reader of a capture whose snap length cut the
// verifier can still take.
common::Status DecodeCallCredential(common::ByteView record, CallHeader* h);

// Appends xid, CALL, rpcvers 2, prog, vers, proc and the credential; returns
// the offset just past the credential. The caller appends the verifier and
// the body.
size_t EncodeCallPrefix(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                        uint32_t cred_flavor, common::ByteView cred_body, common::Bytes* out);

struct ReplyHeader {
  uint32_t xid = 0;
  uint32_t reply_stat = 0;
  uint32_t accept_stat = 0;  // when accepted
  uint32_t reject_stat = 0;  // when denied
  uint32_t auth_stat = 0;    // when denied with AUTH_ERROR
  uint32_t mismatch_low = 0, mismatch_high = 0;
  OpaqueAuth verf;
  size_t body_offset = 0;  // results, when accepted with SUCCESS
};
common::Status DecodeReplyHeader(common::ByteView record, ReplyHeader* h);
// "accepted SUCCESS", "denied AUTH_ERROR RPCSEC_GSS_CREDPROBLEM", ...
std::string DescribeReply(const ReplyHeader& h);
// RFC 2203 5.3.3.3: denied with RPCSEC_GSS_CREDPROBLEM or CTXPROBLEM, the
// server does not hold (or no longer accepts) the call's context.
bool ContextGone(const ReplyHeader& h);

// Appends an accepted reply header up to and including accept_stat; for
// SUCCESS the caller appends the results.
void EncodeAcceptedReply(uint32_t xid, uint32_t verf_flavor, common::ByteView verf_body,
                         uint32_t accept_stat, common::Bytes* out);
void EncodeProgMismatchReply(uint32_t xid, uint32_t low, uint32_t high, common::Bytes* out);
void EncodeAuthErrorReply(uint32_t xid, uint32_t auth_stat, common::Bytes* out);
void EncodeRpcMismatchReply(uint32_t xid, common::Bytes* out);

// AUTH_SYS (RFC 5531 appendix A).
struct AuthSysParms {
  uint32_t stamp = 0;
  std::string machine;
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> gids;
};
void EncodeAuthSys(const AuthSysParms& p, common::Bytes* out);
common::Status DecodeAuthSys(common::ByteView body, AuthSysParms* p);

// RPCSEC_GSS (RFC 2203 section 5).
enum GssProc : uint32_t { kGssData = 0, kGssInit = 1, kGssContinueInit = 2, kGssDestroy = 3 };
enum GssService : uint32_t { kGssSvcNone = 1, kGssSvcIntegrity = 2, kGssSvcPrivacy = 3 };
inline constexpr uint32_t kRpcsecGssVers1 = 1;
inline constexpr size_t kMaxGssHandle = 64;
const char* GssProcName(uint32_t p);
const char* GssServiceName(uint32_t s);

struct GssCred {
  uint32_t version = kRpcsecGssVers1;
  uint32_t proc = kGssData;
  uint32_t seq = 0;
  uint32_t service = kGssSvcNone;
  common::ByteView handle;
};
void EncodeGssCred(const GssCred& c, common::Bytes* out);
// Decodes any version's discriminant; only version 1 has a body to decode.
// Callers check `version` (AUTH_BADCRED otherwise).
common::Status DecodeGssCred(common::ByteView body, GssCred* c);

// RFC 2203 5.2.3.1: the results of an accepted INIT / CONTINUE_INIT.
struct GssInitRes {
  common::ByteView handle;  // at most kMaxGssHandle bytes
  uint32_t major = 0, minor = 0;
  uint32_t seq_window = 0;
  common::ByteView token;  // at most kMaxGssInitToken bytes
};
// The longest GSS token an INIT or CONTINUE_INIT call or its reply carries.
inline constexpr size_t kMaxGssInitToken = 1 << 16;
inline constexpr uint32_t kGssComplete = 0;  // GSS_S_COMPLETE (RFC 2744)
// Views into `results`; fails naming the field when it is cut or too long.
common::Status DecodeGssInitRes(common::ByteView results, GssInitRes* r);

}  // namespace secmode::rpc

#endif  // SECMODE_RPC_RPC_MSG_H_
