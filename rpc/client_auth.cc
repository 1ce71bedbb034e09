#include "rpc/client_auth.h"

#include "common/machine.h"
#include "rpc/call_trace.h"
#include "rpc/xdr.h"

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Status;

namespace {

class SysAuth : public ClientAuth {
 public:
  SysAuth(uint32_t prog, uint32_t vers) : prog_(prog), vers_(vers) {
    // RFC 5531 appendix A: what a Linux client sends for root on a host.
    AuthSysParms p;
    p.stamp = 0x5ec0de;
    p.machine = common::Hostname();
    p.uid = 0;
    p.gid = 0;
    p.gids = {0};
    EncodeAuthSys(p, &cred_);
  }
  Status EncodeCall(uint32_t xid, uint32_t proc, ByteView args, Bytes* record,
                    uint32_t* seq) override {
    record->clear();
    EncodeCallPrefix(xid, prog_, vers_, proc, kAuthSys, cred_, record);
    XdrEncoder e(record);
    e.PutU32(kAuthNone);
    e.PutU32(0);
    e.PutRaw(args);
    *seq = 0;
    return Status::Ok();
  }
  Status DecodeReply(ByteView record, uint32_t, Bytes*, ReplyHeader* h,
                     ByteView* results) override {
    SECMODE_RETURN_IF_ERROR(DecodeReplyHeader(record, h));
    if (h->reply_stat != kMsgAccepted || h->accept_stat != kSuccess) {
      return Status::Unavailable("call failed: " + DescribeReply(*h));
    }
    *results = record.subspan(h->body_offset);
    return Status::Ok();
  }
  uint32_t window() const override { return 0; }

 private:
  uint32_t prog_, vers_;
  Bytes cred_;
};

class GssAuth : public ClientAuth {
 public:
  GssAuth(uint32_t prog, uint32_t vers, std::shared_ptr<GssClientContext> ctx, uint32_t service)
      : ctx_(std::move(ctx)), service_(service), context_id_(TraceContextId(ctx_->handle())) {
    (void)prog;
    (void)vers;
  }
  Status EncodeCall(uint32_t xid, uint32_t proc, ByteView args, Bytes* record,
                    uint32_t* seq) override {
    *seq = ctx_->NextSeq();
    return ctx_->EncodeCall(xid, proc, service_, *seq, args, record);
  }
  Status DecodeReply(ByteView record, uint32_t seq, Bytes* scratch, ReplyHeader* h,
                     ByteView* results) override {
    return ctx_->DecodeReply(record, service_, seq, scratch, h, results);
  }
  uint32_t window() const override { return ctx_->window(); }
  bool has_context() const override { return true; }
  Status Destroy(uint32_t xid, const RoundTrip& round_trip) override {
    return ctx_->Destroy(xid, service_, ctx_->NextSeq(), round_trip);
  }
  uint64_t context_id() const override { return context_id_; }
  const char* crypto_threads() const override {
    return ctx_->parallel_crypto() ? "parallel" : "serialised";
  }

 private:
  std::shared_ptr<GssClientContext> ctx_;
  uint32_t service_;
  uint64_t context_id_;
};

}  // namespace

std::unique_ptr<ClientAuth> NewSysAuth(uint32_t prog, uint32_t vers) {
  return std::make_unique<SysAuth>(prog, vers);
}

std::unique_ptr<ClientAuth> NewGssAuth(uint32_t prog, uint32_t vers,
                                       std::shared_ptr<GssClientContext> context,
                                       uint32_t service) {
  return std::make_unique<GssAuth>(prog, vers, std::move(context), service);
}

const char* SecurityName(Security s) {
  switch (s) {
    case Security::kSys: return "sys";
    case Security::kKrb5: return "krb5";
    case Security::kKrb5i: return "krb5i";
    case Security::kKrb5p: return "krb5p";
  }
  return "sys";
}

}  // namespace secmode::rpc
