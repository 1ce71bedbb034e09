#include "rpc/nfs41.h"

#include <unistd.h>

#include <algorithm>
#include <initializer_list>
#include <sstream>

#include "common/clock.h"
#include "rpc/nfs4_ops.h"
#include "rpc/xdr.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Result;
using common::Status;

namespace {

constexpr uint32_t kSp4None = 0;
constexpr uint32_t kWantNoDelegation = 0x0400;  // OPEN4_SHARE_ACCESS_WANT_NO_DELEG
constexpr uint32_t kCbProgram = 0x40000000;

void PutChannelAttrs(XdrEncoder& e, uint32_t max_request, uint32_t max_response, uint32_t ops,
                     uint32_t requests) {
  e.PutU32(0);             // ca_headerpadsize
  e.PutU32(max_request);   // ca_maxrequestsize
  e.PutU32(max_response);  // ca_maxresponsesize
  e.PutU32(8192);          // ca_maxresponsesize_cached
  e.PutU32(ops);           // ca_maxoperations
  e.PutU32(requests);      // ca_maxrequests
  e.PutU32(0);             // ca_rdma_ird<1>: none
}

Status GetChannelAttrs(XdrDecoder& d, uint32_t* requests) {
  uint32_t v[6], ird;
  for (auto& x : v) SECMODE_RETURN_IF_ERROR(d.GetU32(&x, "channel_attrs4"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&ird, "ca_rdma_ird count"));
  if (ird > 1) return Status::Corrupt("ca_rdma_ird has " + std::to_string(ird) + " entries");
  for (uint32_t i = 0; i < ird; ++i) SECMODE_RETURN_IF_ERROR(d.GetU32(&v[0], "ca_rdma_ird"));
  *requests = v[5];
  return Status::Ok();
}

// A COMPOUND's arguments: tag "", minor version 1, `ops` operations to
// follow (the caller appends them).
XdrEncoder Begin(Bytes* args, uint32_t ops) {
  args->clear();
  XdrEncoder e(args);
  e.PutString("");
  e.PutU32(1);
  e.PutU32(ops);
  return e;
}

// Sends the COMPOUND and checks its status: NFS4_OK, else an error naming
// `what` and the status. A status in `transient` (one the server answers
// while it finishes other work) is tried again, 20 ms apart, for at most
// 2 s; the error then says how many tries.
Result<Bytes> Run(const Nfs41Call& call, const Bytes& args, const std::string& what,
                  std::initializer_list<uint32_t> transient = {}) {
  constexpr int kMaxTries = 101;
  for (int tries = 1;; ++tries) {
    SECMODE_ASSIGN_OR_RETURN(Bytes res, call(args));
    XdrDecoder d(res);
    uint32_t status;
    SECMODE_RETURN_IF_ERROR(d.GetU32(&status, "COMPOUND4res status").Annotate(what));
    if (status == 0) return res;
    if (std::find(transient.begin(), transient.end(), status) == transient.end() ||
        tries == kMaxTries) {
      return Status::Unavailable(what + ": the server answered " + Nfs4StatusName(status) +
                                 (tries > 1 ? " (" + std::to_string(tries) + " tries)" : ""));
    }
    usleep(20000);
  }
}

// The decoder past the COMPOUND4res header.
Status Header(XdrDecoder& d, uint32_t want_ops) {
  uint32_t status, n;
  ByteView tag;
  SECMODE_RETURN_IF_ERROR(d.GetU32(&status, "COMPOUND4res status"));
  SECMODE_RETURN_IF_ERROR(d.GetOpaque(&tag, kNfs4OpaqueLimit, "COMPOUND4res tag"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&n, "COMPOUND4res resarray length"));
  if (n != want_ops) {
    return Status::Corrupt("COMPOUND4res has " + std::to_string(n) + " results, expected " +
                           std::to_string(want_ops));
  }
  return Status::Ok();
}

// One result's op and status: must be `op` and NFS4_OK.
Status Result4(XdrDecoder& d, uint32_t op) {
  uint32_t got, st;
  SECMODE_RETURN_IF_ERROR(d.GetU32(&got, "resop"));
  if (got != op) {
    return Status::Corrupt(std::string("expected the result of ") + Nfs4OpName(op) + ", got op " +
                           std::to_string(got));
  }
  SECMODE_RETURN_IF_ERROR(d.GetU32(&st, Nfs4OpName(op).c_str()));
  if (st != 0) return Status::Unavailable(Nfs4OpName(op) + ": " + Nfs4StatusName(st));
  return Status::Ok();
}

// SEQUENCE on the set-up's own slot (the highest granted; the load uses
// the ones below it), with its next sequence id.
void PutSequence(XdrEncoder& e, Nfs41Session& s) {
  e.PutU32(kOpSequence);
  e.PutFixedOpaque(s.setup_session_id);
  e.PutU32(++s.setup_sequence);
  e.PutU32(0);  // its one slot
  e.PutU32(0);
  e.PutBool(false);
}

// CREATE_SESSION (RFC 8881 18.36) with `requests` fore-channel slots and
// no back channel: its id and the slots granted (at least one).
Status CreateSession(const Nfs41Call& call, const Nfs41Options& o, uint64_t clientid,
                     uint32_t sequence, uint32_t requests, Bytes* session_id, uint32_t* granted) {
  Bytes args;
  {
    XdrEncoder e = Begin(&args, 1);
    e.PutU32(kOpCreateSession);
    e.PutU64(clientid);
    e.PutU32(sequence);
    e.PutU32(0);  // csa_flags
    PutChannelAttrs(e, o.max_request, o.max_response, 8, requests);
    PutChannelAttrs(e, 4096, 4096, 2, 1);
    e.PutU32(kCbProgram);
    e.PutU32(1);  // csa_sec_parms<>: one, AUTH_NONE
    e.PutU32(0);
  }
  SECMODE_ASSIGN_OR_RETURN(Bytes res, Run(call, args, "CREATE_SESSION"));
  XdrDecoder d(res);
  SECMODE_RETURN_IF_ERROR(Header(d, 1));
  SECMODE_RETURN_IF_ERROR(Result4(d, kOpCreateSession));
  ByteView sid;
  uint32_t seq, flags, back;
  SECMODE_RETURN_IF_ERROR(d.GetFixedOpaque(kNfs4SessionIdSize, &sid, "csr_sessionid"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&seq, "csr_sequence"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&flags, "csr_flags"));
  SECMODE_RETURN_IF_ERROR(GetChannelAttrs(d, granted));
  SECMODE_RETURN_IF_ERROR(GetChannelAttrs(d, &back));
  if (*granted < 1) return Status::Unavailable("CREATE_SESSION granted no fore-channel slot");
  session_id->assign(sid.begin(), sid.end());
  return Status::Ok();
}

Status DestroySession(const Nfs41Call& call, const Bytes& session_id) {
  Bytes args;
  XdrEncoder e = Begin(&args, 1);
  e.PutU32(kOpDestroySession);
  e.PutFixedOpaque(session_id);
  return Run(call, args, "DESTROY_SESSION").status();
}

Status SkipSequence(XdrDecoder& d) {
  SECMODE_RETURN_IF_ERROR(Result4(d, kOpSequence));
  ByteView sid;
  uint32_t v[5];
  SECMODE_RETURN_IF_ERROR(d.GetFixedOpaque(kNfs4SessionIdSize, &sid, "SEQUENCE sessionid"));
  for (auto& x : v) SECMODE_RETURN_IF_ERROR(d.GetU32(&x, "SEQUENCE4resok"));
  return Status::Ok();
}

// OPEN (RFC 8881 18.16) of the file at `path` from the root: its handle
// and open stateid. The read file must exist; the write file is created if
// it does not (UNCHECKED4, no attributes). No delegation is wanted (there
// is no back channel to recall one).
Status Open(const Nfs41Call& call, Nfs41Session& s, const std::vector<std::string>& path,
            bool write, const std::string& owner, Bytes* fh, Bytes* stateid) {
  std::string what = "opening /";
  for (size_t i = 0; i < path.size(); ++i) what += (i ? "/" : "") + path[i];
  const size_t dirs = path.size() - 1;
  Bytes args;
  XdrEncoder e = Begin(&args, static_cast<uint32_t>(4 + dirs));
  PutSequence(e, s);
  e.PutU32(kOpPutrootfh);
  for (size_t i = 0; i < dirs; ++i) {
    e.PutU32(kOpLookup);
    e.PutString(path[i]);
  }
  e.PutU32(kOpOpen);
  e.PutU32(0);                                      // seqid (unused in 4.1)
  e.PutU32((write ? 3u : 1u) | kWantNoDelegation);  // share_access BOTH / READ
  e.PutU32(0);                                      // share_deny NONE
  e.PutU64(s.clientid);                             // open_owner4
  e.PutString(owner);
  if (write) {
    e.PutU32(1);  // OPEN4_CREATE
    e.PutU32(0);  // UNCHECKED4
    e.PutU32(0);  // createattrs: empty bitmap
    e.PutU32(0);  // and no values
  } else {
    e.PutU32(0);  // OPEN4_NOCREATE
  }
  e.PutU32(0);  // CLAIM_NULL
  e.PutString(path.back());
  e.PutU32(kOpGetfh);
  SECMODE_ASSIGN_OR_RETURN(Bytes res, call(args));
  XdrDecoder d(res);
  uint32_t status, n;
  ByteView tag;
  SECMODE_RETURN_IF_ERROR(d.GetU32(&status, "COMPOUND4res status"));
  SECMODE_RETURN_IF_ERROR(d.GetOpaque(&tag, kNfs4OpaqueLimit, "COMPOUND4res tag"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&n, "COMPOUND4res resarray length"));
  if (status != 0) {
    // The last result is the one that failed.
    std::string at = n <= 1 ? "SEQUENCE" : n == 2 ? "PUTROOTFH" : "GETFH";
    if (n >= 3 && n - 3 < dirs) at = "LOOKUP of '" + path[n - 3] + "'";
    if (n == 3 + dirs) at = "OPEN of '" + path.back() + "'";
    return Status::Unavailable(what + ": " + at + " failed: " + Nfs4StatusName(status));
  }
  if (n != 4 + dirs) return Status::Corrupt(what + ": wrong number of results");
  SECMODE_RETURN_IF_ERROR(SkipSequence(d).Annotate(what));
  SECMODE_RETURN_IF_ERROR(Result4(d, kOpPutrootfh).Annotate(what));
  for (size_t i = 0; i < dirs; ++i) SECMODE_RETURN_IF_ERROR(Result4(d, kOpLookup).Annotate(what));
  SECMODE_RETURN_IF_ERROR(Result4(d, kOpOpen).Annotate(what));
  ByteView sid, words;
  bool atomic;
  uint64_t before, after;
  uint32_t rflags, nwords, delegation;
  SECMODE_RETURN_IF_ERROR(d.GetFixedOpaque(16, &sid, "OPEN stateid"));
  SECMODE_RETURN_IF_ERROR(d.GetBool(&atomic, "OPEN cinfo.atomic"));
  SECMODE_RETURN_IF_ERROR(d.GetU64(&before, "OPEN cinfo.before"));
  SECMODE_RETURN_IF_ERROR(d.GetU64(&after, "OPEN cinfo.after"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&rflags, "OPEN rflags"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&nwords, "OPEN attrset length"));
  if (nwords > 8) return Status::Corrupt(what + ": OPEN attrset of " + std::to_string(nwords));
  SECMODE_RETURN_IF_ERROR(d.GetFixedOpaque(4 * nwords, &words, "OPEN attrset"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&delegation, "OPEN delegation_type"));
  if (delegation == 3) {  // OPEN_DELEGATE_NONE_EXT: why none
    uint32_t why;
    bool flag;
    SECMODE_RETURN_IF_ERROR(d.GetU32(&why, "ond_why"));
    if (why == 4 || why == 5) SECMODE_RETURN_IF_ERROR(d.GetBool(&flag, "ond_server_will_push"));
  } else if (delegation != 0) {
    return Status::Unavailable(what + ": the server granted a delegation (type " +
                               std::to_string(delegation) + ") that was not wanted");
  }
  SECMODE_RETURN_IF_ERROR(Result4(d, kOpGetfh).Annotate(what));
  ByteView object;
  SECMODE_RETURN_IF_ERROR(d.GetOpaque(&object, kNfs4FhSize, "GETFH object"));
  fh->assign(object.begin(), object.end());
  stateid->assign(sid.begin(), sid.end());
  return Status::Ok();
}

// CLOSE (RFC 8881 18.2) of one open file.
Status Close(const Nfs41Call& call, Nfs41Session& s, const Bytes& fh, const Bytes& stateid,
             const char* which) {
  Bytes args;
  XdrEncoder e = Begin(&args, 3);
  PutSequence(e, s);
  e.PutU32(kOpPutfh);
  e.PutOpaque(fh);
  e.PutU32(kOpClose);
  e.PutU32(0);  // seqid (unused in 4.1)
  e.PutFixedOpaque(stateid);
  const std::string what = std::string("closing the ") + which + " file";
  SECMODE_ASSIGN_OR_RETURN(Bytes res, Run(call, args, what));
  XdrDecoder d(res);
  SECMODE_RETURN_IF_ERROR(Header(d, 3).Annotate(what));
  SECMODE_RETURN_IF_ERROR(SkipSequence(d).Annotate(what));
  SECMODE_RETURN_IF_ERROR(Result4(d, kOpPutfh).Annotate(what));
  return Result4(d, kOpClose).Annotate(what);
}

}  // namespace

