// `secmode predict`: what a fio-like job gets under each mode, from a saved
// run's measured costs (sim/workload_model.h through
// harness/workload_inputs.h), drawn by render/report_predict.h or printed as
// JSON.
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/saved_run.h"
#include "common/files.h"
#include "harness/results.h"
#include "harness/workload_inputs.h"
#include "render/report_predict.h"
#include "sim/workload.h"
#include "sim/workload_model.h"

namespace secmode::cli {
namespace {

struct PredictArgs {
  std::string results, fio, out;
  std::string rw = "randread", bs = "4k", ioengine = "psync";
  int iodepth = 1, numjobs = 1, rwmixread = 50;
  double rtt_ms = 0, storage_ms = 0, client_op_us = -1, server_op_us = -1;
  std::string bandwidth, bandwidth_c2s, bandwidth_s2c, tcp_window;
  int connections = 1, client_cores = 0, server_cores = 0;
  int64_t slots = 64;
  std::vector<std::string> modes = {"krb5", "krb5i", "krb5p"};
  std::string engine, enctype;
  bool json = false, explain = false;
  double baseline_iops = 0;
};

constexpr const char* kPredictCommand = "predict";

double Rate(const std::string& flag, const std::string& value) {
  auto r = sim::ParseLinkRate(value);
  if (!r.ok()) Fail(kPredictCommand, r.status().Annotate(flag));
  return *r;
}

// The document to --out (atomically), and as JSON or drawn by `text` to stdout.
void Emit(const PredictArgs& a, const nlohmann::json& doc,
          std::string (*text)(const nlohmann::json&)) {
  if (!a.out.empty()) {
    if (auto s = common::WriteFileAtomically(a.out, doc.dump(1) + "\n"); !s.ok()) {
      Fail(kPredictCommand, s.Annotate("--out"));
    }
  }
  std::cout << (a.json ? doc.dump(1) + "\n" : text(doc));
}

void Predict(const PredictArgs& a, const CLI::App& cmd) {
  // The workload: a fio job file, or the flags.
  std::vector<sim::Workload> jobs;
  std::vector<std::string> warnings;
  if (!a.fio.empty()) {
    for (const char* flag :
         {"--rw", "--bs", "--iodepth", "--numjobs", "--ioengine", "--rwmixread"}) {
      if (cmd.count(flag) > 0)
        FailUsage(kPredictCommand, std::string(flag) + " and --fio: give one or the other");
    }
    auto text = common::ReadFile(a.fio);
    // A file that is not there is bad usage, as a missing run is.
    if (!text.ok())
      Fail(kPredictCommand, common::Status::InvalidArgument("--fio: " + text.status().message()));
    auto parsed = sim::ParseFioJobFile(*text);
    if (!parsed.ok()) Fail(kPredictCommand, parsed.status().Annotate(a.fio));
    jobs = parsed->jobs;
    warnings = parsed->warnings;
  } else {
    sim::Workload w;
    w.name = "flags";
    auto rw = sim::ParseRw(a.rw);
    if (!rw.ok()) Fail(kPredictCommand, rw.status().Annotate("--rw"));
    w.rw = *rw;
    auto bs = sim::ParseFioSize(a.bs);
    if (!bs.ok()) Fail(kPredictCommand, bs.status().Annotate("--bs"));
    w.bs = *bs;
    auto engine = sim::ParseIoEngine(a.ioengine);
    if (!engine.ok()) Fail(kPredictCommand, engine.status().Annotate("--ioengine"));
    w.engine = *engine;
    w.ioengine = a.ioengine;
    w.iodepth = a.iodepth;
    w.numjobs = a.numjobs;
    w.rwmixread = a.rwmixread;
    if (auto s = w.Validate(); !s.ok()) Fail(kPredictCommand, s);
    if (w.engine == sim::EngineClass::kSync && w.iodepth > 1) {
      warnings.push_back("iodepth=" + std::to_string(w.iodepth) + " with the sync engine " +
                         w.ioengine + " keeps one I/O in flight per job (as fio does)");
    }
    jobs.push_back(w);
  }
  // NFS modes against sys, SMB modes against smb-plain.
  std::string baseline = "sys";
  if (!a.explain) {
    auto b = harness::BaselineOfModes(a.modes);
    if (!b.ok()) Fail(kPredictCommand, b.status().Annotate("--modes"));
    baseline = *b;
  }
  // The costs: a saved run.
  std::string path = a.results;
  const harness::RunResults saved = ReadSavedRunOrFail(kPredictCommand, &path);
  const harness::RunResults* run = &saved;
  // The environment.
  sim::Environment env;
  env.rtt_ns = static_cast<int64_t>(a.rtt_ms * 1e6 + 0.5);
  env.storage_ns = static_cast<int64_t>(a.storage_ms * 1e6 + 0.5);
  if (!a.bandwidth.empty())
    env.c2s_bytes_per_s = env.s2c_bytes_per_s = Rate("--bandwidth", a.bandwidth);
  if (!a.bandwidth_c2s.empty()) env.c2s_bytes_per_s = Rate("--bandwidth-c2s", a.bandwidth_c2s);
  if (!a.bandwidth_s2c.empty()) env.s2c_bytes_per_s = Rate("--bandwidth-s2c", a.bandwidth_s2c);
  env.connections = a.connections;
  env.slots = a.slots;
  const int cpus = run->machine.logical_cpus > 0 ? run->machine.logical_cpus : 1;
  env.client_cores = a.client_cores > 0 ? a.client_cores : cpus;
  env.server_cores = a.server_cores > 0 ? a.server_cores : cpus;
  // SMB: the jobs share one session of Samba's; --slots still holds.
  if (baseline == "smb-plain") {
    harness::UseSambaServer(&env);
    if (cmd.count("--slots") > 0) env.slots = a.slots;
  }
  if (!a.tcp_window.empty()) {
    auto w = sim::ParseFioSize(a.tcp_window);
    if (!w.ok()) Fail(kPredictCommand, w.status().Annotate("--tcp-window"));
    env.tcp_window_bytes = *w;
  } else {
    auto w = harness::MaxTcpReceiveWindow();
    if (w.ok()) {
      env.tcp_window_bytes = *w;
    } else {
      warnings.push_back(w.status().message() + ": no TCP window limit");
    }
  }
  if ((a.client_op_us >= 0) != (a.server_op_us >= 0)) {
    FailUsage(kPredictCommand, "--client-op-us and --server-op-us go together");
  }
  if (a.client_op_us >= 0) {
    for (sim::CostCurve* c : {&env.client.read, &env.client.write, &env.client.metadata}) {
      (*c)[0] = a.client_op_us * 1e3;
    }
    for (sim::CostCurve* c : {&env.server.read, &env.server.write, &env.server.metadata}) {
      (*c)[0] = a.server_op_us * 1e3;
    }
    env.protocol_cost_source = "given: client " + std::to_string(a.client_op_us) + " us, server " +
                               std::to_string(a.server_op_us) + " us per op";
  } else {
    auto costs = harness::ProtocolCostsFromRun(*run, baseline, &env.protocol_cost_source);
    if (!costs.ok()) Fail(kPredictCommand, costs.status());
    env.client = costs->client;
    env.server = costs->server;
  }
  if (auto s = env.Validate(); !s.ok()) Fail(kPredictCommand, s);
  if (a.explain) {
    if (jobs.size() != 1)
      FailUsage(kPredictCommand,
                "--explain takes one job (the fio file has " + std::to_string(jobs.size()) + ")");
    if (cmd.count("--modes") > 0)
      FailUsage(kPredictCommand,
                "--explain sets the published modes beside the run's; --modes does not apply");
    auto doc = harness::ExplainPublished(*run, path, jobs.front(), env, a.engine, a.enctype,
                                         a.baseline_iops);
    if (!doc.ok()) Fail(kPredictCommand, doc.status());
    (*doc)["warnings"] = warnings;
    Emit(a, *doc, render::ExplanationText);
    return;
  }
  if (cmd.count("--baseline-iops") > 0)
    FailUsage(kPredictCommand, "--baseline-iops goes with --explain");
  auto doc = harness::PredictJobs(*run, path, jobs, env, a.modes, a.engine, a.enctype, warnings);
  if (!doc.ok()) Fail(kPredictCommand, doc.status());
  Emit(a, *doc, render::PredictionsText);
}

}  // namespace

CLI::App* AddPredictCommand(CLI::App& app) {
  auto a = std::make_shared<PredictArgs>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Predict what a fio-like job gets under sys, krb5, krb5i and krb5p over NFS, or smb-plain, "
      "SMB3 signing and encryption (IOPS, MB/s, mean and p99 latency, the bottleneck, the "
      "change against sys or smb-plain) from a saved run's measured costs: a closed queueing "
      "model of client CPU, links, server CPU, storage and the round trip "
      "(sim/workload_model.h)");
  AddResultsOption(cmd, &a->results);
  cmd->add_option("--fio", a->fio,
                  "A fio job file: each job section is predicted on its own ([global] gives "
                  "defaults; keys other than rw, rwmixread, rwmixwrite, bs, iodepth, numjobs, "
                  "ioengine are ignored with a warning)");
  cmd->add_option("--rw", a->rw,
                  "read, write, randread, randwrite, readwrite, randrw or metadata (default "
                  "randread)");
  cmd->add_option("--bs", a->bs, "Block size, fio's suffixes (default 4k)");
  cmd->add_option("--iodepth", a->iodepth,
                  "I/Os in flight per job with an async engine (default 1)");
  cmd->add_option("--numjobs", a->numjobs, "Jobs (default 1)");
  cmd->add_option("--ioengine", a->ioengine,
                  "sync, psync, vsync, pvsync, pvsync2 (one I/O per job in flight), libaio, "
                  "io_uring, posixaio (iodepth per job) (default psync)");
  cmd->add_option("--rwmixread", a->rwmixread,
                  "Percent of reads for readwrite and randrw (default 50)");
  cmd->add_option("--rtt-ms", a->rtt_ms, "Network round trip in ms (default 0)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--bandwidth", a->bandwidth,
                  "Link rate each way, as tc writes it: 100mbit, 1gbit ... (default unlimited)");
  cmd->add_option("--bandwidth-c2s", a->bandwidth_c2s, "Client to server link rate");
  cmd->add_option("--bandwidth-s2c", a->bandwidth_s2c, "Server to client link rate");
  cmd->add_option("--connections", a->connections,
                  "TCP connections (nconnect, or SMB channels) (default 1)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--slots", a->slots,
                  "Calls on the wire at once: the NFSv4.1 session's slot table (default 64, "
                  "Linux's); for SMB the requests the server's credits allow (default 8192, "
                  "Samba's smb2 max credits)")
      ->check(CLI::Range(int64_t{1}, sim::kMaxModelSlots));
  cmd->add_option("--client-cores", a->client_cores,
                  "Client cores (default: the run's machine's logical CPUs)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--server-cores", a->server_cores,
                  "Server cores (default: the run's machine's logical CPUs); SMB modes use one "
                  "of them, as Samba serves a session and all its channels on one smbd thread")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--storage-ms", a->storage_ms, "Server storage latency per op in ms (default 0)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--tcp-window", a->tcp_window,
                  "Bytes one connection keeps in flight each way (default: this machine's "
                  "net.ipv4.tcp_rmem maximum)");
  cmd->add_option("--client-op-us", a->client_op_us,
                  "The client's protocol CPU per op without security, us (with --server-op-us; "
                  "default: half the run's end-to-end sys CPU per call; for SMB the client's own "
                  "CPU per operation in the run's smb-e2e smb-plain rows)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--server-op-us", a->server_op_us,
                  "The server's protocol CPU per op without security, us (with --client-op-us; "
                  "default: half the run's end-to-end sys CPU per call; for SMB the CPU per "
                  "operation of Samba's thread serving the session in the run's smb-e2e "
                  "smb-plain rows where every run measured it, else the rest of their busy CPU)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--modes", a->modes,
                  "Modes besides the baseline (default krb5 krb5i krb5p, against sys); SMB modes "
                  "(smb-sign-hmac-sha256, smb-sign-aes-cmac, smb-sign-aes-gmac, "
                  "smb-enc-aes-{128,256}-{ccm,gcm}) are predicted against smb-plain, from the "
                  "run's SMB legs and its smb-e2e section; one protocol at a time");
  cmd->add_option("--engine", a->engine,
                  "GSS engine of the krb5 modes' costs (default native when the run has it)");
  cmd->add_option("--enctype", a->enctype,
                  "Enctype of the krb5 modes' costs (default the run's first)");
  cmd->add_flag("--explain", a->explain,
                "Set the published figures (Azure NetApp Files: NFSv4.1 krb5/krb5i/krb5p against "
                "sys; SMB signing and encryption) beside the run's measured crypto for the job: "
                "which share the crypto explains and what else would fit");
  cmd->add_option("--baseline-iops", a->baseline_iops,
                  "With --explain: the published sys IOPS, to size the serialised stage the "
                  "published drops imply")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", a->json, "Print the predictions as JSON instead of the table");
  cmd->add_option("--out", a->out, "Also write the JSON to this file (atomically)");
  cmd->callback([a, cmd] { Predict(*a, *cmd); });
  return cmd;
}

}  // namespace secmode::cli
