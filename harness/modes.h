// The mode registry: maps the names users type ("sys", "krb5p",
// "krb5p:aes128-cts-hmac-sha256-128:mit", "smb-enc-aes-128-gcm") to factories
// that build the four legs of one association (common/seal.h).
//
// Adding a mode touches one place: the kModes table in modes.cc.
// Thread safety: the registry is immutable; a ModeEnvironment is used by one
// thread at a time (it lazily starts the shared Realm).
#ifndef SECMODE_HARNESS_MODES_H_
#define SECMODE_HARNESS_MODES_H_

#include <memory>
#include <string>
#include <vector>

#include "common/seal.h"
#include "common/status.h"
#include "gss/protector.h"
#include "gss/realm.h"
#include "rpc/client_auth.h"

namespace secmode::harness {

// Shared, expensive resources that mode factories need: the throwaway realm.
class ModeEnvironment {
 public:
  ModeEnvironment() = default;
  // Starts the realm on first use.
  common::Result<gss::Realm*> GetRealm();
  bool has_realm() const { return realm_ != nullptr; }

 private:
  std::unique_ptr<gss::Realm> realm_;
};

// A parsed mode name: family[:enctype[:engine]] with defaults filled in.
struct ModeName {
  std::string family;            // "sys", "krb5p", ...
  std::string enctype;           // "" when the family has none
  std::string engine;            // "none" for unprotected modes
  std::string ToString() const;  // canonical, "krb5p:aes256-cts-hmac-sha1-96:mit"
};

struct ModeInfo {
  const char* family;
  const char* description;
  bool kerberos;                     // takes an enctype and an engine
  std::vector<std::string> engines;  // first is the default
};

const std::vector<ModeInfo>& RegisteredModes();

// Errors name what was wrong: unknown family (listing the known ones),
// unknown enctype or engine, too many parts.
common::Result<ModeName> ParseModeName(const std::string& text);

// The typed form of an NFS mode (sys, krb5, krb5i, krb5p): what the RPC
// client (rpc/load.h, rpc/window_probe.h) and the legs (rpc/legs.h) take.
// Parsed once where a user's or a results file's string enters; below that
// no layer parses a mode name again.
struct RpcMode {
  rpc::Security security = rpc::Security::kSys;
  gss::Engine engine = gss::Engine::kMit;  // the family's default when not named
  int32_t enctype = 0;                     // 0: not named (the KDC's choice)
  bool kerberos() const { return security != rpc::Security::kSys; }
};

// family[:enctype[:engine]] of an NFS mode, checked as ParseModeName checks
// it; an enctype left out stays 0 (the KDC's choice: `secmode load` and
// `secmode probe` ask for none unless told). InvalidArgument for SMB modes.
common::Result<RpcMode> ParseRpcMode(const std::string& text);
// The typed form of a parsed NFS mode (its enctype filled in);
// InvalidArgument for SMB modes.
common::Result<RpcMode> RpcModeOf(const ModeName& name);

common::Result<common::Association> MakeAssociation(const ModeName& name, ModeEnvironment& env);
// `count` associations of one context of a krb5, krb5i or krb5p mode, one
// per thread (rpc::MakeSharedRpcAssociations); InvalidArgument for the other
// modes, which have no context to share. `window`: the server's sequence
// window (rpc::MakeSharedRpcAssociations; 0 = its default).
common::Result<std::vector<common::Association>> MakeSharedAssociations(const ModeName& name,
                                                                        ModeEnvironment& env,
                                                                        size_t count,
                                                                        uint32_t window = 0);

// Modes `secmode run` measures by default: every registered family, each
// with its default enctype and every engine.
std::vector<ModeName> DefaultModes();

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_MODES_H_
