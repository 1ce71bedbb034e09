#include "rpc/nfs.h"

#include <cstring>
#include <unordered_map>

#include "rpc/nfs4_ops.h"
#include "rpc/xdr.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Status;

namespace {

// RFC 8881 constants (the operation numbers are rpc/nfs4_ops.h's).
constexpr uint32_t kNfs4Ok = 0, kNfs4ErrInval = 22, kNfs4ErrStale = 70, kNfs4ErrOpIllegal = 10044;
constexpr uint32_t kFileSync4 = 2;
const uint8_t kSessionId[kNfs4SessionIdSize] = {0x5e, 0xc0, 0xde, 0x01, 0, 0, 0, 1,
                                                0,    0,    0,    0,    0, 0, 0, 2};
// Linux-like file handles (28 bytes); "r" file for READ, "w" for WRITE,
// GETATTR on either.
const uint8_t kFhRead[28] = {1, 0, 6, 0, 0x5e, 0xc0, 0xde, 0, 0, 0, 0, 0, 0, 0,
                             0, 0, 0, 0, 0,    0,    0,    0, 0, 0, 0, 0, 0, 'r'};
const uint8_t kFhWrite[28] = {1, 0, 6, 0, 0x5e, 0xc0, 0xde, 0, 0, 0, 0, 0, 0, 0,
                              0, 0, 0, 0, 0,    0,    0,    0, 0, 0, 0, 0, 0, 'w'};

const Bytes& PatternFile(uint32_t seed) {
  static const Bytes read = common::PatternBytes(2 * kNfsFileSize, 0x4eadu);
  static const Bytes write = common::PatternBytes(2 * kNfsFileSize, 0x771eu);
  return seed == 0 ? read : write;
}

// GETATTR as the Linux client asks after I/O: type, change, size, fsid,
// fileid, mode, numlinks, owner, owner_group, space_used, times.
const uint32_t kAttrMask[3] = {0x0010011a, 0x0030a03a, 0x00000000};

void EncodeAttrValues(Bytes* out) {
  XdrEncoder e(out);
  e.PutU32(1);                   // type NF4REG
  e.PutU64(0x1234567800000042);  // change
  e.PutU64(kNfsFileSize);        // size
  e.PutU64(0x0101);              // fsid.major
  e.PutU64(0x0001);              // fsid.minor
  e.PutU64(0x42);                // fileid
  e.PutU32(0644);                // mode
  e.PutU32(1);                   // numlinks
  e.PutString("user@secmode.test");
  e.PutString("users@secmode.test");
  e.PutU64(kNfsFileSize);        // space_used
  for (int i = 0; i < 3; ++i) {  // time_access, time_metadata, time_modify
    e.PutU64(1700000000 + i);
    e.PutU32(0);
  }
}

}  // namespace

const char* NfsOpName(NfsOp op) {
  switch (op) {
    case NfsOp::kGetattr: return "getattr";
    case NfsOp::kRead: return "read";
    case NfsOp::kWrite: return "write";
  }
  return "?";
}

common::Result<NfsOp> ParseNfsOp(const std::string& name) {
  if (name == "getattr") return NfsOp::kGetattr;
  if (name == "read") return NfsOp::kRead;
  if (name == "write") return NfsOp::kWrite;
  return Status::InvalidArgument("unknown NFS operation '" + name +
                                 "' (known: getattr, read, write)");
}

ByteView WritePattern(uint64_t offset, uint32_t count) {
  return ByteView(PatternFile(1))
      .subspan(offset % kNfsFileSize, std::min<size_t>(count, kNfsMaxIo));
}

ByteView ReadPattern(uint64_t offset, uint32_t count) {
  return ByteView(PatternFile(0))
      .subspan(offset % kNfsFileSize, std::min<size_t>(count, kNfsMaxIo));
}

