#include "rpc/nfs4_ops.h"

#include <algorithm>
#include <iterator>

namespace secmode::rpc {

using common::ByteView;
using common::Status;

namespace {

// The longest opaque or string these skips accept (a WRITE's data may be
// long; anything longer than the bytes given fails as truncated anyway).
constexpr size_t kAnyLength = size_t{1} << 30;
// The most entries a counted array here may state (bitmap words, stateids,
// callback security parameters): more is taken as garbage.
constexpr uint32_t kMaxEntries = 64;

Status U32(XdrDecoder& d, const char* what) {
  uint32_t v;
  return d.GetU32(&v, what);
}
Status U64(XdrDecoder& d, const char* what) {
  uint64_t v;
  return d.GetU64(&v, what);
}
Status Bool(XdrDecoder& d, const char* what) {
  bool v;
  return d.GetBool(&v, what);
}
Status Fixed(XdrDecoder& d, size_t n, const char* what) {
  ByteView v;
  return d.GetFixedOpaque(n, &v, what);
}
Status Opaque(XdrDecoder& d, size_t max, const char* what) {
  ByteView v;
  return d.GetOpaque(&v, max, what);
}
// An array's length, at most kMaxEntries.
Status Count(XdrDecoder& d, uint32_t max, uint32_t* n, const char* what) {
  SECMODE_RETURN_IF_ERROR(d.GetU32(n, what));
  if (*n > max) {
    return Status::Corrupt(std::string(what) + " states " + std::to_string(*n) +
                           " entries, more than " + std::to_string(max));
  }
  return Status::Ok();
}

// The XDR types the operations' arguments are made of (RFC 8881 section 3.3).
Status Stateid(XdrDecoder& d) { return Fixed(d, 16, "stateid4"); }  // seqid + other[12]
Status Verifier(XdrDecoder& d) { return Fixed(d, 8, "verifier4"); }
Status SessionId(XdrDecoder& d) { return Fixed(d, kNfs4SessionIdSize, "sessionid4"); }
Status Component(XdrDecoder& d) { return Opaque(d, kAnyLength, "component4"); }
Status Bitmap(XdrDecoder& d) {
  uint32_t n;
  SECMODE_RETURN_IF_ERROR(Count(d, kMaxEntries, &n, "bitmap4"));
  return d.Skip(size_t{n} * 4, "bitmap4 words");
}
Status Fattr(XdrDecoder& d) {
  SECMODE_RETURN_IF_ERROR(Bitmap(d));
  return Opaque(d, kAnyLength, "attrlist4");
}
// lock_owner4, open_owner4 (state_owner4): clientid, owner<NFS4_OPAQUE_LIMIT>.
Status StateOwner(XdrDecoder& d) {
  SECMODE_RETURN_IF_ERROR(U64(d, "clientid4"));
  return Opaque(d, kNfs4OpaqueLimit, "state_owner4 owner");
}
Status ChannelAttrs(XdrDecoder& d) {  // channel_attrs4
  for (int i = 0; i < 6; ++i) SECMODE_RETURN_IF_ERROR(U32(d, "channel_attrs4"));
  uint32_t n;
  SECMODE_RETURN_IF_ERROR(Count(d, 1, &n, "ca_rdma_ird"));
  return d.Skip(size_t{n} * 4, "ca_rdma_ird");
}
Status CallbackSecParms(XdrDecoder& d) {  // callback_sec_parms4<>
  uint32_t n;
  SECMODE_RETURN_IF_ERROR(Count(d, kMaxEntries, &n, "callback_sec_parms4"));
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t flavor;
    SECMODE_RETURN_IF_ERROR(d.GetU32(&flavor, "cb_secflavor"));
    if (flavor == 0) continue;  // AUTH_NONE
    if (flavor == 1) {          // AUTH_SYS: authsys_parms (RFC 5531 section 14)
      uint32_t gids;
      SECMODE_RETURN_IF_ERROR(U32(d, "stamp"));
      SECMODE_RETURN_IF_ERROR(Opaque(d, 255, "machinename"));
      SECMODE_RETURN_IF_ERROR(U32(d, "uid"));
      SECMODE_RETURN_IF_ERROR(U32(d, "gid"));
      SECMODE_RETURN_IF_ERROR(Count(d, 16, &gids, "gids"));
      SECMODE_RETURN_IF_ERROR(d.Skip(size_t{gids} * 4, "gids"));
    } else if (flavor == 6) {  // RPCSEC_GSS: gss_cb_handles4
      SECMODE_RETURN_IF_ERROR(U32(d, "gcbp_service"));
      SECMODE_RETURN_IF_ERROR(Opaque(d, kAnyLength, "gcbp_handle_from_server"));
      SECMODE_RETURN_IF_ERROR(Opaque(d, kAnyLength, "gcbp_handle_from_client"));
    } else {
      return Status::Corrupt("cb_secflavor " + std::to_string(flavor));
    }
  }
  return Status::Ok();
}

// Operations' arguments, in operation order.
Status NoArgs(XdrDecoder&) { return Status::Ok(); }
Status OneU32(XdrDecoder& d) { return U32(d, "argument"); }
Status OneU64(XdrDecoder& d) { return U64(d, "argument"); }
Status OneBool(XdrDecoder& d) { return Bool(d, "argument"); }
Status OneComponent(XdrDecoder& d) { return Component(d); }
Status OneStateid(XdrDecoder& d) { return Stateid(d); }
Status OneFattr(XdrDecoder& d) { return Fattr(d); }
Status OneBitmap(XdrDecoder& d) { return Bitmap(d); }
Status OneStateOwner(XdrDecoder& d) { return StateOwner(d); }
Status OneSessionId(XdrDecoder& d) { return SessionId(d); }
Status SeqidStateid(XdrDecoder& d) {  // CLOSE4args
  SECMODE_RETURN_IF_ERROR(U32(d, "seqid"));
  return Stateid(d);
}
Status StateidSeqid(XdrDecoder& d) {  // OPEN_CONFIRM4args
  SECMODE_RETURN_IF_ERROR(Stateid(d));
  return U32(d, "seqid");
}
Status OffsetCount(XdrDecoder& d) {  // COMMIT4args
  SECMODE_RETURN_IF_ERROR(U64(d, "offset"));
  return U32(d, "count");
}
Status StateidOffsetU32(XdrDecoder& d) {  // READ4args, READ_PLUS4args, SEEK4args
  SECMODE_RETURN_IF_ERROR(Stateid(d));
  SECMODE_RETURN_IF_ERROR(U64(d, "offset"));
  return U32(d, "count");
}
Status StateidOffsetLength(XdrDecoder& d) {  // ALLOCATE4args, DEALLOCATE4args
  SECMODE_RETURN_IF_ERROR(Stateid(d));
  SECMODE_RETURN_IF_ERROR(U64(d, "offset"));
  return U64(d, "length");
}
Status Create(XdrDecoder& d) {  // CREATE4args
  uint32_t type;
  SECMODE_RETURN_IF_ERROR(d.GetU32(&type, "createtype4"));
  switch (type) {
    case 5: SECMODE_RETURN_IF_ERROR(Opaque(d, kAnyLength, "linkdata4")); break;  // NF4LNK
    case 3:                                                                      // NF4BLK
    case 4:                                                                      // NF4CHR
      SECMODE_RETURN_IF_ERROR(U32(d, "specdata1"));
      SECMODE_RETURN_IF_ERROR(U32(d, "specdata2"));
      break;
    case 1:  // NF4REG, NF4ATTRDIR, NF4NAMEDATTR: the union's void default (a
    case 8:  // server refuses them with NFS4ERR_BADTYPE)
    case 9:
    case 2:  // NF4DIR
    case 6:  // NF4SOCK
    case 7:  // NF4FIFO
      break;
    default: return Status::Corrupt("createtype4 " + std::to_string(type));
  }
  SECMODE_RETURN_IF_ERROR(Component(d));
  return Fattr(d);
}
Status Lock(XdrDecoder& d) {  // LOCK4args
  bool new_owner;
  SECMODE_RETURN_IF_ERROR(U32(d, "locktype"));
  SECMODE_RETURN_IF_ERROR(Bool(d, "reclaim"));
  SECMODE_RETURN_IF_ERROR(U64(d, "offset"));
  SECMODE_RETURN_IF_ERROR(U64(d, "length"));
  SECMODE_RETURN_IF_ERROR(d.GetBool(&new_owner, "new_lock_owner"));
  if (new_owner) {  // open_to_lock_owner4
    SECMODE_RETURN_IF_ERROR(U32(d, "open_seqid"));
    SECMODE_RETURN_IF_ERROR(Stateid(d));
    SECMODE_RETURN_IF_ERROR(U32(d, "lock_seqid"));
    return StateOwner(d);
  }
  SECMODE_RETURN_IF_ERROR(Stateid(d));  // exist_lock_owner4
  return U32(d, "lock_seqid");
}
Status Lockt(XdrDecoder& d) {  // LOCKT4args
  SECMODE_RETURN_IF_ERROR(U32(d, "locktype"));
  SECMODE_RETURN_IF_ERROR(U64(d, "offset"));
  SECMODE_RETURN_IF_ERROR(U64(d, "length"));
  return StateOwner(d);
}
Status Locku(XdrDecoder& d) {  // LOCKU4args
  SECMODE_RETURN_IF_ERROR(U32(d, "locktype"));
  SECMODE_RETURN_IF_ERROR(SeqidStateid(d));
  SECMODE_RETURN_IF_ERROR(U64(d, "offset"));
  return U64(d, "length");
}
Status Open(XdrDecoder& d) {  // OPEN4args
  uint32_t how, claim;
  SECMODE_RETURN_IF_ERROR(U32(d, "seqid"));
  SECMODE_RETURN_IF_ERROR(U32(d, "share_access"));
  SECMODE_RETURN_IF_ERROR(U32(d, "share_deny"));
  SECMODE_RETURN_IF_ERROR(StateOwner(d));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&how, "opentype4"));
  if (how == 1) {  // OPEN4_CREATE: createhow4
    uint32_t mode;
    SECMODE_RETURN_IF_ERROR(d.GetU32(&mode, "createmode4"));
    switch (mode) {
      case 0:  // UNCHECKED4
      case 1:  // GUARDED4
        SECMODE_RETURN_IF_ERROR(Fattr(d));
        break;
      case 2: SECMODE_RETURN_IF_ERROR(Verifier(d)); break;  // EXCLUSIVE4
      case 3:                                               // EXCLUSIVE4_1
        SECMODE_RETURN_IF_ERROR(Verifier(d));
        SECMODE_RETURN_IF_ERROR(Fattr(d));
        break;
      default: return Status::Corrupt("createmode4 " + std::to_string(mode));
    }
  } else if (how != 0) {
    return Status::Corrupt("opentype4 " + std::to_string(how));
  }
  SECMODE_RETURN_IF_ERROR(d.GetU32(&claim, "open_claim_type4"));
  switch (claim) {
    case 0: return Component(d);             // CLAIM_NULL
    case 1: return U32(d, "delegate_type");  // CLAIM_PREVIOUS
    case 2:                                  // CLAIM_DELEGATE_CUR
      SECMODE_RETURN_IF_ERROR(Stateid(d));
      return Component(d);
    case 3: return Component(d);  // CLAIM_DELEGATE_PREV
    case 4: return Status::Ok();  // CLAIM_FH
    case 5: return Stateid(d);    // CLAIM_DELEG_CUR_FH
    case 6: return Status::Ok();  // CLAIM_DELEG_PREV_FH
    default: return Status::Corrupt("open_claim_type4 " + std::to_string(claim));
  }
}
Status OpenDowngrade(XdrDecoder& d) {  // OPEN_DOWNGRADE4args
  SECMODE_RETURN_IF_ERROR(StateidSeqid(d));
  SECMODE_RETURN_IF_ERROR(U32(d, "share_access"));
  return U32(d, "share_deny");
}
Status Putfh(XdrDecoder& d) { return Opaque(d, kNfs4FhSize, "nfs_fh4"); }
Status Readdir(XdrDecoder& d) {  // READDIR4args
  SECMODE_RETURN_IF_ERROR(U64(d, "cookie"));
  SECMODE_RETURN_IF_ERROR(Verifier(d));
  SECMODE_RETURN_IF_ERROR(U32(d, "dircount"));
  SECMODE_RETURN_IF_ERROR(U32(d, "maxcount"));
  return Bitmap(d);
}
Status Rename(XdrDecoder& d) {  // RENAME4args
  SECMODE_RETURN_IF_ERROR(Component(d));
  return Component(d);
}
Status Setattr(XdrDecoder& d) {  // SETATTR4args
  SECMODE_RETURN_IF_ERROR(Stateid(d));
  return Fattr(d);
}
Status Setclientid(XdrDecoder& d) {  // SETCLIENTID4args (RFC 7530 16.33)
  SECMODE_RETURN_IF_ERROR(Verifier(d));
  SECMODE_RETURN_IF_ERROR(Opaque(d, kNfs4OpaqueLimit, "nfs_client_id4 id"));
  SECMODE_RETURN_IF_ERROR(U32(d, "cb_program"));
  SECMODE_RETURN_IF_ERROR(Opaque(d, kAnyLength, "r_netid"));
  SECMODE_RETURN_IF_ERROR(Opaque(d, kAnyLength, "r_addr"));
  return U32(d, "callback_ident");
}
Status SetclientidConfirm(XdrDecoder& d) {
  SECMODE_RETURN_IF_ERROR(U64(d, "clientid"));
  return Verifier(d);
}
Status Write(XdrDecoder& d) {  // WRITE4args
  SECMODE_RETURN_IF_ERROR(Stateid(d));
  SECMODE_RETURN_IF_ERROR(U64(d, "offset"));
  SECMODE_RETURN_IF_ERROR(U32(d, "stable"));
  return Opaque(d, kAnyLength, "data");
}
Status BackchannelCtl(XdrDecoder& d) {  // BACKCHANNEL_CTL4args
  SECMODE_RETURN_IF_ERROR(U32(d, "bca_cb_program"));
  return CallbackSecParms(d);
}
Status BindConnToSession(XdrDecoder& d) {  // BIND_CONN_TO_SESSION4args
  SECMODE_RETURN_IF_ERROR(SessionId(d));
  SECMODE_RETURN_IF_ERROR(U32(d, "bctsa_dir"));
  return Bool(d, "bctsa_use_conn_in_rdma_mode");
}
Status ExchangeId(XdrDecoder& d) {  // EXCHANGE_ID4args
  uint32_t how, impl;
  SECMODE_RETURN_IF_ERROR(Verifier(d));
  SECMODE_RETURN_IF_ERROR(Opaque(d, kNfs4OpaqueLimit, "co_ownerid"));
  SECMODE_RETURN_IF_ERROR(U32(d, "eia_flags"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&how, "state_protect_how4"));
  if (how == 1) {  // SP4_MACH_CRED: state_protect_ops4
    SECMODE_RETURN_IF_ERROR(Bitmap(d));
    SECMODE_RETURN_IF_ERROR(Bitmap(d));
  } else if (how != 0) {  // SP4_SSV's parameters are not laid out here
    return Status::Unavailable("state_protect_how4 " + std::to_string(how) +
                               " (SP4_SSV) is not read");
  }
  SECMODE_RETURN_IF_ERROR(Count(d, 1, &impl, "eia_client_impl_id"));
  if (impl == 1) {  // nfs_impl_id4
    SECMODE_RETURN_IF_ERROR(Opaque(d, kAnyLength, "nii_domain"));
    SECMODE_RETURN_IF_ERROR(Opaque(d, kAnyLength, "nii_name"));
    SECMODE_RETURN_IF_ERROR(U64(d, "nii_date seconds"));
    SECMODE_RETURN_IF_ERROR(U32(d, "nii_date nseconds"));
  }
  return Status::Ok();
}
Status CreateSession(XdrDecoder& d) {  // CREATE_SESSION4args
  SECMODE_RETURN_IF_ERROR(U64(d, "csa_clientid"));
  SECMODE_RETURN_IF_ERROR(U32(d, "csa_sequence"));
  SECMODE_RETURN_IF_ERROR(U32(d, "csa_flags"));
  SECMODE_RETURN_IF_ERROR(ChannelAttrs(d));
  SECMODE_RETURN_IF_ERROR(ChannelAttrs(d));
  SECMODE_RETURN_IF_ERROR(U32(d, "csa_cb_program"));
  return CallbackSecParms(d);
}
Status Sequence(XdrDecoder& d) {  // SEQUENCE4args
  SECMODE_RETURN_IF_ERROR(SessionId(d));
  for (const char* what : {"sa_sequenceid", "sa_slotid", "sa_highest_slotid"}) {
    SECMODE_RETURN_IF_ERROR(U32(d, what));
  }
  return Bool(d, "sa_cachethis");
}
Status TestStateid(XdrDecoder& d) {  // TEST_STATEID4args
  uint32_t n;
  SECMODE_RETURN_IF_ERROR(Count(d, kMaxEntries, &n, "ts_stateids"));
  return d.Skip(size_t{n} * 16, "ts_stateids");
}
Status IoAdvise(XdrDecoder& d) {  // IO_ADVISE4args
  SECMODE_RETURN_IF_ERROR(StateidOffsetLength(d));
  return Bitmap(d);
}
Status Clone(XdrDecoder& d) {  // CLONE4args
  SECMODE_RETURN_IF_ERROR(Stateid(d));
  SECMODE_RETURN_IF_ERROR(Stateid(d));
  for (const char* what : {"cl_src_offset", "cl_dst_offset", "cl_count"}) {
    SECMODE_RETURN_IF_ERROR(U64(d, what));
  }
  return Status::Ok();
}
Status Setxattr(XdrDecoder& d) {  // SETXATTR4args (RFC 8276 8.4.2)
  SECMODE_RETURN_IF_ERROR(U32(d, "sxa_option"));
  SECMODE_RETURN_IF_ERROR(Component(d));
  return Opaque(d, kAnyLength, "sxa_value");
}
Status Listxattrs(XdrDecoder& d) {  // LISTXATTRS4args
  SECMODE_RETURN_IF_ERROR(U64(d, "lxa_cookie"));
  return U32(d, "lxa_maxcount");
}

}  // namespace

