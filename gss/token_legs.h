// Token-level legs: the Sealer/Opener ends of a krb5 mode built on two
// Protectors (initiator = client, acceptor = server). The wire is the GSS
// token; RPC framing (rpc/) replaces these with whole RPC messages.
#ifndef SECMODE_GSS_TOKEN_LEGS_H_
#define SECMODE_GSS_TOKEN_LEGS_H_

#include <memory>

#include "common/seal.h"
#include "gss/protector.h"

namespace secmode::gss {

enum class Protection {
  kWrapConf,  // krb5p: wrap token with confidentiality; wire = token
};

// Fills the four legs of `association`; the client legs share `initiator`,
// the server legs share `acceptor`.
void MakeTokenLegs(Protection protection, std::shared_ptr<Protector> initiator,
                   std::shared_ptr<Protector> acceptor, common::Association* association);

}  // namespace secmode::gss

#endif  // SECMODE_GSS_TOKEN_LEGS_H_
