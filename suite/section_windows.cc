// Section "windows": the RPCSEC_GSS sequence windows of real servers and
// what each does with a call below its window, measured by secmode probe
// (rpc/window_probe.h) with the run's realm: secmode's own server (its
// window and policy are set here, so its line checks the probe) and
// nfs-ganesha, started throwaway (rpc/ganesha.h) when it can run here (root,
// the Debian package); otherwise its line says why not. Each peer's report
// (every call as evidence) goes to sections.windows.peers with the peer's
// name and version; the nconnect model's window and reaction for it are
// in its "model".
#include <string>

#include "harness/local_rpc.h"
#include "harness/results.h"
#include "rpc/ganesha.h"
#include "rpc/window_probe.h"
#include "suite/section.h"

namespace secmode::suite {

using common::Status;

namespace {

constexpr uint32_t kOwnWindow = 128;
constexpr int kSilenceMs = 300;  // loopback: a reply takes well under 1 ms
constexpr uint32_t kMaxWindow = 4096;

nlohmann::json Peer(const std::string& name, const std::string& version,
                    const rpc::ProbeReport& r) {
  nlohmann::json j = harness::ProbeReportJson(r);
  j["peer"] = name;
  j["peer_version"] = version;
  return j;
}

}  // namespace

Status RunWindowsSection(SectionContext& ctx) {
  SECMODE_ASSIGN_OR_RETURN(gss::Realm * realm, ctx.env.GetRealm());
  rpc::ProbeOptions o;
  o.security = rpc::Security::kKrb5i;
  o.ccache = realm->ccache();
  o.silence_ms = kSilenceMs;
  o.max_window = kMaxWindow;
  nlohmann::json section = {{"mode", rpc::SecurityName(o.security)},
                            {"silence_ms", o.silence_ms},
                            {"max_window", o.max_window},
                            {"peers", nlohmann::json::array()},
                            {"skipped", nlohmann::json::array()}};
  {
    rpc::ServerOptions so;
    so.window = kOwnWindow;
    so.policy = rpc::WindowPolicy::kDropDisconnect;
    SECMODE_ASSIGN_OR_RETURN(harness::LocalRpcServer own,
                             harness::StartLocalRpcServer(ctx.env, true, so));
    o.port = own.server->port();
    SECMODE_ASSIGN_OR_RETURN(rpc::ProbeReport r, rpc::ProbeWindow(o));
    own.server->Stop();
    section["peers"].push_back(
        Peer("secmode serve --window 128 --reaction drop-disconnect", "this build", r));
  }
  Status available = rpc::Ganesha::Available();
  if (!available.ok()) {
    section["skipped"].push_back({{"peer", "nfs-ganesha"}, {"why", available.message()}});
  } else {
    rpc::GaneshaOptions go;
    go.keytab = realm->service_keytab();
    go.env = realm->Environment();
    go.principals = {realm->user_principal()};
    SECMODE_ASSIGN_OR_RETURN(auto ganesha, rpc::Ganesha::Start(go));
    o.port = ganesha->port();
    auto r = rpc::ProbeWindow(o);
    if (!r.ok()) return r.status().Annotate(ganesha->Describe());
    section["peers"].push_back(Peer("nfs-ganesha", ganesha->version(), *r));
    SECMODE_RETURN_IF_ERROR(ganesha->Stop());
  }
  ctx.results.sections["windows"] = section;
  return Status::Ok();
}

}  // namespace secmode::suite