uint64_t Fnv1a64(ByteView data) {
  // FNV-1a over 64-bit little-endian words (then the tail bytes): 8 bytes
  // per multiply instead of one, so checking a large WRITE stays a small
  // part of the server's work.
  uint64_t h = 0xcbf29ce484222325ull;
  size_t i = 0;
  for (; i + 8 <= data.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, data.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < data.size(); ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

namespace {
// The client's expected digest per (offset, count); offsets cycle, so this
// stays small (at most 1 MiB / count entries per size).
uint64_t ExpectedWriteDigest(uint64_t offset, uint32_t count) {
  thread_local std::unordered_map<uint64_t, uint64_t> cache;
  uint64_t key = (offset % kNfsFileSize) << 21 | count;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() > 4096) cache.clear();
  uint64_t h = Fnv1a64(WritePattern(offset, count));
  cache.emplace(key, h);
  return h;
}
}  // namespace

const NfsTarget& OwnServerTarget() {
  static const NfsTarget t = [] {
    NfsTarget o;
    o.session_id.assign(kSessionId, kSessionId + kNfs4SessionIdSize);
    o.fh_read.assign(kFhRead, kFhRead + 28);
    o.fh_write.assign(kFhWrite, kFhWrite + 28);
    o.stateid_read.assign(4, 0);  // seqid 0, then 12 bytes of "other"
    o.stateid_read.insert(o.stateid_read.end(), kSessionId, kSessionId + 12);
    o.stateid_write = o.stateid_read;
    return o;
  }();
  return t;
}

std::string Nfs4StatusName(uint32_t status) {
  static const std::unordered_map<uint32_t, const char*> kNames = {
      {0, "NFS4_OK"},
      {1, "NFS4ERR_PERM"},
      {2, "NFS4ERR_NOENT"},
      {5, "NFS4ERR_IO"},
      {13, "NFS4ERR_ACCESS"},
      {21, "NFS4ERR_ISDIR"},
      {22, "NFS4ERR_INVAL"},
      {70, "NFS4ERR_STALE"},
      {10001, "NFS4ERR_BADHANDLE"},
      {10004, "NFS4ERR_NOTSUPP"},
      {10006, "NFS4ERR_SERVERFAULT"},
      {10008, "NFS4ERR_DELAY"},
      {10011, "NFS4ERR_EXPIRED"},
      {10013, "NFS4ERR_GRACE"},
      {10016, "NFS4ERR_WRONGSEC"},
      {10017, "NFS4ERR_CLID_INUSE"},
      {10018, "NFS4ERR_RESOURCE"},
      {10021, "NFS4ERR_MINOR_VERS_MISMATCH"},
      {10022, "NFS4ERR_STALE_CLIENTID"},
      {10074, "NFS4ERR_CLIENTID_BUSY"},
      {10025, "NFS4ERR_BAD_STATEID"},
      {10036, "NFS4ERR_BADXDR"},
      {10038, "NFS4ERR_OPENMODE"},
      {10044, "NFS4ERR_OP_ILLEGAL"},
      {10052, "NFS4ERR_BADSESSION"},
      {10053, "NFS4ERR_BADSLOT"},
      {10054, "NFS4ERR_COMPLETE_ALREADY"},
      {10055, "NFS4ERR_CONN_NOT_BOUND_TO_SESSION"},
      {10057, "NFS4ERR_DEADSESSION"},
      {10063, "NFS4ERR_SEQ_MISORDERED"},
      {10064, "NFS4ERR_SEQUENCE_POS"},
      {10065, "NFS4ERR_REQ_TOO_BIG"},
      {10066, "NFS4ERR_REP_TOO_BIG"},
      {10067, "NFS4ERR_REP_TOO_BIG_TO_CACHE"},
      {10068, "NFS4ERR_RETRY_UNCACHED_REP"},
      {10069, "NFS4ERR_UNSAFE_COMPOUND"},
      {10070, "NFS4ERR_TOO_MANY_OPS"},
      {10071, "NFS4ERR_OP_NOT_IN_SESSION"},
      {10077, "NFS4ERR_CLIENTID_BUSY"},
  };
  auto it = kNames.find(status);
  const std::string n = std::to_string(status);
  return it == kNames.end() ? "NFS status " + n : std::string(it->second) + " (" + n + ")";
}

void EncodeCompoundArgs(const NfsRequest& r, Bytes* out) {
  const NfsTarget& t = r.target ? *r.target : OwnServerTarget();
  XdrEncoder e(out);
  e.PutString("");  // tag
  e.PutU32(1);      // minorversion
  e.PutU32(3);      // argarray length
  // SEQUENCE4args (RFC 8881 18.46).
  e.PutU32(kOpSequence);
  e.PutFixedOpaque(t.session_id);
  e.PutU32(r.sequence);
  e.PutU32(r.slot);
  e.PutU32(t.highest_slot);
  e.PutBool(false);
  // PUTFH4args.
  e.PutU32(kOpPutfh);
  e.PutOpaque(r.op == NfsOp::kWrite ? t.fh_write : t.fh_read);
  switch (r.op) {
    case NfsOp::kGetattr:
      e.PutU32(kOpGetattr);
      e.PutU32(2);
      e.PutU32(kAttrMask[0]);
      e.PutU32(kAttrMask[1]);
      break;
    case NfsOp::kRead:
      e.PutU32(kOpRead);
      e.PutFixedOpaque(t.stateid_read);
      e.PutU64(r.offset);
      e.PutU32(r.count);
      break;
    case NfsOp::kWrite:
      e.PutU32(kOpWrite);
      e.PutFixedOpaque(t.stateid_write);
      e.PutU64(r.offset);
      e.PutU32(kFileSync4);
      e.PutOpaque(WritePattern(r.offset, r.count));
      break;
  }
}

Status CheckCompoundResults(const NfsRequest& r, ByteView results) {
  const NfsTarget& t = r.target ? *r.target : OwnServerTarget();
  XdrDecoder d(results);
  uint32_t status, n, op, st;
  ByteView tag, sid, data;
  SECMODE_RETURN_IF_ERROR(d.GetU32(&status, "COMPOUND4res status"));
  SECMODE_RETURN_IF_ERROR(d.GetOpaque(&tag, 1024, "COMPOUND4res tag"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&n, "COMPOUND4res resarray length"));
  // A failed COMPOUND names the failing operation's status (the last one).
  if (status != kNfs4Ok) {
    const std::string which =
        n <= 1 ? "SEQUENCE" : "operation " + std::to_string(n) + " of the COMPOUND";
    return Status::Unavailable(which + " failed: " + Nfs4StatusName(status));
  }
  if (n != 3)
    return Status::Corrupt("COMPOUND4res has " + std::to_string(n) + " results, expected 3");
  uint32_t v[5];
  SECMODE_RETURN_IF_ERROR(d.GetU32(&op, "resop"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&st, "SEQUENCE status"));
  if (op != kOpSequence || st != kNfs4Ok)
    return Status::Corrupt("first result is not a good SEQUENCE");
  SECMODE_RETURN_IF_ERROR(d.GetFixedOpaque(kNfs4SessionIdSize, &sid, "SEQUENCE sessionid"));
  for (auto& x : v) SECMODE_RETURN_IF_ERROR(d.GetU32(&x, "SEQUENCE4resok"));
  if (v[0] != r.sequence || v[1] != r.slot)
    return Status::Corrupt("SEQUENCE result for another slot/sequence");
  SECMODE_RETURN_IF_ERROR(d.GetU32(&op, "resop"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&st, "PUTFH status"));
  if (op != kOpPutfh || st != kNfs4Ok) return Status::Corrupt("second result is not a good PUTFH");
  SECMODE_RETURN_IF_ERROR(d.GetU32(&op, "resop"));
  SECMODE_RETURN_IF_ERROR(d.GetU32(&st, "op status"));
  if (st != kNfs4Ok) return Status::Unavailable("operation failed: " + Nfs4StatusName(st));
  switch (r.op) {
    case NfsOp::kGetattr: {
      uint32_t words, w;
      ByteView attrs;
      if (op != kOpGetattr) return Status::Corrupt("third result is not GETATTR");
      SECMODE_RETURN_IF_ERROR(d.GetU32(&words, "GETATTR attrmask length"));
      if (words > 8) return Status::Corrupt("GETATTR attrmask too long");
      for (uint32_t i = 0; i < words; ++i) SECMODE_RETURN_IF_ERROR(d.GetU32(&w, "attrmask"));
      SECMODE_RETURN_IF_ERROR(d.GetOpaque(&attrs, 4096, "GETATTR attr_vals"));
      break;
    }
    case NfsOp::kRead: {
      bool eof;
      if (op != kOpRead) return Status::Corrupt("third result is not READ");
      SECMODE_RETURN_IF_ERROR(d.GetBool(&eof, "READ eof"));
      SECMODE_RETURN_IF_ERROR(d.GetOpaque(&data, kNfsMaxIo, "READ data"));
      ByteView want = ReadPattern(r.offset, r.count);
      if (!t.read_pattern) {
        if (data.size() != r.count && !eof) {
          return Status::Corrupt("READ returned " + std::to_string(data.size()) + " of " +
                                 std::to_string(r.count) + " bytes before the end of the file");
        }
        break;
      }
      if (data.size() != want.size() || std::memcmp(data.data(), want.data(), want.size()) != 0) {
        return Status::Corrupt("READ returned " + std::to_string(data.size()) +
                               " bytes that differ from the file's contents at offset " +
                               std::to_string(r.offset));
      }
      break;
    }
    case NfsOp::kWrite: {
      uint32_t count, committed;
      ByteView verf;
      if (op != kOpWrite) return Status::Corrupt("third result is not WRITE");
      SECMODE_RETURN_IF_ERROR(d.GetU32(&count, "WRITE count"));
      SECMODE_RETURN_IF_ERROR(d.GetU32(&committed, "WRITE committed"));
      SECMODE_RETURN_IF_ERROR(d.GetFixedOpaque(8, &verf, "WRITE writeverf"));
      uint64_t got = 0;
      for (uint8_t b : verf) got = (got << 8) | b;
      if (!t.write_digest) {
        if (count != r.count) {
          return Status::Corrupt("WRITE stored " + std::to_string(count) + " of " +
                                 std::to_string(r.count) + " bytes");
        }
        break;
      }
      uint64_t want = ExpectedWriteDigest(r.offset, r.count);
      if (count != r.count || got != want) {
        return Status::Corrupt("WRITE integrity: server stored " + std::to_string(count) +
                               " bytes with FNV-1a " + std::to_string(got) + ", client sent " +
                               std::to_string(r.count) + " with " + std::to_string(want));
      }
      break;
    }
  }
  return d.ExpectEnd("COMPOUND4res");
}

MemoryNfsServer::MemoryNfsServer(size_t max_reply)
    : max_reply_(max_reply), write_file_(2 * kNfsFileSize, 0) {}

ProgramSpec MemoryNfsServer::Program() {
  ProgramSpec p;
  p.prog = kNfsProgram;
  p.vers_low = p.vers_high = kNfsVersion;
  p.handler = [this](uint32_t, uint32_t proc, ByteView args, Bytes* results) {
    return Execute(proc, args, results);
  };
  return p;
}

// RFC 8881 section 16.2: COMPOUND; stops at the first failing operation.
uint32_t MemoryNfsServer::Execute(uint32_t proc, ByteView args, Bytes* results) {
  if (proc == kNfsProcNull) return args.empty() ? kSuccess : kGarbageArgs;
  if (proc != kNfsProcCompound) return kProcUnavail;
  XdrDecoder d(args);
  ByteView tag;
  uint32_t minor, n;
  if (!d.GetOpaque(&tag, 1024, "tag").ok() || !d.GetU32(&minor, "minorversion").ok() ||
      !d.GetU32(&n, "argarray length").ok() || n > 64) {
    return kGarbageArgs;
  }
  results->clear();
  XdrEncoder e(results);
  size_t status_at = e.ReserveU32();
  e.PutOpaque(tag);
  size_t count_at = e.ReserveU32();
  uint32_t done = 0, status = kNfs4Ok;
  const uint8_t* fh = nullptr;
  for (uint32_t i = 0; i < n && status == kNfs4Ok; ++i) {
    uint32_t op;
    if (!d.GetU32(&op, "argop").ok()) return kGarbageArgs;
    const size_t op_start = results->size();
    e.PutU32(op);
    ++done;
    switch (op) {
      case kOpSequence: {
        ByteView sid;
        uint32_t seq, slot, hi;
        bool cache;
        if (!d.GetFixedOpaque(kNfs4SessionIdSize, &sid, "sessionid").ok() ||
            !d.GetU32(&seq, "seq").ok() || !d.GetU32(&slot, "slot").ok() ||
            !d.GetU32(&hi, "hi").ok() || !d.GetBool(&cache, "cachethis").ok()) {
          return kGarbageArgs;
        }
        e.PutU32(kNfs4Ok);
        e.PutFixedOpaque(sid);
        e.PutU32(seq);
        e.PutU32(slot);
        e.PutU32(hi);
        e.PutU32(hi);
        e.PutU32(0);  // sr_status_flags
        break;
      }
      case kOpPutfh: {
        ByteView h;
        if (!d.GetOpaque(&h, kNfs4FhSize, "fh").ok()) return kGarbageArgs;
        if (h.size() == 28 && std::memcmp(h.data(), kFhRead, 28) == 0) {
          fh = kFhRead;
        } else if (h.size() == 28 && std::memcmp(h.data(), kFhWrite, 28) == 0) {
          fh = kFhWrite;
        } else {
          status = kNfs4ErrStale;
        }
        e.PutU32(status);
        break;
      }
      case kOpGetattr: {
        uint32_t words, w;
        if (!d.GetU32(&words, "bitmap len").ok() || words > 8) return kGarbageArgs;
        for (uint32_t k = 0; k < words; ++k) {
          if (!d.GetU32(&w, "bitmap").ok()) return kGarbageArgs;
        }
        e.PutU32(kNfs4Ok);
        e.PutU32(2);
        e.PutU32(kAttrMask[0]);
        e.PutU32(kAttrMask[1]);
        size_t len_at = e.ReserveU32();
        size_t start = results->size();
        EncodeAttrValues(results);
        e.PatchU32(len_at, static_cast<uint32_t>(results->size() - start));
        break;
      }
      case kOpRead: {
        uint32_t seqid, count;
        uint64_t offset;
        ByteView other;
        if (!d.GetU32(&seqid, "stateid").ok() || !d.GetFixedOpaque(12, &other, "stateid").ok() ||
            !d.GetU64(&offset, "offset").ok() || !d.GetU32(&count, "count").ok()) {
          return kGarbageArgs;
        }
        if (fh != kFhRead || count > kNfsMaxIo) {
          status = kNfs4ErrInval;
          e.PutU32(status);
          break;
        }
        // status, eof, the data's length and its bytes (padded).
        if (results->size() + 12 + ReadPattern(offset, count).size() + 3 > max_reply_) {
          status = kNfs4ErrRepTooBig;
          e.PutU32(status);
          break;
        }
        e.PutU32(kNfs4Ok);
        e.PutBool(false);
        e.PutOpaque(ReadPattern(offset, count));
        break;
      }
      case kOpWrite: {
        uint32_t seqid, stable;
        uint64_t offset;
        ByteView other, data;
        if (!d.GetU32(&seqid, "stateid").ok() || !d.GetFixedOpaque(12, &other, "stateid").ok() ||
            !d.GetU64(&offset, "offset").ok() || !d.GetU32(&stable, "stable").ok() ||
            !d.GetOpaque(&data, kNfsMaxIo, "data").ok()) {
          return kGarbageArgs;
        }
        if (fh != kFhWrite) {
          status = kNfs4ErrInval;
          e.PutU32(status);
          break;
        }
        size_t at = offset % kNfsFileSize;
        {
          std::lock_guard<std::mutex> lock(write_mu_);
          std::memcpy(write_file_.data() + at, data.data(), data.size());
        }
        writes_++;
        // The verifier carries a digest of what arrived: the client checks
        // it against what it sent (end-to-end WRITE integrity).
        uint64_t h = Fnv1a64(data);
        e.PutU32(kNfs4Ok);
        e.PutU32(static_cast<uint32_t>(data.size()));
        e.PutU32(kFileSync4);
        e.PutU64(h);
        break;
      }
      default:
        status = kNfs4ErrOpIllegal;
        e.PutU32(status);
        break;
    }
    if (results->size() > max_reply_) {
      // Any other operation's results crossing the limit: its result
      // becomes the error alone (RFC 8881 section 15.1.3).
      results->resize(op_start);
      e.PutU32(op);
      status = kNfs4ErrRepTooBig;
      e.PutU32(status);
    }
  }
  if (status == kNfs4Ok && !d.ExpectEnd("COMPOUND4args").ok()) return kGarbageArgs;
  e.PatchU32(status_at, status);
  e.PatchU32(count_at, done);
  return kSuccess;
}

}  // namespace secmode::rpc
