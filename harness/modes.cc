#include "harness/modes.h"

#include <functional>

#include "gss/enctype.h"
#include "gss/protector.h"
#include "rpc/legs.h"
#include "smb/gss_session.h"

namespace secmode::harness {

using common::Association;
using common::Result;
using common::Status;

namespace {

// The one place an NFS family's name is read: the names are the ones
// rpc::SecurityName gives.
Result<rpc::Security> SecurityOfFamily(const std::string& family) {
  for (rpc::Security s :
       {rpc::Security::kSys, rpc::Security::kKrb5, rpc::Security::kKrb5i, rpc::Security::kKrb5p}) {
    if (family == rpc::SecurityName(s)) return s;
  }
  return Status::InvalidArgument("unknown RPC mode '" + family +
                                 "' (known: sys, krb5, krb5i, krb5p)");
}

// RPC-framed modes (rpc/legs.h): the wire is a whole RPC call or reply.
Result<Association> MakeRpc(const ModeName& name, ModeEnvironment& env) {
  SECMODE_ASSIGN_OR_RETURN(const RpcMode m, RpcModeOf(name));
  if (!m.kerberos()) return rpc::MakeRpcAssociation(m.security, gss::Engine::kMit, 0, nullptr);
  SECMODE_ASSIGN_OR_RETURN(gss::Realm * realm, env.GetRealm());
  return rpc::MakeRpcAssociation(m.security, m.engine, m.enctype, realm);
}

// SMB modes: the session key of a real Kerberos context pair, SMB keys
// derived from it, WRITE requests / READ responses as the wire (smb/legs.h).
Result<Association> MakeSmb(const ModeName& name, ModeEnvironment& env) {
  SECMODE_ASSIGN_OR_RETURN(const smb::SmbMode mode, smb::ParseSmbModeName(name.family));
  SECMODE_ASSIGN_OR_RETURN(gss::Realm * realm, env.GetRealm());
  return smb::MakeKerberosSmbAssociation(mode, *realm);
}

using Factory = std::function<Result<Association>(const ModeName&, ModeEnvironment&)>;

struct Entry {
  ModeInfo info;
  Factory factory;
};

const std::vector<Entry>& Table() {
  // The one place modes are registered.
  static const std::vector<Entry> kModes = {
      {{"sys",
        "NFS over ONC RPC with AUTH_SYS: whole COMPOUND call/reply, no protection",
        false,
        {"none"}},
       MakeRpc},
      {{"krb5",
        "RPCSEC_GSS service none: call verifier = MIC over the header, reply verifier over seq_num",
        true,
        {"mit", "native", "mit-iov"}},
       MakeRpc},
      {{"krb5i",
        "RPCSEC_GSS integrity: rpc_gss_integ_data, MIC over seq_num||args",
        true,
        {"mit", "native", "mit-iov"}},
       MakeRpc},
      {{"krb5p",
        "RPCSEC_GSS privacy: rpc_gss_priv_data, wrap(seq_num||args) with confidentiality",
        true,
        {"mit", "native", "mit-iov"}},
       MakeRpc},
      {{"smb-plain", "SMB2 READ/WRITE without signing or encryption", false, {"none"}}, MakeSmb},
      {{"smb-sign-hmac-sha256", "SMB 2.x signing: HMAC-SHA256/128", false, {"openssl"}}, MakeSmb},
      {{"smb-sign-aes-cmac", "SMB 3.x signing: AES-128-CMAC", false, {"openssl"}}, MakeSmb},
      {{"smb-sign-aes-gmac", "SMB 3.1.1 signing: AES-128-GMAC", false, {"openssl"}}, MakeSmb},
      {{"smb-enc-aes-128-ccm", "SMB3 encryption: AES-128-CCM", false, {"openssl"}}, MakeSmb},
      {{"smb-enc-aes-128-gcm", "SMB 3.1.1 encryption: AES-128-GCM", false, {"openssl"}}, MakeSmb},
      {{"smb-enc-aes-256-ccm", "SMB 3.1.1 encryption: AES-256-CCM", false, {"openssl"}}, MakeSmb},
      {{"smb-enc-aes-256-gcm", "SMB 3.1.1 encryption: AES-256-GCM", false, {"openssl"}}, MakeSmb},
  };
  return kModes;
}

const Entry* FindEntry(const std::string& family) {
  for (const auto& e : Table()) {
    if (family == e.info.family) return &e;
  }
  return nullptr;
}

}  // namespace

Result<gss::Realm*> ModeEnvironment::GetRealm() {
  if (!realm_) {
    SECMODE_ASSIGN_OR_RETURN(realm_, gss::Realm::Start());
  }
  return realm_.get();
}

std::string ModeName::ToString() const {
  if (enctype.empty()) return family;
  return family + ":" + enctype + ":" + engine;
}

const std::vector<ModeInfo>& RegisteredModes() {
  static const std::vector<ModeInfo> infos = [] {
    std::vector<ModeInfo> v;
    for (const auto& e : Table()) v.push_back(e.info);
    return v;
  }();
  return infos;
}

Result<ModeName> ParseModeName(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  const Entry* entry = FindEntry(parts[0]);
  if (entry == nullptr) {
    std::string known;
    for (const auto& e : Table()) known += std::string(known.empty() ? "" : ", ") + e.info.family;
    return Status::InvalidArgument("unknown mode '" + parts[0] + "' (known: " + known + ")");
  }
  ModeName name;
  name.family = parts[0];
  if (!entry->info.kerberos) {
    if (parts.size() > 1) {
      return Status::InvalidArgument("mode '" + name.family +
                                     "' takes no enctype or engine, got '" + text + "'");
    }
    name.engine = entry->info.engines.front();
    return name;
  }
  if (parts.size() > 3) {
    return Status::InvalidArgument("mode '" + text + "' has too many parts; expected " +
                                   name.family + "[:ENCTYPE[:ENGINE]]");
  }
  name.enctype =
      parts.size() > 1 && !parts[1].empty() ? parts[1] : gss::EnctypeName(gss::kDefaultEnctype);
  SECMODE_ASSIGN_OR_RETURN(gss::Enctype e, gss::ParseEnctype(name.enctype));
  name.enctype = gss::EnctypeName(e);
  name.engine = parts.size() > 2 && !parts[2].empty() ? parts[2] : entry->info.engines.front();
  bool engine_ok = false;
  std::string engines;
  for (const auto& eng : entry->info.engines) {
    engine_ok |= eng == name.engine;
    engines += std::string(engines.empty() ? "" : ", ") + eng;
  }
  if (!engine_ok) {
    return Status::InvalidArgument("unknown engine '" + name.engine + "' for mode " + name.family +
                                   " (known: " + engines + ")");
  }
  return name;
}

Result<RpcMode> RpcModeOf(const ModeName& name) {
  RpcMode m;
  SECMODE_ASSIGN_OR_RETURN(m.security, SecurityOfFamily(name.family));
  if (!m.kerberos()) return m;
  SECMODE_ASSIGN_OR_RETURN(m.engine, gss::ParseEngine(name.engine));
  SECMODE_ASSIGN_OR_RETURN(gss::Enctype enctype, gss::ParseEnctype(name.enctype));
  m.enctype = static_cast<int32_t>(enctype);
  return m;
}

Result<RpcMode> ParseRpcMode(const std::string& text) {
  // An SMB or unknown family is named as no RPC mode before anything else.
  SECMODE_RETURN_IF_ERROR(SecurityOfFamily(text.substr(0, text.find(':'))).status());
  SECMODE_ASSIGN_OR_RETURN(const ModeName name, ParseModeName(text));
  SECMODE_ASSIGN_OR_RETURN(RpcMode m, RpcModeOf(name));
  // ParseModeName filled in the default enctype; one left out here is none.
  const size_t colon = text.find(':');
  const bool enctype_named =
      colon != std::string::npos && colon + 1 < text.size() && text[colon + 1] != ':';
  if (!enctype_named) m.enctype = 0;
  return m;
}

Result<Association> MakeAssociation(const ModeName& name, ModeEnvironment& env) {
  const Entry* entry = FindEntry(name.family);
  if (entry == nullptr) return Status::InvalidArgument("unknown mode '" + name.family + "'");
  auto made = entry->factory(name, env);
  if (!made.ok()) return made.status().Annotate("mode " + name.ToString());
  Association a = std::move(made).value();
  a.mode = name.family;
  a.engine = name.engine;
  a.enctype = name.enctype;
  return a;
}

Result<std::vector<Association>> MakeSharedAssociations(const ModeName& name, ModeEnvironment& env,
                                                        size_t count, uint32_t window) {
  const Result<RpcMode> m = RpcModeOf(name);
  if (!m.ok() || !m->kerberos()) {
    return Status::InvalidArgument("mode " + name.ToString() +
                                   ": only the krb5 modes have a context to share");
  }
  SECMODE_ASSIGN_OR_RETURN(gss::Realm * realm, env.GetRealm());
  auto made =
      rpc::MakeSharedRpcAssociations(m->security, m->engine, m->enctype, realm, count, window);
  if (!made.ok()) return made.status().Annotate("mode " + name.ToString());
  for (Association& a : *made) {
    a.mode = name.family;
    a.engine = name.engine;
    a.enctype = name.enctype;
  }
  return made;
}

std::vector<ModeName> DefaultModes() {
  std::vector<ModeName> out;
  for (const auto& e : Table()) {
    for (const auto& engine : e.info.engines) {
      ModeName n;
      n.family = e.info.family;
      n.engine = engine;
      if (e.info.kerberos) n.enctype = gss::EnctypeName(gss::kDefaultEnctype);
      out.push_back(n);
    }
  }
  return out;
}

}  // namespace secmode::harness
