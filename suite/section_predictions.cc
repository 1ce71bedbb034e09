// Section "predictions": what a few standard fio-like jobs would get under
// each krb5 mode the run measured against sys, and under each SMB mode it
// measured against smb-plain, on two hosts like this one
// (sim/workload_model.h through harness::PredictJobs, as `secmode predict`
// does): rows to RunResults::predictions (NFS first, then SMB, each row with
// its baseline), the environments and the jobs to
// RunResults::sections["predictions"]. NFS needs the micro rows of sys and
// of a krb5 family and the e2e section's sys rows, SMB those of smb-plain
// and an SMB mode and the smb-e2e section's smb-plain rows; without them it
// records why it did not predict ("not_run", "smb_not_run") instead of
// failing the run.
#include <string>
#include <vector>

#include "harness/workload_inputs.h"
#include "sim/workload.h"
#include "suite/section.h"

namespace secmode::suite {

using common::Status;

namespace {

struct Job {
  const char* name;
  sim::Rw rw;
  int64_t bs;
  int iodepth;
  bool async;
};
// Small random I/O and large sequential I/O with a deep queue, metadata,
// and one I/O at a time (latency-bound).
constexpr Job kJobs[] = {{"4k-randread-qd64", sim::Rw::kRandRead, 4096, 64, true},
                         {"4k-randwrite-qd64", sim::Rw::kRandWrite, 4096, 64, true},
                         {"1m-read-qd16", sim::Rw::kRead, 1 << 20, 16, true},
                         {"1m-write-qd16", sim::Rw::kWrite, 1 << 20, 16, true},
                         {"metadata-qd64", sim::Rw::kMetadata, 0, 64, true},
                         {"4k-randread-qd1", sim::Rw::kRandRead, 4096, 1, false}};
constexpr int kConnections = 4;  // as the e2e rows

}  // namespace

Status RunPredictionsSection(SectionContext& ctx) {
  std::vector<sim::Workload> jobs;
  nlohmann::json job_names = nlohmann::json::array();
  for (const Job& j : kJobs) {
    sim::Workload w;
    w.name = j.name;
    w.rw = j.rw;
    w.bs = j.bs > 0 ? j.bs : 4096;
    w.iodepth = j.iodepth;
    w.engine = j.async ? sim::EngineClass::kAsync : sim::EngineClass::kSync;
    w.ioengine = j.async ? "libaio" : "psync";
    jobs.push_back(w);
    job_names.push_back({{"job", w.name}, {"workload", w.Describe()}});
  }
  nlohmann::json& section = ctx.results.sections["predictions"];
  section = {{"jobs", job_names}};
  ctx.results.predictions = nlohmann::json::array();
  const int cpus = ctx.results.machine.logical_cpus > 0 ? ctx.results.machine.logical_cpus : 1;
  const std::string hosts =
      "two hosts like this one (client and server each with its logical CPUs), a network as "
      "fast as loopback (no round trip, no bandwidth limit)";
  // One protocol's rows (`families` not empty); the reason when none can be
  // predicted.
  auto predict = [&](const std::string& baseline, const std::vector<std::string>& families,
                     sim::Environment env, const char* env_key) -> std::string {
    auto costs = harness::ProtocolCostsFromRun(ctx.results, baseline, &env.protocol_cost_source);
    if (!costs.ok()) return costs.status().message();
    env.client = costs->client;
    env.server = costs->server;
    // Job by job: a job whose operation the run did not measure end to end
    // is listed with the reason, the others predicted.
    nlohmann::json skipped = nlohmann::json::array();
    for (const sim::Workload& w : jobs) {
      auto doc = harness::PredictJobs(ctx.results, "this run", {w}, env, families, "", "", {});
      if (!doc.ok()) {
        skipped.push_back({{"job", w.name}, {"why", doc.status().message()}});
        continue;
      }
      section[env_key] = (*doc)["environment"];
      section[env_key]["hosts"] = hosts;
      for (auto& row : (*doc)["predictions"]) ctx.results.predictions.push_back(row);
    }
    if (!section.contains(env_key)) return skipped.front().value("why", "");
    if (!skipped.empty()) section[env_key]["skipped_jobs"] = skipped;
    return "";
  };
  sim::Environment env;
  env.connections = kConnections;
  env.client_cores = env.server_cores = cpus;
  if (auto w = harness::MaxTcpReceiveWindow(); w.ok()) env.tcp_window_bytes = *w;
  // NFS: the krb5 families the run measured.
  std::vector<std::string> nfs;
  for (const char* f : {"krb5", "krb5i", "krb5p"}) {
    if (harness::LegCostsFromRun(ctx.results, f).ok()) nfs.push_back(f);
  }
  if (nfs.empty()) {
    section["not_run"] = "the run measured no krb5 family";
  } else if (std::string why = predict("sys", nfs, env, "environment"); !why.empty()) {
    section["not_run"] = why;
  }
  // SMB: the signing and encryption modes the run measured, on one session
  // of kConnections channels.
  std::vector<std::string> smb;
  for (const std::string& f : harness::SmbModesOfRun(ctx.results)) {
    if (harness::LegCostsFromRun(ctx.results, f).ok()) smb.push_back(f);
  }
  sim::Environment smb_env = env;
  harness::UseSambaServer(&smb_env);
  if (smb.empty()) {
    section["smb_not_run"] = "the run measured no SMB signing or encryption mode";
  } else if (std::string why = predict("smb-plain", smb, smb_env, "smb_environment");
             !why.empty()) {
    section["smb_not_run"] = why;
  }
  return Status::Ok();
}

}  // namespace secmode::suite
