// The `mit` engine: message protection through MIT's GSS-API.
//
// Legs wrap one side of a ContextPair (shared ownership keeps the contexts
// alive as long as any leg). Token level: the wire is the GSS token (plus,
// for MIC protections, the data it covers; see Protection).
//
// Sequence: the contexts have replay and sequence detection on. An Open of a
// duplicate or too-old token fails with Code::kReplay; tokens out of order
// or after a gap are accepted (RPCSEC_GSS does its own windowing, RFC 2203
// 5.3.3.1) and counted.
#ifndef SECMODE_GSS_MIT_ENGINE_H_
#define SECMODE_GSS_MIT_ENGINE_H_

#include <memory>

#include "common/seal.h"
#include "gss/context_pair.h"

namespace secmode::gss {

enum class Side { kInitiator, kAcceptor };

// What the leg does with the payload.
enum class Protection {
  kWrapConf,  // krb5p: gss_wrap with confidentiality; wire = wrap token
};

std::unique_ptr<common::Sealer> NewMitSealer(std::shared_ptr<ContextPair> pair, Side side,
                                             Protection protection);
std::unique_ptr<common::Opener> NewMitOpener(std::shared_ptr<ContextPair> pair, Side side,
                                             Protection protection);

}  // namespace secmode::gss

#endif  // SECMODE_GSS_MIT_ENGINE_H_
