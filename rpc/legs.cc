#include "rpc/legs.h"

#include <optional>

#include "rpc/client_auth.h"
#include "rpc/gss_client.h"
#include "rpc/nfs.h"
#include "rpc/server_core.h"

namespace secmode::rpc {

using common::Association;
using common::Bytes;
using common::ByteView;
using common::Result;
using common::Status;

namespace {

// The server, and the client's and server's halves of one context: what
// the associations of one context share (thread-safe, rpc/gss_client.h and
// rpc/server_core.h).
struct Shared {
  uint32_t service = 0;  // 0 = AUTH_SYS
  MemoryNfsServer nfs;
  std::unique_ptr<RpcServerCore> core;
  std::unique_ptr<ClientAuth> sys;
  std::shared_ptr<GssClientContext> ctx;
  std::shared_ptr<ServerGssContext> server_ctx;
};

// Everything the four legs of one association share: the context's shared
// parts (`c`) and what one thread's legs keep between calls.
struct State {
  explicit State(std::shared_ptr<const Shared> shared) : c(std::move(shared)) {}
  const std::shared_ptr<const Shared> c;
  uint32_t next_xid = 1;
  uint32_t next_reply = 1;
  std::optional<ReplyTarget> pending;  // the last call server-open accepted
  Bytes scratch_server, scratch_client;
};

uint32_t XidOf(ByteView wire) {
  if (wire.size() < 4) return 0;
  return (uint32_t{wire[0]} << 24) | (uint32_t{wire[1]} << 16) | (uint32_t{wire[2]} << 8) | wire[3];
}

class ClientSeal : public common::Sealer {
 public:
  explicit ClientSeal(std::shared_ptr<State> s) : s_(std::move(s)) {}
  Status Seal(ByteView payload, Bytes* wire) override {
    if (s_->c->service == 0) {
      uint32_t seq;
      return s_->c->sys->EncodeCall(s_->next_xid++, kNfsProcCompound, payload, wire, &seq);
    }
    // xid = seq_num, so the reply legs can find the number a reply answers.
    uint32_t seq = s_->c->ctx->NextSeq();
    return s_->c->ctx->EncodeCall(seq, kNfsProcCompound, s_->c->service, seq, payload, wire);
  }

 private:
  std::shared_ptr<State> s_;
};

class ServerOpen : public common::Opener {
 public:
  explicit ServerOpen(std::shared_ptr<State> s) : s_(std::move(s)) {}
  Status Open(ByteView wire, Bytes* payload) override {
    OpenedCall call;
    bool ready = false;
    Disposition d = s_->c->core->OpenCall(wire, &call, &reply_, &s_->scratch_server, &ready);
    if (d != Disposition::kReply)
      return Status::Replay("call dropped by the server (sequence window or undecodable)");
    if (!ready) {
      ReplyHeader h;
      if (DecodeReplyHeader(reply_, &h).ok())
        return Status::AuthFailed("server refused the call: " + DescribeReply(h));
      return Status::Corrupt("server refused the call");
    }
    payload->assign(call.args.begin(), call.args.end());
    s_->pending = call.target;
    return Status::Ok();
  }

 private:
  std::shared_ptr<State> s_;
  Bytes reply_;
};

class ServerSeal : public common::Sealer {
 public:
  explicit ServerSeal(std::shared_ptr<State> s) : s_(std::move(s)) {}
  Status Seal(ByteView payload, Bytes* wire) override {
    ReplyTarget t;
    if (s_->pending) {
      t = *s_->pending;
      s_->pending.reset();
    } else {
      // Measured on its own: answer a numbered call the way the server
      // would (xid = seq_num, see ClientSeal).
      t.xid = t.seq = s_->next_reply++;
      t.flavor = s_->c->service == 0 ? kAuthNone : kRpcsecGss;
      t.context = s_->c->server_ctx;
      t.service = s_->c->service;
    }
    return s_->c->core->SealReply(t, kSuccess, payload, wire);
  }

