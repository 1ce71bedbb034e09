// fuzz_corpus_gen DIR: writes the seed corpora of the fuzz targets into
// DIR/<target>/<seed> (`make fuzz-corpus` writes tests/fuzz/corpus), every
// seed built by the project's own encoders in the input format its target
// reads:
//   rpc_gss_fuzzer    GssCase programs (gss_fuzz_case.h): DATA calls of every
//                     service and NFS operation with in-order, duplicate,
//                     below-window and MAXSEQ sequence numbers, altered calls,
//                     genuine and altered INIT tokens, CONTINUE_INIT, bodies,
//                     DESTROY, raw records;
//   rpc_call_fuzzer   AUTH_NONE / AUTH_SYS / RPCSEC_GSS call records, COMPOUND
//                     arguments, and the replies a server core gives;
//   rpc_record_fuzzer record-marked streams of calls (one and several
//                     fragments, several records);
//   rpc_probe_fuzzer  reply streams for the probe: the fixture's genuine
//                     replies by index (in order, late, duplicated,
//                     altered), replies to no call, a flood of them, an
//                     oversize mark, fragments;
//   native_token_fuzz wrap and MIC tokens under the target's fixed keys;
//   smb_parsers_fuzz  SMB2 messages, signed messages and chains (under the
//                     target's signing key), template edits;
//   smb_client_fuzz   descriptions of a server's responses in every mode
//                     (the target signs and seals them): completions,
//                     interim ones, compound, unknown, clear, unsigned,
//                     cut frames;
//   trace_capture_fuzz captures (common/pcap.h's writer) of SMB2, AUTH_SYS and
//                     RPCSEC_GSS calls and replies with lagging, duplicate
//                     and context-problem answers, and their frames one by
//                     one (the target's frame mode).
// Sealed wrap tokens carry random confounders, so those seeds differ from
// run to run; every other seed is the same bytes each time.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/pcap.h"
#include "gss/native_protector.h"
#include "rpc/nfs.h"
#include "rpc/nfs41.h"
#include "rpc/probe_replies.h"
#include "rpc/record.h"
#include "rpc/rpc_msg.h"
#include "rpc/sequence_window.h"
#include "rpc/server_core.h"
#include "rpc/xdr.h"
#include "smb/message.h"
#include "smb/signing.h"
#include "smb/transform.h"
#include "tests/fuzz/fuzz_io.h"
#include "tests/fuzz/gss_fuzz_case.h"
#include "tests/fuzz/native_keys.h"
#include "tests/support/nfs41_replies.h"

namespace {

using secmode::common::Bytes;
using secmode::common::ByteView;
namespace fuzz = secmode::fuzz;
namespace rpc = secmode::rpc;
namespace smb = secmode::smb;

class Writer {
 public:
  explicit Writer(std::string dir) : dir_(std::move(dir)) {}
  bool ok() const { return ok_; }
  int written() const { return written_; }

  void Target(const std::string& name) {
    target_ = dir_ + "/" + name;
    mkdir(dir_.c_str(), 0755);
    mkdir(target_.c_str(), 0755);
  }
  void Seed(const std::string& name, ByteView bytes) {
    const std::string path = target_ + "/" + name;
    FILE* f = fopen(path.c_str(), "wb");
    if (f == nullptr || fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
      fprintf(stderr, "fuzz_corpus_gen: cannot write %s: %s\n", path.c_str(), strerror(errno));
      ok_ = false;
    } else {
      ++written_;
    }
    if (f != nullptr) fclose(f);
  }

