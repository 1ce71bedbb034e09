// Section "predictions": what a few standard fio-like jobs would get under
// each krb5 mode the run measured against sys, on two hosts like this one
// (sim/workload_model.h through harness::PredictJobs, as `secmode predict`
// does): rows to RunResults::predictions, the environment and the jobs to
// RunResults::sections["predictions"]. It needs the micro rows of sys and
// of a krb5 family and the e2e section's sys rows; without them it records
// why it did not predict instead of failing the run.
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
  // The krb5 families the run measured.
  std::vector<std::string> families;
  for (const char* f : {"krb5", "krb5i", "krb5p"}) {
    if (harness::LegCostsFromRun(ctx.results, f).ok()) families.push_back(f);
  }
  sim::Environment env;
  env.connections = kConnections;
  const int cpus = ctx.results.machine.logical_cpus > 0 ? ctx.results.machine.logical_cpus : 1;
  env.client_cores = env.server_cores = cpus;
  if (auto w = harness::MaxTcpReceiveWindow(); w.ok()) env.tcp_window_bytes = *w;
  auto costs = harness::ProtocolCostsFromRun(ctx.results, &env.protocol_cost_source);
  if (families.empty() || !costs.ok()) {
    section["not_run"] =
        families.empty() ? "the run measured no krb5 family" : costs.status().message();
    return Status::Ok();
  }
  env.client = env.server = *costs;
  auto doc = harness::PredictJobs(ctx.results, "this run", jobs, env, families, "", "", {});
  if (!doc.ok()) {
    section["not_run"] = doc.status().message();
    return Status::Ok();
  }
  section["environment"] = (*doc)["environment"];
  section["environment"]["hosts"] =
      "two hosts like this one (client and server each with its logical CPUs), a network as "
      "fast as loopback (no round trip, no bandwidth limit)";
  ctx.results.predictions = (*doc)["predictions"];
  return Status::Ok();
}

}  // namespace secmode::suite