// One row per operation, in number order. A null skip: the arguments are not
// laid out here (long or rare ones); a COMPOUND is named up to such an
// operation.
const Nfs4Op kNfs4Ops[] = {
    {3, "ACCESS", 0, OneU32},
    {kOpClose, "CLOSE", 0, SeqidStateid},
    {5, "COMMIT", 0, OffsetCount},
    {6, "CREATE", 0, Create},
    {7, "DELEGPURGE", 0, OneU64},
    {8, "DELEGRETURN", 0, OneStateid},
    {kOpGetattr, "GETATTR", 0, OneBitmap},
    {kOpGetfh, "GETFH", 0, NoArgs},
    {11, "LINK", 0, OneComponent},
    {12, "LOCK", 0, Lock},
    {13, "LOCKT", 0, Lockt},
    {14, "LOCKU", 0, Locku},
    {kOpLookup, "LOOKUP", 0, OneComponent},
    {16, "LOOKUPP", 0, NoArgs},
    {17, "NVERIFY", 0, OneFattr},
    {kOpOpen, "OPEN", 0, Open},
    {19, "OPENATTR", 0, OneBool},
    {20, "OPEN_CONFIRM", 0, StateidSeqid},
    {21, "OPEN_DOWNGRADE", 0, OpenDowngrade},
    {kOpPutfh, "PUTFH", 0, Putfh},
    {23, "PUTPUBFH", 0, NoArgs},
    {kOpPutrootfh, "PUTROOTFH", 0, NoArgs},
    {kOpRead, "READ", 0, StateidOffsetU32},
    {26, "READDIR", 0, Readdir},
    {27, "READLINK", 0, NoArgs},
    {28, "REMOVE", 0, OneComponent},
    {29, "RENAME", 0, Rename},
    {30, "RENEW", 0, OneU64},
    {31, "RESTOREFH", 0, NoArgs},
    {32, "SAVEFH", 0, NoArgs},
    {33, "SECINFO", 0, OneComponent},
    {34, "SETATTR", 0, Setattr},
    {35, "SETCLIENTID", 0, Setclientid},
    {36, "SETCLIENTID_CONFIRM", 0, SetclientidConfirm},
    {37, "VERIFY", 0, OneFattr},
    {kOpWrite, "WRITE", 0, Write},
    {39, "RELEASE_LOCKOWNER", 0, OneStateOwner},
    {40, "BACKCHANNEL_CTL", 1, BackchannelCtl},
    {41, "BIND_CONN_TO_SESSION", 1, BindConnToSession},
    {kOpExchangeId, "EXCHANGE_ID", 1, ExchangeId},
    {kOpCreateSession, "CREATE_SESSION", 1, CreateSession},
    {kOpDestroySession, "DESTROY_SESSION", 1, OneSessionId},
    {45, "FREE_STATEID", 1, OneStateid},
    {46, "GET_DIR_DELEGATION", 1, nullptr},
    {47, "GETDEVICEINFO", 1, nullptr},
    {48, "GETDEVICELIST", 1, nullptr},
    {49, "LAYOUTCOMMIT", 1, nullptr},
    {50, "LAYOUTGET", 1, nullptr},
    {51, "LAYOUTRETURN", 1, nullptr},
    {52, "SECINFO_NO_NAME", 1, OneU32},
    {kOpSequence, "SEQUENCE", 1, Sequence},
    {54, "SET_SSV", 1, nullptr},
    {55, "TEST_STATEID", 1, TestStateid},
    {56, "WANT_DELEGATION", 1, nullptr},
    {kOpDestroyClientid, "DESTROY_CLIENTID", 1, OneU64},
    {kOpReclaimComplete, "RECLAIM_COMPLETE", 1, OneBool},
    {59, "ALLOCATE", 2, StateidOffsetLength},
    {60, "COPY", 2, nullptr},
    {61, "COPY_NOTIFY", 2, nullptr},
    {62, "DEALLOCATE", 2, StateidOffsetLength},
    {63, "IO_ADVISE", 2, IoAdvise},
    {64, "LAYOUTERROR", 2, nullptr},
    {65, "LAYOUTSTATS", 2, nullptr},
    {66, "OFFLOAD_CANCEL", 2, OneStateid},
    {67, "OFFLOAD_STATUS", 2, OneStateid},
    {68, "READ_PLUS", 2, StateidOffsetU32},
    {69, "SEEK", 2, StateidOffsetU32},
    {70, "WRITE_SAME", 2, nullptr},
    {71, "CLONE", 2, Clone},
    {72, "GETXATTR", 2, OneComponent},
    {73, "SETXATTR", 2, Setxattr},
    {74, "LISTXATTRS", 2, Listxattrs},
    {75, "REMOVEXATTR", 2, OneComponent},
    {kOpIllegal, "ILLEGAL", 0, NoArgs},
};
const size_t kNfs4OpCount = std::size(kNfs4Ops);

