#include "gss/token_legs.h"

namespace secmode::gss {

using common::Bytes;
using common::ByteView;
using common::Status;

namespace {

class WrapSealer : public common::Sealer {
 public:
  WrapSealer(std::shared_ptr<Protector> p, bool conf) : p_(std::move(p)), conf_(conf) {}
  Status Seal(ByteView payload, Bytes* wire) override { return p_->Wrap(payload, conf_, wire); }

 private:
  std::shared_ptr<Protector> p_;
  bool conf_;
};

class WrapOpener : public common::Opener {
 public:
  WrapOpener(std::shared_ptr<Protector> p, bool conf) : p_(std::move(p)), conf_(conf) {}
  Status Open(ByteView wire, Bytes* payload) override {
    bool sealed = false;
    SECMODE_RETURN_IF_ERROR(p_->Unwrap(wire, payload, &sealed));
    if (conf_ && !sealed) {
      return Status::AuthFailed("wrap token was not sealed but the mode requires privacy");
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<Protector> p_;
  bool conf_;
};

}  // namespace

void MakeTokenLegs(Protection protection, std::shared_ptr<Protector> initiator,
                   std::shared_ptr<Protector> acceptor, common::Association* a) {
  switch (protection) {
    case Protection::kWrapConf:
      a->client_seal = std::make_unique<WrapSealer>(initiator, true);
      a->server_open = std::make_unique<WrapOpener>(acceptor, true);
      a->server_seal = std::make_unique<WrapSealer>(acceptor, true);
      a->client_open = std::make_unique<WrapOpener>(initiator, true);
      break;
  }
}

}  // namespace secmode::gss
