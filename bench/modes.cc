#include "bench/modes.h"

#include <functional>

#include "gss/context_pair.h"
#include "gss/enctype.h"
#include "gss/protector.h"
#include "gss/token_legs.h"
#include "smb/gss_session.h"

namespace secmode::bench {

using common::Association;
using common::Result;
using common::Status;

namespace {

// sec=sys baseline: the payload travels unprotected; the legs cost one copy,
// as any transport pays to move bytes into and out of a message.
class PlainSealer : public common::Sealer {
 public:
  Status Seal(common::ByteView payload, common::Bytes* wire) override {
    wire->assign(payload.begin(), payload.end());
    return Status::Ok();
  }
};
class PlainOpener : public common::Opener {
 public:
  Status Open(common::ByteView wire, common::Bytes* payload) override {
    payload->assign(wire.begin(), wire.end());
    return Status::Ok();
  }
};

Result<Association> MakeSys(const ModeName&, ModeEnvironment&) {
  Association a;
  a.client_seal = std::make_unique<PlainSealer>();
  a.server_open = std::make_unique<PlainOpener>();
  a.server_seal = std::make_unique<PlainSealer>();
  a.client_open = std::make_unique<PlainOpener>();
  return a;
}

// Token-level krb5 modes (gss/token_legs.h): one fresh context pair per
// association, each side's context handed to the engine.
Result<Association> MakeKrb5(gss::Protection protection, const ModeName& name,
                             ModeEnvironment& env) {
  SECMODE_ASSIGN_OR_RETURN(gss::Enctype enctype, gss::ParseEnctype(name.enctype));
  SECMODE_ASSIGN_OR_RETURN(gss::Engine engine, gss::ParseEngine(name.engine));
  SECMODE_ASSIGN_OR_RETURN(gss::Realm * realm, env.GetRealm());
  SECMODE_ASSIGN_OR_RETURN(auto pair, gss::ContextPair::Establish(*realm, enctype));
  SECMODE_ASSIGN_OR_RETURN(std::shared_ptr<gss::Protector> initiator,
                           gss::NewProtector(engine, pair->ReleaseInitiator()));
  SECMODE_ASSIGN_OR_RETURN(std::shared_ptr<gss::Protector> acceptor,
                           gss::NewProtector(engine, pair->ReleaseAcceptor()));
  Association a;
  gss::MakeTokenLegs(protection, initiator, acceptor, &a);
  return a;
}

Result<Association> MakeKrb5HeaderMic(const ModeName& name, ModeEnvironment& env) {
  return MakeKrb5(gss::Protection::kHeaderMic, name, env);
}
Result<Association> MakeKrb5i(const ModeName& name, ModeEnvironment& env) {
  return MakeKrb5(gss::Protection::kMicData, name, env);
}
Result<Association> MakeKrb5p(const ModeName& name, ModeEnvironment& env) {
  return MakeKrb5(gss::Protection::kWrapConf, name, env);
}

// SMB modes: the session key of a real Kerberos context pair, SMB keys
// derived from it, WRITE requests / READ responses as the wire (smb/legs.h).
Result<Association> MakeSmb(const ModeName& name, ModeEnvironment& env) {
  SECMODE_ASSIGN_OR_RETURN(gss::Realm * realm, env.GetRealm());
  return smb::MakeKerberosSmbAssociation(name.family, *realm);
}

using Factory = std::function<Result<Association>(const ModeName&, ModeEnvironment&)>;

struct Entry {
  ModeInfo info;
  Factory factory;
};

const std::vector<Entry>& Table() {
  // The one place modes are registered.
  static const std::vector<Entry> kModes = {
      {{"sys", "AUTH_SYS baseline: no protection, the payload is copied", false, {"none"}},
       MakeSys},
      {{"krb5",
        "RPCSEC_GSS authentication, token level: MIC over a fixed 40-byte stand-in for the RPC "
        "header; the payload is carried in clear",
        true,
        {"mit", "native", "mit-iov"}},
       MakeKrb5HeaderMic},
      {{"krb5i",
        "RPCSEC_GSS integrity, token level: RFC 4121 MIC over the data; wire = data + MIC",
        true,
        {"mit", "native", "mit-iov"}},
       MakeKrb5i},
      {{"krb5p",
        "RPCSEC_GSS privacy: RFC 4121 wrap token with confidentiality",
        true,
        {"mit", "native", "mit-iov"}},
       MakeKrb5p},
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

}  // namespace secmode::bench