Result<std::vector<std::string>> SplitNfsPath(const std::string& path) {
  std::vector<std::string> out;
  std::string c;
  std::istringstream in(path);
  while (std::getline(in, c, '/')) {
    if (c.empty()) continue;
    if (c == "." || c == "..") return Status::InvalidArgument("path '" + path + "': no . or ..");
    out.push_back(c);
  }
  if (out.empty()) return Status::InvalidArgument("path '" + path + "' names no file");
  return out;
}

Result<Nfs41Session> Nfs41Open(const Nfs41Options& o, const Nfs41Call& call) {
  if (o.slots < 1) return Status::InvalidArgument("at least one session slot is needed");
  Nfs41Session s;
  // EXCHANGE_ID (RFC 8881 18.35).
  std::string owner = o.owner;
  if (owner.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    owner = "secmode " + std::string(host) + " " + std::to_string(getpid()) + " " +
            std::to_string(common::NowNs());
  }
  Bytes args;
  {
    XdrEncoder e = Begin(&args, 1);
    e.PutU32(kOpExchangeId);
    uint8_t verifier[8];
    const uint64_t now = common::NowNs();
    for (int i = 0; i < 8; ++i) verifier[i] = static_cast<uint8_t>(now >> (8 * i));
    e.PutFixedOpaque(ByteView(verifier, 8));  // co_verifier
    e.PutString(owner);                       // co_ownerid
    e.PutU32(0);                              // eia_flags
    e.PutU32(kSp4None);                       // eia_state_protect
    e.PutU32(0);                              // eia_client_impl_id<1>: none
  }
  SECMODE_ASSIGN_OR_RETURN(Bytes res, Run(call, args, "EXCHANGE_ID"));
  uint32_t sequenceid;
  {
    XdrDecoder d(res);
    SECMODE_RETURN_IF_ERROR(Header(d, 1));
    SECMODE_RETURN_IF_ERROR(Result4(d, kOpExchangeId));
    uint32_t flags, how, impls;
    uint64_t minor;
    ByteView major, scope;
    SECMODE_RETURN_IF_ERROR(d.GetU64(&s.clientid, "eir_clientid"));
    SECMODE_RETURN_IF_ERROR(d.GetU32(&sequenceid, "eir_sequenceid"));
    SECMODE_RETURN_IF_ERROR(d.GetU32(&flags, "eir_flags"));
    SECMODE_RETURN_IF_ERROR(d.GetU32(&how, "eir_state_protect"));
    if (how != kSp4None) {
      return Status::Corrupt("EXCHANGE_ID: the server chose state protection " +
                             std::to_string(how) + ", the client asked for none");
    }
    SECMODE_RETURN_IF_ERROR(d.GetU64(&minor, "so_minor_id"));
    SECMODE_RETURN_IF_ERROR(d.GetOpaque(&major, kNfs4OpaqueLimit, "so_major_id"));
    SECMODE_RETURN_IF_ERROR(d.GetOpaque(&scope, kNfs4OpaqueLimit, "eir_server_scope"));
    SECMODE_RETURN_IF_ERROR(d.GetU32(&impls, "eir_server_impl_id count"));
    if (impls > 1) return Status::Corrupt("eir_server_impl_id has more than one entry");
    if (impls == 1) {
      std::string domain, name;
      uint64_t seconds;
      uint32_t nseconds;
      SECMODE_RETURN_IF_ERROR(d.GetString(&domain, kNfs4OpaqueLimit, "nii_domain"));
      SECMODE_RETURN_IF_ERROR(d.GetString(&name, kNfs4OpaqueLimit, "nii_name"));
      SECMODE_RETURN_IF_ERROR(d.GetU64(&seconds, "nii_date seconds"));
      SECMODE_RETURN_IF_ERROR(d.GetU32(&nseconds, "nii_date nseconds"));
      s.server = name + (domain.empty() ? "" : " (" + domain + ")");
    }
  }
  // The set-up's own session (one slot), so its calls never touch the
  // load's slots' sequence ids.
  uint32_t one;
  SECMODE_RETURN_IF_ERROR(
      CreateSession(call, o, s.clientid, sequenceid, 1, &s.setup_session_id, &one));
  s.target.write_digest = false;
  s.target.read_pattern = o.read_file_has_pattern;
  // RECLAIM_COMPLETE (RFC 8881 18.51): nothing to reclaim.
  {
    XdrEncoder e = Begin(&args, 2);
    PutSequence(e, s);
    e.PutU32(kOpReclaimComplete);
    e.PutBool(false);  // rca_one_fs
  }
  auto reclaimed = call(args);
  if (!reclaimed.ok()) return reclaimed.status().Annotate("RECLAIM_COMPLETE");
  {
    XdrDecoder d(*reclaimed);
    uint32_t status;
    SECMODE_RETURN_IF_ERROR(d.GetU32(&status, "COMPOUND4res status"));
    // A server may already consider reclaims complete; that is not an error.
    if (status != 0 && status != 10054 /* NFS4ERR_COMPLETE_ALREADY */) {
      return Status::Unavailable("RECLAIM_COMPLETE: " + Nfs4StatusName(status));
    }
  }
  if (o.read_path.empty() || o.write_path.empty()) {
    return Status::InvalidArgument("the read and write paths must name files");
  }
  s.owner = owner;
  SECMODE_RETURN_IF_ERROR(
      Open(call, s, o.read_path, false, owner, &s.target.fh_read, &s.target.stateid_read));
  SECMODE_RETURN_IF_ERROR(
      Open(call, s, o.write_path, true, owner, &s.target.fh_write, &s.target.stateid_write));
  // The load's session: the slots asked, or fewer if the server grants fewer.
  SECMODE_RETURN_IF_ERROR(
      CreateSession(call, o, s.clientid, sequenceid + 1, o.slots, &s.target.session_id, &s.slots));
  s.target.highest_slot = s.slots - 1;
  return s;
}

Status Nfs41Close(Nfs41Session& s, const Nfs41Call& call) {
  SECMODE_RETURN_IF_ERROR(Close(call, s, s.target.fh_read, s.target.stateid_read, "read"));
  SECMODE_RETURN_IF_ERROR(Close(call, s, s.target.fh_write, s.target.stateid_write, "write"));
  SECMODE_RETURN_IF_ERROR(DestroySession(call, s.target.session_id));
  SECMODE_RETURN_IF_ERROR(DestroySession(call, s.setup_session_id));
  Bytes args;
  {
    XdrEncoder e = Begin(&args, 1);
    e.PutU32(kOpDestroyClientid);
    e.PutU64(s.clientid);
  }
  // RFC 8881 18.50.3: NFS4ERR_CLIENTID_BUSY while the server still holds a
  // session or state of the client; nfs-ganesha answered it right after the
  // sessions were destroyed, while it still released what the load's
  // just-closed connections held. It and NFS4ERR_DELAY are transient.
  constexpr uint32_t kDelay = 10008, kClientidBusy = 10074;
  return Run(call, args, "DESTROY_CLIENTID", {kDelay, kClientidBusy}).status();
}

}  // namespace secmode::rpc
