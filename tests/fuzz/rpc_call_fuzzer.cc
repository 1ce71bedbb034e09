// libFuzzer target: the server's call path (RpcServerCore::HandleCall with
// AUTH_NONE / AUTH_SYS / RPCSEC_GSS credential decoding, program dispatch
// and the NFSv4.1 COMPOUND decoder) and the client's reply decoders.
//   byte 0 % 4 == 0: the rest is a whole call record
//   byte 0 % 4 == 1: the rest is COMPOUND arguments behind a valid AUTH_SYS
//                    header (reaches the NFS decoder every time)
//   byte 0 % 4 == 2: the rest is a reply record for the client decoders
//   byte 0 % 4 == 3: the rest is what a server answers the NFSv4.1 set-up
//                    (rpc/nfs41.h): COMPOUND results, each a 16-bit length
//                    and its bytes, one per call, in order
// Every reply the server core gives stays within MaxReplyBytes of its call
// (tests/fuzz/fuzz_io.h).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "rpc/client_auth.h"
#include "rpc/nfs.h"
#include "rpc/nfs41.h"
#include "rpc/rpc_msg.h"
#include "rpc/server_core.h"
#include "tests/fuzz/fuzz_io.h"

namespace {

struct World {
  World() {
    auto c = secmode::rpc::RpcServerCore::Create({}, {nfs.Program()});
    if (!c.ok()) __builtin_trap();
    core = std::move(c).value();
    sys = secmode::rpc::NewSysAuth(secmode::rpc::kNfsProgram, secmode::rpc::kNfsVersion);
  }
  secmode::rpc::MemoryNfsServer nfs;
  std::unique_ptr<secmode::rpc::RpcServerCore> core;
  std::unique_ptr<secmode::rpc::ClientAuth> sys;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace secmode;
  static World* world = new World();
  if (size < 1) return 0;
  common::ByteView in(data + 1, size - 1);
  common::Bytes record, reply;
  switch (data[0] % 4) {
    case 0:
      (void)world->core->HandleCall(in, &reply);
      if (reply.size() > fuzz::MaxReplyBytes(in.size())) __builtin_trap();
      break;
    case 1: {
      uint32_t seq;
      if (!world->sys->EncodeCall(1, rpc::kNfsProcCompound, in, &record, &seq).ok())
        __builtin_trap();
      if (world->core->HandleCall(record, &reply) != rpc::Disposition::kReply) __builtin_trap();
      if (reply.size() > fuzz::MaxReplyBytes(record.size())) __builtin_trap();
      rpc::ReplyHeader h;
      if (!rpc::DecodeReplyHeader(reply, &h).ok()) __builtin_trap();  // we must answer well-formed
      break;
    }
    case 2: {
      rpc::ReplyHeader h;
      common::ByteView results;
      if (world->sys->DecodeReply(in, 0, nullptr, &h, &results).ok()) {
        rpc::NfsRequest r;
        (void)rpc::CheckCompoundResults(r, results);
        r.op = rpc::NfsOp::kWrite;
        r.count = 4096;
        (void)rpc::CheckCompoundResults(r, results);
      }
      rpc::GssCred cred;
      (void)rpc::DecodeGssCred(in, &cred);
      rpc::AuthSysParms p;
      (void)rpc::DecodeAuthSys(in, &p);
      break;
    }
    case 3: {
      size_t at = 0;
      rpc::Nfs41Call call = [&](common::ByteView) -> common::Result<common::Bytes> {
        if (at + 2 > in.size()) return common::Status::IoError("no more replies");
        size_t n = (size_t{in[at]} << 8) | in[at + 1];
        at += 2;
        n = std::min(n, in.size() - at);
        common::Bytes reply(in.begin() + at, in.begin() + at + n);
        at += n;
        return reply;
      };
      auto session = rpc::Nfs41Open({}, call);
      if (session.ok()) {
        if (session->slots < 1 || session->target.session_id.size() != 16) __builtin_trap();
        (void)rpc::Nfs41Close(*session, call);
      }
      break;
    }
  }
  return 0;
}