const Nfs4Op* FindNfs4Op(uint32_t opcode) {
  const Nfs4Op* end = kNfs4Ops + kNfs4OpCount;
  const Nfs4Op* it = std::lower_bound(
      kNfs4Ops, end, opcode, [](const Nfs4Op& row, uint32_t op) { return row.opcode < op; });
  return it != end && it->opcode == opcode ? it : nullptr;
}

std::string Nfs4OpName(uint32_t opcode) {
  if (const Nfs4Op* row = FindNfs4Op(opcode)) return row->name;
  std::string name = "OP";
  name += std::to_string(opcode);
  return name;
}

Status ReadCompoundOps(ByteView args, CompoundOps* out) {
  // Emptied in place: a caller reading call after call keeps the capacity.
  out->minor_version = out->stated = 0;
  out->opcodes.clear();
  out->stopped.clear();
  out->has_sequence = false;
  out->session_id.clear();
  out->sequence_id = out->slot_id = out->highest_slot_id = 0;
  XdrDecoder d(args);
  SECMODE_RETURN_IF_ERROR(Opaque(d, kAnyLength, "tag"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&out->minor_version, "minorversion"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&out->stated, "argarray length"));
  for (uint32_t i = 0; i < out->stated; ++i) {
    if (out->opcodes.size() == CompoundOps::kMaxNamedOps) {
      out->stopped = "the first " + std::to_string(CompoundOps::kMaxNamedOps) +
                     " operations are named, no more";
      return Status::Ok();
    }
    uint32_t op;
    if (Status s = d.GetU32(&op, "argop"); !s.ok()) {
      out->stopped = s.message();
      return Status::Ok();
    }
    out->opcodes.push_back(op);
    const bool last = i + 1 == out->stated;
    const Nfs4Op* row = FindNfs4Op(op);
    if (!row || !row->skip) {
      if (!last) out->stopped = Nfs4OpName(op) + ": its arguments are not read";
      return Status::Ok();
    }
    const size_t at = d.position();
    if (Status s = row->skip(d); !s.ok()) {
      if (!last) out->stopped = Nfs4OpName(op) + "'s arguments: " + s.message();
      return Status::Ok();
    }
    if (i == 0 && op == kOpSequence) {
      XdrDecoder again(args.subspan(at));
      ByteView session;
      bool cache;
      // Read once already: these cannot fail.
      if (again.GetFixedOpaque(kNfs4SessionIdSize, &session, "sessionid4").ok() &&
          again.GetU32(&out->sequence_id, "sa_sequenceid").ok() &&
          again.GetU32(&out->slot_id, "sa_slotid").ok() &&
          again.GetU32(&out->highest_slot_id, "sa_highest_slotid").ok() &&
          again.GetBool(&cache, "sa_cachethis").ok()) {
        out->has_sequence = true;
        out->session_id.assign(session.begin(), session.end());
      }
    }
  }
  return Status::Ok();
}

std::string CompoundOpNames(const CompoundOps& ops) {
  std::string names;
  for (uint32_t op : ops.opcodes) {
    if (!names.empty()) names += ' ';
    names += Nfs4OpName(op);
  }
  if (ops.stated > ops.opcodes.size()) {
    if (!names.empty()) names += ' ';
    names += '+';
    names += std::to_string(ops.stated - ops.opcodes.size());
  }
  if (names.empty()) names = "no operation";
  return names;
}

}  // namespace secmode::rpc
