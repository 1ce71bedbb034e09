// What the workload model (sim/workload_model.h) needs from a saved run:
// each mode's four legs (micro rows, one thread) and the protocol's own CPU
// per operation without security: for NFS the e2e sys rows against
// secmode's server, for SMB the smb-e2e section's smb-plain rows against
// Samba.
//
// Both run client and server on the same machine (loopback, or a veth pair
// between two namespaces), so a baseline row's busy CPU per call
// (BusyCpuNsPerCall; the median over its repeats, MedianCpuNsPerCall) is
// both ends and the kernel together;
// ProtocolCostsFromRun splits it between the ends (below) and says how in
// Environment::protocol_cost_source. NFS rows one call at a time are left
// out (latency, not CPU, bounds them).
//
// Thread safety: pure functions.
#ifndef SECMODE_HARNESS_WORKLOAD_INPUTS_H_
#define SECMODE_HARNESS_WORKLOAD_INPUTS_H_

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "harness/results.h"
#include "sim/explain.h"
#include "sim/workload_model.h"

namespace secmode::harness {

// A row's busy CPU time per completed call: logical CPUs x seconds x
// (1 - idle - steal) / ops; nothing when the row lacks any of them.
std::optional<double> BusyCpuNsPerCall(const nlohmann::json& row, int logical_cpus);

// A row's busy CPU per call over the row and its `repeats` (runs of the
// same load later in the run: the e2e section's rounds), whose single runs
// can be far apart on a shared machine: the median run's figure (the lower
// middle of an even count: always a run's own figure), how many runs have
// one, the lowest and the highest. Nothing when the row's own run has none.
struct CpuOverRuns {
  double median_ns = 0;
  size_t runs = 0;
  double min_ns = 0, max_ns = 0;
};
std::optional<CpuOverRuns> MedianCpuNsPerCall(const nlohmann::json& row, int logical_cpus);

// Makes `row`'s own figures those of its median run (as MedianCpuNsPerCall
// picks it; runs without the figure are not ranked): each of that run's
// fields is put at the row's top level, and the row's former values of
// those fields become a run in `repeats` in its place. So every reader of
// the row's figures reads one real run, the middle one, and
// MedianCpuNsPerCall's median is the row's own figure. Fields a run lacks
// (the row's engine, its controls) stay, and so does a row whose own run
// had failed replies (it stays in sight; the e2e section runs such a row
// once). Idempotent.
void PutMedianRunFirst(nlohmann::json& row, int logical_cpus);

// The legs of `family` (sys, krb5, krb5i, krb5p) from the run's one-thread
// micro rows, each leg at its typical cost (TypicalNsPerOp: the median
// repetition, not the fastest the row reports). `engine` and `enctype`
// empty: the run's only choice, or for
// the krb5 families the native engine and then the first enctype in the
// run; an error names what the run has when the choice is not there.
common::Result<sim::LegCosts> LegCostsFromRun(const RunResults& run, const std::string& family,
                                              const std::string& engine = "",
                                              const std::string& enctype = "");

// The same from micro rows alone. An SMB family's LegCosts::wire is SMB2's
// (MS-SMB2 2.1, 2.2): the 4-byte Direct TCP header, the SMB2 header and a
// READ/WRITE request's or response's fixed part (smb/message.h), taken for
// every operation, and the TRANSFORM_HEADER (smb/transform.h) in front of
// each message of an smb-enc-* mode.
common::Result<sim::LegCosts> LegCostsFromMicro(const std::vector<MicroRow>& micro,
                                                const std::string& family,
                                                const std::string& engine = "",
                                                const std::string& enctype = "");

// The baseline the modes are predicted against (sim::BaselineOf): sys for
// sys, krb5, krb5i and krb5p, smb-plain for smb-plain, smb-sign-* and
// smb-enc-*; each a family of the mode registry (harness/modes.h; its
// enctype and engine are chosen apart); an error names a mode that is not
// one or a list that mixes the two protocols.
common::Result<std::string> BaselineOfModes(const std::vector<std::string>& modes);

// What an SMB prediction assumes of the server: as many requests at once
// as Samba's credits allow ("smb2 max credits", 8192 unless set) and one
// thread for the session (sim::Environment::server_threads).
void UseSambaServer(sim::Environment* env);

// The SMB signing and encryption families the run measured (one-thread
// micro rows), in name order.
std::vector<std::string> SmbModesOfRun(const RunResults& run);

// The protocol's own CPU per op on each end, by op and payload size.
struct ProtocolCosts {
  sim::OpCosts client, server;
};
// For `baseline` sys: half each of the e2e sys rows' busy CPU (the client
// and secmode's server share one process; the median over each row's
// repeats, MedianCpuNsPerCall). For smb-plain: the smb-e2e
// section's smb-plain rows, the client's own CPU per operation (its
// process's, client_cpu_seconds) and to the server the CPU of Samba's
// thread that serves the session (server_session_thread_cpu_seconds) where
// every run measured it, else the rest of the busy CPU (Samba and the
// kernel: an upper bound on that thread's), each the median over a row's
// repetitions; of several rows of one op and size (1 and 4 channels) the
// one whose client and server costs sum least. An error when the run has no
// such rows.
common::Result<ProtocolCosts> ProtocolCostsFromRun(const RunResults& run,
                                                   const std::string& baseline,
                                                   std::string* source);

// The newest results.json under `root`/results/runs/ (directory names are
// UTC timestamps), else under `root`/results/reference/; an error saying how
// to make one when there is none.
common::Result<std::string> NewestResultsFile(const std::string& root);

// This machine's largest TCP receive buffer (net.ipv4.tcp_rmem's third
// field): the default per-connection window of the model.
common::Result<int64_t> MaxTcpReceiveWindow();

// `secmode predict`'s document: each job under each mode (the baseline of
// `families` first, then `families`, each with `engine` and `enctype` as
// LegCostsFromRun picks them; SMB modes have one engine and no enctype), as
// rows {job, workload, baseline, ...sim::ModePrediction::ToJson()}, with the source
// run, the baseline, the environment and `warnings`:
// {"schema": "secmode-predictions/1", "source", "baseline", "environment",
//  "warnings", "predictions"}. An error names the job or the mode that
// cannot be predicted.
common::Result<nlohmann::json> PredictJobs(const RunResults& run, const std::string& run_path,
                                           const std::vector<sim::Workload>& jobs,
                                           const sim::Environment& env,
                                           const std::vector<std::string>& families,
                                           const std::string& engine, const std::string& enctype,
                                           const std::vector<std::string>& warnings);

// `secmode predict --explain`'s document: the published NFS changes
// (sim::PublishedNfsChanges) beside the run's krb5 costs for `job` in
// `env`, and the published SMB figures beside its smb-* costs:
// {"schema": "secmode-explain/1", "source", "environment", "workload",
//  "baseline_iops", "nfs": [...], "smb": [...], "notes": [...]}. A run
// without SMB rows has an empty "smb" and a note saying so.
common::Result<nlohmann::json> ExplainPublished(const RunResults& run, const std::string& run_path,
                                                const sim::Workload& job,
                                                const sim::Environment& env,
                                                const std::string& engine,
                                                const std::string& enctype, double baseline_iops);

}  // namespace secmode::harness

#endif  // SECMODE_HARNESS_WORKLOAD_INPUTS_H_