 private:
  std::shared_ptr<State> s_;
};

class ClientOpen : public common::Opener {
 public:
  explicit ClientOpen(std::shared_ptr<State> s) : s_(std::move(s)) {}
  Status Open(ByteView wire, Bytes* payload) override {
    ReplyHeader h;
    ByteView results;
    if (s_->c->service == 0) {
      SECMODE_RETURN_IF_ERROR(s_->c->sys->DecodeReply(wire, 0, nullptr, &h, &results));
    } else {
      uint32_t seq = XidOf(wire);
      SECMODE_RETURN_IF_ERROR(
          s_->c->ctx->DecodeReply(wire, s_->c->service, seq, &s_->scratch_client, &h, &results));
    }
    payload->assign(results.begin(), results.end());
    return Status::Ok();
  }

 private:
  std::shared_ptr<State> s_;
};

Result<std::shared_ptr<Shared>> MakeShared(Security security, gss::Engine engine, int32_t enctype,
                                           const gss::Realm* realm, uint32_t window) {
  auto s = std::make_shared<Shared>();
  s->service = GssServiceOf(security);
  ServerOptions so;
  so.engine = engine;
  if (window > 0) so.window = window;
  if (s->service != 0) {
    if (realm == nullptr) {
      return Status::InvalidArgument(std::string("mode ") + SecurityName(security) +
                                     " needs a realm");
    }
    so.keytab = realm->service_keytab();
  }
  SECMODE_ASSIGN_OR_RETURN(s->core, RpcServerCore::Create(so, {s->nfs.Program()}));
  if (s->service == 0) {
    s->sys = NewSysAuth(kNfsProgram, kNfsVersion);
  } else {
    GssClientConfig cfg;
    cfg.ccache = realm->ccache();
    cfg.enctype = enctype;
    cfg.engine = engine;
    cfg.prog = kNfsProgram;
    cfg.vers = kNfsVersion;
    cfg.service = s->service;
    RpcServerCore* core = s->core.get();
    SECMODE_ASSIGN_OR_RETURN(
        s->ctx, GssClientContext::Establish(cfg, [core](ByteView call) -> Result<Bytes> {
          Bytes reply;
          if (core->HandleCall(call, &reply) != Disposition::kReply) {
            return Status::Internal("server dropped a context-creation call");
          }
          return reply;
        }));
    s->server_ctx = s->core->FindContext(s->ctx->handle());
    if (!s->server_ctx) return Status::Internal("server has no context for the new handle");
  }
  return s;
}

Association AssociationOf(std::shared_ptr<const Shared> shared) {
  auto s = std::make_shared<State>(std::move(shared));
  Association a;
  a.client_seal = std::make_unique<ClientSeal>(s);
  a.server_open = std::make_unique<ServerOpen>(s);
  a.server_seal = std::make_unique<ServerSeal>(s);
  a.client_open = std::make_unique<ClientOpen>(s);
  return a;
}

}  // namespace

Result<Association> MakeRpcAssociation(Security security, gss::Engine engine, int32_t enctype,
                                       const gss::Realm* realm) {
  SECMODE_ASSIGN_OR_RETURN(std::shared_ptr<Shared> shared,
                           MakeShared(security, engine, enctype, realm, 0));
  return AssociationOf(std::move(shared));
}

Result<std::vector<Association>> MakeSharedRpcAssociations(Security security, gss::Engine engine,
                                                           int32_t enctype, const gss::Realm* realm,
                                                           size_t count, uint32_t window) {
  if (count == 0) return Status::InvalidArgument("shared associations: a count of 0");
  SECMODE_ASSIGN_OR_RETURN(std::shared_ptr<Shared> shared,
                           MakeShared(security, engine, enctype, realm, window));
  std::vector<Association> out;
  for (size_t i = 0; i < count; ++i) out.push_back(AssociationOf(shared));
  return out;
}

}  // namespace secmode::rpc