 private:
  std::string dir_, target_;
  bool ok_ = true;
  int written_ = 0;
};

Bytes Compound(rpc::NfsOp op, uint32_t count) {
  rpc::NfsRequest r;
  r.op = op;
  r.count = count;
  Bytes args;
  rpc::EncodeCompoundArgs(r, &args);
  return args;
}

// An AUTH_SYS call as rpc::NewSysAuth builds it, with a fixed machine name
// (NewSysAuth puts in the host's) so the seeds do not depend on the host.
Bytes SysCall(uint32_t xid, uint32_t proc, ByteView args) {
  rpc::AuthSysParms p;
  p.stamp = 0x5ec0de;
  p.machine = "secmode-fuzz";
  p.gids = {0};
  Bytes cred, record;
  rpc::EncodeAuthSys(p, &cred);
  rpc::EncodeCallPrefix(xid, rpc::kNfsProgram, rpc::kNfsVersion, proc, rpc::kAuthSys, cred,
                        &record);
  rpc::XdrEncoder e(&record);
  e.PutU32(rpc::kAuthNone);
  e.PutU32(0);
  e.PutRaw(args);
  return record;
}

Bytes Prefixed(uint8_t first, ByteView rest) {
  Bytes out(1 + rest.size());
  out[0] = first;
  if (!rest.empty()) std::memcpy(out.data() + 1, rest.data(), rest.size());
  return out;
}

// ------------------------------------------------------------ rpc_gss_fuzzer

void GssSeeds(Writer& w) {
  w.Target("rpc_gss_fuzzer");
  using fuzz::DataCall;
  using fuzz::GssCase;
  using fuzz::GssOp;
  struct Args {
    const char* name;
    uint8_t proc;
    Bytes bytes;
  };
  const std::vector<Args> args = {{"null", 0, {}},
                                  {"getattr", 1, Compound(rpc::NfsOp::kGetattr, 0)},
                                  {"read4k", 1, Compound(rpc::NfsOp::kRead, 4096)},
                                  {"write4k", 1, Compound(rpc::NfsOp::kWrite, 4096)}};
  const char* services[] = {"", "none", "integ", "priv"};
  auto calls = [](std::vector<int16_t> deltas) {
    std::vector<DataCall> out;
    for (int16_t d : deltas) out.push_back(DataCall{d, false, {}});
    return out;
  };
  for (int mit = 0; mit < 2; ++mit) {
    const std::string fam = mit ? "mit-" : "native-";
    for (uint8_t svc = 1; svc <= 3; ++svc) {
      for (const Args& a : args) {
        GssCase c;
        c.op = GssOp::kData;
        c.mit = mit != 0;
        c.service = svc;
        c.proc = a.proc;
        c.base_seq = 1;
        c.calls = calls({0, 1, 2});
        c.payload = a.bytes;
        w.Seed(fam + "data-" + services[svc] + "-" + a.name, fuzz::EncodeGssCase(c));
      }
      const Bytes getattr = Compound(rpc::NfsOp::kGetattr, 0);
      // The window: a duplicate, one below the window (32), a late one
      // inside it, and the edge of MAXSEQ.
      struct Pattern {
        const char* name;
        uint32_t base;
        std::vector<int16_t> deltas;
      };
      const Pattern patterns[] = {
          {"duplicate", 100, {0, 0}},           {"below-window", 100, {40, 8, 9}},
          {"late-inside", 100, {31, 0, 30, 0}}, {"maxseq", rpc::kMaxGssSeq - 2, {0, 1, 2, 3}},
          {"wrap", 0xFFFFFFF0u, {0, 16, 32}},
      };
      for (const Pattern& p : patterns) {
        GssCase c;
        c.op = GssOp::kData;
        c.mit = mit != 0;
        c.service = svc;
        c.proc = 1;
        c.base_seq = p.base;
        c.calls = calls(p.deltas);
        c.payload = getattr;
        w.Seed(fam + "window-" + p.name + "-" + services[svc], fuzz::EncodeGssCase(c));
      }
      // Altered calls: a body byte, a header byte (breaks the MIC).
      GssCase c;
      c.op = GssOp::kData;
      c.mit = mit != 0;
      c.service = svc;
      c.proc = 1;
      c.base_seq = 5;
      c.calls = {DataCall{0, false, {{3, 0x40}}}, DataCall{1, true, {{10, 0x01}}}};
      c.payload = getattr;
      w.Seed(fam + "data-altered-" + services[svc], fuzz::EncodeGssCase(c));
      // Bodies: open and seal directly, genuine and altered.
      GssCase b;
      b.op = GssOp::kBody;
      b.mit = mit != 0;
      b.service = svc;
      b.proc = 1;
      b.base_seq = 7;
      b.payload = Compound(rpc::NfsOp::kWrite, 512);
      w.Seed(fam + "body-" + services[svc], fuzz::EncodeGssCase(b));
      b.mutations = {{20, 0x80}};
      b.cut = 3;
      w.Seed(fam + "body-altered-" + services[svc], fuzz::EncodeGssCase(b));
    }
    GssCase bad;
    bad.op = GssOp::kData;
    bad.mit = mit != 0;
    bad.service = 4;  // not an RFC 2203 service
    bad.calls = calls({0});
    w.Seed(fam + "data-bad-service", fuzz::EncodeGssCase(bad));
    // INIT: a genuine token, an altered one, a cut one, garbage, empty.
    GssCase init;
    init.op = GssOp::kInitToken;
    init.mit = mit != 0;
    init.service = 1;
    w.Seed(fam + "init-genuine", fuzz::EncodeGssCase(init));
    init.mutations = {{40, 0x04}};
    w.Seed(fam + "init-altered", fuzz::EncodeGssCase(init));
    init.mutations = {};
    init.cut = 17;
    w.Seed(fam + "init-cut", fuzz::EncodeGssCase(init));
    GssCase raw;
    raw.op = GssOp::kInitRaw;
    raw.mit = mit != 0;
    raw.service = 3;
    raw.payload = secmode::common::PatternBytes(300, 5);
    w.Seed(fam + "init-garbage", fuzz::EncodeGssCase(raw));
    raw.payload = {0x60, 0x82, 0x01, 0x00, 0x06, 0x09, 0x2a, 0x86, 0x48,
                   0x86, 0xf7, 0x12, 0x01, 0x02, 0x02, 0x01, 0x00};  // GSS krb5 token framing,
                                                                     // AP-REQ type, no body
    w.Seed(fam + "init-framing-only", fuzz::EncodeGssCase(raw));
    raw.payload = {};
    w.Seed(fam + "init-empty", fuzz::EncodeGssCase(raw));
    GssCase cont;
    cont.op = GssOp::kContinueInit;
    cont.mit = mit != 0;
    cont.service = 2;  // even: the established handle
    cont.payload = secmode::common::PatternBytes(64, 6);
    w.Seed(fam + "continue-established", fuzz::EncodeGssCase(cont));
    cont.service = 1;  // odd: the handle from the payload
    w.Seed(fam + "continue-unknown", fuzz::EncodeGssCase(cont));
    GssCase destroy;
    destroy.op = GssOp::kDestroy;
    destroy.mit = mit != 0;
    destroy.service = 1;
    destroy.base_seq = 3;
    w.Seed(fam + "destroy", fuzz::EncodeGssCase(destroy));
    // Raw records to the server: AUTH_SYS, an unknown RPCSEC_GSS handle.
    {
      GssCase r;
      r.op = GssOp::kRawRecord;
      r.mit = mit != 0;
      r.payload = SysCall(1, rpc::kNfsProcCompound, Compound(rpc::NfsOp::kGetattr, 0));
      w.Seed(fam + "raw-sys-getattr", fuzz::EncodeGssCase(r));
    }
    Bytes record;
    rpc::GssCred cred;
    cred.proc = rpc::kGssData;
    cred.seq = 1;
    cred.service = rpc::kGssSvcIntegrity;
    const uint8_t handle[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    cred.handle = ByteView(handle, 8);
    Bytes body;
    rpc::EncodeGssCred(cred, &body);
    record.clear();
    rpc::EncodeCallPrefix(2, rpc::kNfsProgram, rpc::kNfsVersion, 1, rpc::kRpcsecGss, body, &record);
    rpc::XdrEncoder e(&record);
    e.PutU32(rpc::kRpcsecGss);
    e.PutOpaque(secmode::common::PatternBytes(28, 8));
    GssCase r;
    r.op = GssOp::kRawRecord;
    r.mit = mit != 0;
    r.payload = record;
    w.Seed(fam + "raw-gss-unknown-handle", fuzz::EncodeGssCase(r));
  }
}

// ----------------------------------------------------------- rpc_call_fuzzer

void CallSeeds(Writer& w) {
  w.Target("rpc_call_fuzzer");
  rpc::MemoryNfsServer nfs;
  auto core = rpc::RpcServerCore::Create({}, {nfs.Program()});
  struct Op {
    const char* name;
    uint32_t proc;
    Bytes args;
  };
  const std::vector<Op> ops = {
      {"null", rpc::kNfsProcNull, {}},
      {"getattr", rpc::kNfsProcCompound, Compound(rpc::NfsOp::kGetattr, 0)},
      {"read", rpc::kNfsProcCompound, Compound(rpc::NfsOp::kRead, 4096)},
      {"write", rpc::kNfsProcCompound, Compound(rpc::NfsOp::kWrite, 4096)}};
  Bytes record, reply;
  for (const Op& op : ops) {
    record = SysCall(7, op.proc, op.args);
    w.Seed(std::string("call-sys-") + op.name, Prefixed(0, record));
    if (op.proc == rpc::kNfsProcCompound) {
      w.Seed(std::string("compound-") + op.name, Prefixed(1, op.args));
    }
    if (core.ok() && (*core)->HandleCall(record, &reply) == rpc::Disposition::kReply) {
      w.Seed(std::string("reply-") + op.name, Prefixed(2, reply));
    }
  }
  record.clear();
  rpc::EncodeCallPrefix(8, rpc::kNfsProgram, rpc::kNfsVersion, 0, rpc::kAuthNone, {}, &record);
  rpc::XdrEncoder(&record).PutU32(rpc::kAuthNone);
  rpc::XdrEncoder(&record).PutU32(0);
  w.Seed("call-none-null", Prefixed(0, record));
  rpc::GssCred cred;
  cred.proc = rpc::kGssInit;
  cred.service = rpc::kGssSvcPrivacy;
  Bytes body;
  rpc::EncodeGssCred(cred, &body);
  record.clear();
  rpc::EncodeCallPrefix(9, rpc::kNfsProgram, rpc::kNfsVersion, 0, rpc::kRpcsecGss, body, &record);
  rpc::XdrEncoder e(&record);
  e.PutU32(rpc::kAuthNone);
  e.PutU32(0);
  e.PutOpaque(secmode::common::PatternBytes(40, 3));
  w.Seed("call-gss-init", Prefixed(0, record));
  // What a server answers the NFSv4.1 set-up (case 3): the whole good
  // script, and it cut after each reply.
  const std::vector<Bytes> script = secmode::testing::nfs41::GoodScript(16);
  for (size_t upto = 1; upto <= script.size(); ++upto) {
    Bytes replies{3};
    for (size_t i = 0; i < upto; ++i) {
      replies.push_back(static_cast<uint8_t>(script[i].size() >> 8));
      replies.push_back(static_cast<uint8_t>(script[i].size()));
      replies.insert(replies.end(), script[i].begin(), script[i].end());
    }
    w.Seed("nfs41-setup-" + std::to_string(upto), replies);
  }
}

// --------------------------------------------------------- rpc_record_fuzzer

void RecordSeeds(Writer& w) {
  w.Target("rpc_record_fuzzer");
  const Bytes a = SysCall(1, rpc::kNfsProcCompound, Compound(rpc::NfsOp::kGetattr, 0));
  const Bytes b = SysCall(2, rpc::kNfsProcCompound, Compound(rpc::NfsOp::kWrite, 600));
  for (uint8_t chunk : {uint8_t{0}, uint8_t{6}, uint8_t{255}}) {
    // Two one-fragment records.
    Bytes stream{chunk};
    rpc::AppendRecordMark(static_cast<uint32_t>(a.size()), &stream);
    stream.insert(stream.end(), a.begin(), a.end());
    rpc::AppendRecordMark(static_cast<uint32_t>(b.size()), &stream);
    stream.insert(stream.end(), b.begin(), b.end());
    w.Seed("two-records-chunk" + std::to_string(chunk + 1), stream);
    // One record in three fragments.
    fuzz::FuzzWriter f;
    f.U8(chunk);
    const size_t cut1 = b.size() / 3, cut2 = 2 * b.size() / 3;
    f.U32(static_cast<uint32_t>(cut1)).Raw(ByteView(b).subspan(0, cut1));
    f.U32(static_cast<uint32_t>(cut2 - cut1)).Raw(ByteView(b).subspan(cut1, cut2 - cut1));
    f.U32(static_cast<uint32_t>(b.size() - cut2) | rpc::kLastFragment)
        .Raw(ByteView(b).subspan(cut2));
    w.Seed("fragments-chunk" + std::to_string(chunk + 1), f.bytes());
  }
  // An empty fragment, then a mark over the limit.
  fuzz::FuzzWriter f;
  f.U8(3).U32(0).U32(static_cast<uint32_t>(a.size()) | rpc::kLastFragment).Raw(a);
  f.U32(5000 | rpc::kLastFragment);
  w.Seed("empty-fragment-then-oversize", f.bytes());
  // A record, then empty records (0x80000000 marks): a broken stream.
  fuzz::FuzzWriter e;
  e.U8(6).U32(static_cast<uint32_t>(a.size()) | rpc::kLastFragment).Raw(a);
  for (int i = 0; i < 4; ++i) e.U32(rpc::kLastFragment);
  w.Seed("record-then-empty-records", e.bytes());
}

// ---------------------------------------------------------- rpc_probe_fuzzer

// Items of the target's input (rpc_probe_fuzzer.cc): genuine reply `i`
// (unaltered: offset 0xffff), a record for call `i` or for xid `xid` with a
// body of `body` zero bytes, a bare record mark.
void Genuine(fuzz::FuzzWriter& f, uint8_t i, uint16_t off = 0xffff, uint8_t x = 0) {
  f.U8(0).U8(i).U16(off).U8(x);
}
void OwnRecord(fuzz::FuzzWriter& f, uint32_t xid, uint16_t body) {
  f.U8(3).U8(200).U32(xid).U16(body).Raw(Bytes(body, 0));
}

void ProbeSeeds(Writer& w) {
  w.Target("rpc_probe_fuzzer");
  for (uint8_t chunk : {uint8_t{0}, uint8_t{7}, uint8_t{255}}) {
    fuzz::FuzzWriter f;
    f.U8(chunk).U8(2);  // three calls
    for (uint8_t i = 0; i < 3; ++i) Genuine(f, i);
    w.Seed("in-order-chunk" + std::to_string(chunk + 1), f.bytes());
  }
  {
    fuzz::FuzzWriter f;  // late answers first, then the one waited for
    f.U8(63).U8(2);
    Genuine(f, 2);
    Genuine(f, 1);
    Genuine(f, 0);
    w.Seed("late-then-waited", f.bytes());
  }
  {
    fuzz::FuzzWriter f;  // a stray, a duplicate, a reply to a call never sent
    f.U8(31).U8(1);
    OwnRecord(f, 0x12345678, 24);
    Genuine(f, 0);
    Genuine(f, 0);
    Genuine(f, 5);
    Genuine(f, 1);
    w.Seed("strays-and-duplicates", f.bytes());
  }
  {
    fuzz::FuzzWriter f;  // the verifier's MIC altered, then the body
    f.U8(255).U8(1);
    Genuine(f, 0, 40, 0x01);
    Genuine(f, 1, 80, 0x80);
    w.Seed("altered", f.bytes());
  }
  {
    fuzz::FuzzWriter f;  // a flood of replies to no call, then the answer
    f.U8(255).U8(0);
    for (uint32_t x = 0; x < 64; ++x) OwnRecord(f, 0x5a000000 + x, 200);
    Genuine(f, 0);
    w.Seed("flood-then-answer", f.bytes());
  }
  {
    fuzz::FuzzWriter f;  // a mark beyond the probe's record bound
    f.U8(15).U8(0);
    f.U8(2).U32(static_cast<uint32_t>(rpc::kProbeMaxRecord + 1) | rpc::kLastFragment);
    w.Seed("oversize-mark", f.bytes());
  }
  {
    fuzz::FuzzWriter f;  // a reply in two fragments, as raw stream bytes
    f.U8(4).U8(0);
    const Bytes body(40, 0);
    fuzz::FuzzWriter raw;
    raw.U32(8).U32(0x70000000).U32(1);
    raw.U32(static_cast<uint32_t>(body.size()) | rpc::kLastFragment).Raw(body);
    f.U8(1).U16(static_cast<uint16_t>(raw.bytes().size())).Raw(raw.bytes());
    w.Seed("fragments", f.bytes());
  }
}

// --------------------------------------------------------- native_token_fuzz

void NativeSeeds(Writer& w) {
  w.Target("native_token_fuzz");
  for (int e = 0; e < 4; ++e) {
    const int32_t enctype = fuzz::kNativeEnctypes[e];
    auto sender = secmode::gss::NewNativeProtectorFromKeys(fuzz::NativeSeedSenderKeys(enctype));
    if (!sender.ok()) continue;
    const std::string et = std::to_string(enctype);
    for (size_t size : {size_t{0}, size_t{1}, size_t{100}, size_t{4096}}) {
      const Bytes msg = secmode::common::PatternBytes(size, 17);
      Bytes token;
      // op 0: the token is opened as is (byte 0 = enctype index + 4 * op).
      if ((*sender)->Wrap(msg, true, &token).ok())
        w.Seed("wrap-sealed-" + et + "-" + std::to_string(size), Prefixed(uint8_t(e), token));
      if ((*sender)->Wrap(msg, false, &token).ok())
        w.Seed("wrap-integ-" + et + "-" + std::to_string(size), Prefixed(uint8_t(e), token));
    }
    // op 1: message || MIC, split in halves: a message as long as the MIC.
    Bytes mic;
    const Bytes probe = secmode::common::PatternBytes(8, 1);
    if ((*sender)->GetMic(probe, &mic).ok()) {
      const Bytes msg = secmode::common::PatternBytes(mic.size(), 18);
      if ((*sender)->GetMic(msg, &mic).ok()) {
        Bytes both = msg;
        both.insert(both.end(), mic.begin(), mic.end());
        w.Seed("mic-" + et, Prefixed(uint8_t(e + 4), both));
      }
    }
    // op 2: bytes xored over a genuine token (zeros leave it genuine).
    w.Seed("xor-none-" + et, Prefixed(uint8_t(e + 8), Bytes(32, 0)));
  }
}

// ---------------------------------------------------------- smb_parsers_fuzz

void SmbSeeds(Writer& w) {
  w.Target("smb_parsers_fuzz");
  constexpr uint64_t kSession = 0x0000100000000025ull;  // the target's session
  const Bytes signing_key = secmode::common::PatternBytes(16, 2);
  smb::HeaderFields h;
  h.session_id = kSession;
  h.message_id = 7;
  Bytes msg;
  smb::BuildWriteRequest(h, secmode::common::PatternBytes(40, 4), &msg);
  w.Seed("write-request", msg);
  smb::HeaderFields r = h;
  r.command = smb::Command::kRead;
  r.flags = smb::kFlagServerToRedir;
  Bytes read;
  smb::BuildReadResponse(r, secmode::common::PatternBytes(40, 5), &read);
  w.Seed("read-response", read);
  for (smb::SigningAlgorithm a :
       {smb::SigningAlgorithm::kHmacSha256, smb::SigningAlgorithm::kAesCmac,
        smb::SigningAlgorithm::kAesGmac}) {
    auto signer = smb::Signer::Create(a, signing_key);
    if (!signer.ok()) continue;
    Bytes signed_msg = msg;
    if ((*signer)->Sign(signed_msg).ok())
      w.Seed(std::string("signed-") + smb::SigningAlgorithmName(a), signed_msg);
    // A compound chain of two signed messages (NextCommand 8-byte aligned).
    Bytes first = msg;
    first.resize((first.size() + 7) / 8 * 8, 0);
    smb::PutLe32(first.data() + 20, static_cast<uint32_t>(first.size()));
    Bytes chain = first;
    chain.insert(chain.end(), read.begin(), read.end());
    if ((*signer)->SignChain(chain).ok())
      w.Seed(std::string("chain-") + smb::SigningAlgorithmName(a), chain);
  }
  // Template edits (odd first byte): each template, uncut, with one xor.
  for (uint8_t t = 0; t < 7; ++t) {
    w.Seed("template-" + std::to_string(t), Bytes{uint8_t(2 * t + 1), 0, 60, 0x01});
  }
}

}  // namespace

// ----------------------------------------------------------- smb_client_fuzz

// One response item of the target's input (smb_client_fuzz.cc): request
// index, NTSTATUS, flags (bit 0 SERVER_TO_REDIR, 1 ASYNC, 2 sign, 3 seal,
// 4 NextCommand, 5 another command), credits, body.
void SmbResponse(fuzz::FuzzWriter& f, uint8_t which, uint32_t status, uint8_t flags,
                 const Bytes& body) {
  f.U8(0).U8(which).U32(status).U8(flags).U16(1).U16(static_cast<uint16_t>(body.size())).Raw(body);
}

Bytes SmbReadBody(size_t data) {
  Bytes b(16 + data, 0x42);
  std::fill(b.begin(), b.begin() + 16, 0);
  smb::PutLe16(&b[0], 17);
  b[2] = static_cast<uint8_t>(smb::kHeaderSize + 16);  // DataOffset
  smb::PutLe32(&b[4], static_cast<uint32_t>(data));
  return b;
}

Bytes SmbWriteBody(uint32_t count) {
  Bytes b(16, 0);
  smb::PutLe16(&b[0], 17);
  smb::PutLe32(&b[4], count);
  return b;
}

Bytes SmbQueryInfoBody() {
  Bytes b(8 + 24, 0);
  smb::PutLe16(&b[0], 9);
  smb::PutLe16(&b[2], static_cast<uint16_t>(smb::kHeaderSize + 8));
  smb::PutLe32(&b[4], 24);
  b[8 + 8] = 16;  // EndOfFile
  b[8 + 16] = 1;  // NumberOfLinks
  return b;
}

void SmbClientSeeds(Writer& w) {
  w.Target("smb_client_fuzz");
  const char* const names[] = {"plain",           "sign-hmac-sha256", "sign-aes-cmac",
                               "sign-aes-gmac",   "enc-aes-128-ccm",  "enc-aes-128-gcm",
                               "enc-aes-256-ccm", "enc-aes-256-gcm"};
  for (uint8_t mode = 0; mode < 8; ++mode) {
    // The mode's own protection: none, signed, sealed.
    const uint8_t prot = mode == 0 ? 1 : mode < 4 ? (1 | 4) : (1 | 8);
    fuzz::FuzzWriter f;
    f.U8(mode).U8(2).U8(0).U8(1).U8(2);  // READ, WRITE, QUERY_INFO in flight
    SmbResponse(f, 1, 0, prot, SmbWriteBody(16));
    SmbResponse(f, 0, 0, prot, SmbReadBody(16));
    SmbResponse(f, 2, 0, prot, SmbQueryInfoBody());
    w.Seed(std::string("completions-") + names[mode], f.bytes());
    // An interim response (STATUS_PENDING, async), then the final one.
    fuzz::FuzzWriter g;
    g.U8(mode).U8(0).U8(0);
    SmbResponse(g, 0, 0x00000103, prot | 2, {});
    SmbResponse(g, 0, 0, prot, SmbReadBody(16));
    w.Seed(std::string("interim-") + names[mode], g.bytes());
  }
  const uint8_t sealed = 1 | 8, signed_ = 1 | 4;
  {
    fuzz::FuzzWriter f;  // a compound response to a single request
    f.U8(5).U8(0).U8(0);
    SmbResponse(f, 0, 0, sealed | 16, SmbReadBody(16));
    w.Seed("compound-sealed", f.bytes());
  }
  {
    fuzz::FuzzWriter f;  // a response to no request, then the right one
    f.U8(2).U8(0).U8(1);
    SmbResponse(f, 0xff, 0, signed_, SmbWriteBody(16));
    SmbResponse(f, 0, 0, signed_, SmbWriteBody(16));
    w.Seed("unknown-message-id", f.bytes());
  }
  {
    fuzz::FuzzWriter f;  // in clear on an encrypting session
    f.U8(7).U8(0).U8(0);
    SmbResponse(f, 0, 0, 1, SmbReadBody(16));
    w.Seed("clear-on-sealed", f.bytes());
  }
  {
    fuzz::FuzzWriter f;  // unsigned on a signing session, the wrong command
    f.U8(3).U8(1).U8(1).U8(0);
    SmbResponse(f, 0, 0, 1, SmbWriteBody(16));
    SmbResponse(f, 1, 0, signed_ | 32, SmbReadBody(16));
    w.Seed("unsigned-and-wrong-command", f.bytes());
  }
  {
    fuzz::FuzzWriter f;  // a frame cut short, a frame type not a session message
    f.U8(0).U8(0).U8(0);
    f.U8(2).U32(1000).U8(1).U16(10).Raw(Bytes(10, 0xfe));
    w.Seed("cut-frame", f.bytes());
    fuzz::FuzzWriter g;
    g.U8(0).U8(0).U8(0);
    g.U8(2).U32(0x85000000);
    w.Seed("frame-type", g.bytes());
  }
}

// --------------------------------------------------------- trace_capture_fuzz

Bytes Framed(ByteView message) {
  Bytes wire;
  rpc::FrameRecord(message, &wire);
  return wire;
}

Bytes TraceGssCall(uint32_t xid, uint32_t seq, uint32_t service) {
  rpc::GssCred cred;
  cred.seq = seq;
  cred.service = service;
  const uint8_t handle[4] = {0xc0, 0, 0, 1};
  cred.handle = ByteView(handle, 4);
  Bytes body, record;
  rpc::EncodeGssCred(cred, &body);
  rpc::EncodeCallPrefix(xid, rpc::kNfsProgram, rpc::kNfsVersion, rpc::kNfsProcCompound,
                        rpc::kRpcsecGss, body, &record);
  rpc::XdrEncoder e(&record);
  e.PutU32(rpc::kRpcsecGss);
  e.PutOpaque(secmode::common::PatternBytes(28, 5));
  e.PutU32(0);
  return record;
}

Bytes TraceReply(uint32_t xid, uint32_t auth_stat) {
  Bytes m;
  if (auth_stat == rpc::kAuthOk) {
    rpc::EncodeAcceptedReply(xid, rpc::kAuthNone, {}, rpc::kSuccess, &m);
  } else {
    rpc::EncodeAuthErrorReply(xid, auth_stat, &m);
  }
  return m;
}

// A capture's records as the target's frame mode: [0: Ethernet][length/4][frame].
Bytes AsFrames(const Bytes& pcap) {
  Bytes out{1};
  for (size_t at = 24; at + 16 <= pcap.size();) {
    const size_t caplen = pcap[at + 8] | pcap[at + 9] << 8 | pcap[at + 10] << 16;
    const size_t units = std::min<size_t>(caplen / 4, 255);
    out.push_back(0);
    out.push_back(static_cast<uint8_t>(units));
    out.insert(out.end(), pcap.begin() + static_cast<std::ptrdiff_t>(at + 16),
               pcap.begin() + static_cast<std::ptrdiff_t>(at + 16 + units * 4));
    at += 16 + caplen;
  }
  return out;
}

void TraceSeeds(Writer& w) {
  w.Target("trace_capture_fuzz");
  secmode::common::PcapTcpWriter sys(700, 2049);
  sys.Begin();
  for (uint32_t xid = 1; xid <= 3; ++xid) {
    sys.Add(true, Framed(SysCall(xid, rpc::kNfsProcCompound, Compound(rpc::NfsOp::kGetattr, 0))));
    sys.Add(false, Framed(TraceReply(xid, rpc::kAuthOk)));
  }
  Bytes file{0};
  file.insert(file.end(), sys.bytes().begin(), sys.bytes().end());
  w.Seed("capture-sys", file);
  w.Seed("frames-sys", AsFrames(sys.bytes()));
  secmode::common::PcapTcpWriter gss(701, 2049);
  gss.Begin();
  const uint32_t seqs[] = {1, 2, 5, 3, 4, 40, 6, 40};
  uint32_t xid = 10;
  for (uint32_t seq : seqs) {
    gss.Add(true, Framed(TraceGssCall(xid, seq, rpc::kGssSvcIntegrity)));
    gss.Add(false, Framed(TraceReply(xid, seq == 6 ? rpc::kRpcsecGssCtxProblem : rpc::kAuthOk)));
    ++xid;
  }
  // Two calls in one segment, the second's reply split over two.
  Bytes two = Framed(TraceGssCall(30, 41, rpc::kGssSvcPrivacy));
  const Bytes next = Framed(TraceGssCall(31, 42, rpc::kGssSvcNone));
  two.insert(two.end(), next.begin(), next.end());
  gss.Add(true, two);
  const Bytes reply = Framed(TraceReply(31, rpc::kAuthOk));
  gss.Add(false, ByteView(reply).subspan(0, 10));
  gss.Add(false, ByteView(reply).subspan(10));
  file.assign(1, 0);
  file.insert(file.end(), gss.bytes().begin(), gss.bytes().end());
  w.Seed("capture-gss", file);
  w.Seed("frames-gss", AsFrames(gss.bytes()));
  // Every COMPOUND of an NFSv4.1 set-up and close (rpc/nfs41.h against the
  // scripted replies: EXCHANGE_ID, CREATE_SESSION, OPEN, CLOSE, ...) with
  // AUTH_SYS, and the load's WRITE in a krb5i body, for the naming of
  // COMPOUNDs (rpc/nfs4_ops.h).
  std::vector<Bytes> sent;
  const std::vector<Bytes> replies = secmode::testing::nfs41::GoodScript(4);
  const rpc::Nfs41Call scripted = [&](ByteView args) -> secmode::common::Result<Bytes> {
    sent.emplace_back(args.begin(), args.end());
    if (sent.size() > replies.size()) return secmode::common::Status::IoError("script ended");
    return replies[sent.size() - 1];
  };
  rpc::Nfs41Options setup_options;
  setup_options.owner = "secmode-fuzz";  // not the host's, the pid's and the time's
  auto session = rpc::Nfs41Open(setup_options, scripted);
  if (session.ok()) (void)rpc::Nfs41Close(*session, scripted);
  // EXCHANGE_ID's co_verifier (bytes 16-23 of its arguments: tag, minor
  // version, count, operation number before it) is the time: made fixed.
  if (!sent.empty() && sent[0].size() >= 24) std::fill_n(sent[0].begin() + 16, 8, 0);
  secmode::common::PcapTcpWriter setup(702, 2049);
  setup.Begin();
  xid = 100;
  for (const Bytes& args : sent) {
    setup.Add(true, Framed(SysCall(xid, rpc::kNfsProcCompound, args)));
    setup.Add(false, Framed(TraceReply(xid, rpc::kAuthOk)));
    ++xid;
  }
  Bytes integ;
  rpc::XdrEncoder i(&integ);
  i.PutU32(7);  // seq_num
  i.PutRaw(Compound(rpc::NfsOp::kWrite, 64));
  Bytes krb5i = TraceGssCall(xid, 7, rpc::kGssSvcIntegrity);
  krb5i.resize(krb5i.size() - 4);  // TraceGssCall's empty body
  rpc::XdrEncoder e(&krb5i);
  e.PutOpaque(integ);
  e.PutOpaque(secmode::common::PatternBytes(28, 6));  // the checksum
  setup.Add(true, Framed(krb5i));
  file.assign(1, 0);
  file.insert(file.end(), setup.bytes().begin(), setup.bytes().end());
  w.Seed("capture-nfs41-compounds", file);
  // SMB2 on port 445: NEGOTIATE, a session's signed READ and CLOSE
  // compounded, an interim and a final response, a channel's binding
  // SESSION_SETUP, and encrypted messages (one nonce sent twice).
  auto direct_tcp = [](const Bytes& m) {
    Bytes b;
    smb::AppendFramed(m, &b);
    return b;
  };
  auto header = [](smb::Command command, uint64_t id, uint64_t session, uint32_t flags,
                   uint32_t status = 0, uint32_t next = 0) {
    smb::HeaderFields h;
    h.command = command;
    h.message_id = id;
    h.session_id = session;
    h.flags = flags;
    h.status = status;
    h.next_command = next;
    h.credits = 8;
    Bytes m(smb::kHeaderSize + 8);
    smb::WriteHeader(h, m.data());
    return m;
  };
  constexpr uint64_t kSession = 0x4100000001ull;
  const uint32_t response = smb::kFlagServerToRedir, sign = smb::kFlagSigned;
  secmode::common::PcapTcpWriter smb_capture(703, 445);
  smb_capture.Begin();
  smb_capture.Add(true, direct_tcp(header(smb::Command::kNegotiate, 0, 0, 0)));
  smb_capture.Add(false, direct_tcp(header(smb::Command::kNegotiate, 0, 0, response)));
  Bytes compound = header(smb::Command::kRead, 1, kSession, sign, 0, 72);
  const Bytes closing = header(smb::Command::kClose, 2, kSession, sign | smb::kFlagRelated);
  compound.insert(compound.end(), closing.begin(), closing.end());
  smb_capture.Add(true, direct_tcp(compound));
  smb_capture.Add(false, direct_tcp(header(smb::Command::kRead, 1, kSession,
                                           response | sign | smb::kFlagAsync, 0x103)));
  smb_capture.Add(false, direct_tcp(header(smb::Command::kRead, 1, kSession, response | sign)));
  Bytes bind = header(smb::Command::kSessionSetup, 3, kSession, sign);
  bind[smb::kHeaderSize + 2] = 0x01;  // SESSION_SETUP Flags: binding
  smb_capture.Add(true, direct_tcp(bind));
  for (int nonce : {1, 2, 1}) {
    smb::TransformHeader t;
    t.session_id = kSession;
    t.flags = smb::kTransformFlagEncrypted;
    t.original_message_size = 16;
    t.nonce[0] = static_cast<uint8_t>(nonce);
    Bytes m(smb::kTransformHeaderSize + 16, 0x5A);
    smb::WriteTransformHeader(t, m.data());
    smb_capture.Add(true, direct_tcp(m));
  }
  file.assign(1, 0);
  file.insert(file.end(), smb_capture.bytes().begin(), smb_capture.bytes().end());
  w.Seed("capture-smb", file);
  w.Seed("frames-smb", AsFrames(smb_capture.bytes()));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fuzz_corpus_gen DIR   (writes DIR/<target>/<seed>)\n");
    return 2;
  }
  Writer w(argv[1]);
  GssSeeds(w);
  CallSeeds(w);
  RecordSeeds(w);
  ProbeSeeds(w);
  NativeSeeds(w);
  SmbSeeds(w);
  SmbClientSeeds(w);
  TraceSeeds(w);
  if (!w.ok()) return 1;
  printf("fuzz_corpus_gen: %d seeds written under %s\n", w.written(), argv[1]);
  return 0;
}
