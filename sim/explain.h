// Published numbers set beside what secmode measured (`secmode predict
// --explain`): which share of a published change the measured crypto
// explains, and what else would fit.
//
// NFS (a change of a krb5 mode against sys, in IOPS and mean latency):
//   - the crypto on one operation's path: the four legs' extra over sys at
//     the job's payloads (sim/workload_model.h LegsExtraPerOp), client and
//     server; its share of the published latency change;
//   - the sys latency the published pair implies if both runs kept the same
//     I/Os in flight (Little's law: N = X0 R0 = X1 (R0 + dR), so
//     R0 = dR (1 - f) / f for an IOPS drop f); different modes implying
//     different R0 say the runs did not;
//   - the factor by which the bottleneck's demand per operation grew,
//     1 / (1 - f), beside the change the model predicts for the job;
//   - with the baseline's IOPS X0 (when given): the rate X1 = X0 (1 - f), and
//     the extra time per operation, 1/X1 - 1/X0, that one stage handling one
//     operation at a time would have to add; the server crypto's share of
//     it, and the rest, which a serialised stage of that length would fit.
// SMB (per MiB read by one client; sim/explain.cc cites each figure):
//   - signing: one connection's sequential read fell from 875 to 250 MiB/s,
//     client CPU bound: the extra client time per MiB that implies beside
//     each signing algorithm's measured extra verify time per MiB;
//   - encryption: 10-15% of read throughput: for each cipher, the
//     unencrypted rate at which its measured extra client time per MiB alone
//     costs 10% and 15%; metadata, 5%: the operation rate at which the
//     cipher's cost at the smallest size (seal + open) alone costs 5%.
//
// Thread safety: pure functions.
#ifndef SECMODE_SIM_EXPLAIN_H_
#define SECMODE_SIM_EXPLAIN_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/workload_model.h"

namespace secmode::sim {

// One mode's published change against sys.
struct PublishedChange {
  std::string source;  // where it was published
  std::string mode;    // krb5, krb5i, krb5p
  double iops_change_pct = 0;
  double latency_change_ms = 0;
};
// Azure NetApp Files, NFSv4.1 with AES-256 (../shared/DESIGN.md).
std::vector<PublishedChange> PublishedNfsChanges();

// NFS: one row per published change whose mode is in `modes`; an error when
// a published mode has no costs in `modes`.
common::Result<nlohmann::json> ExplainNfs(const Workload& w, const Environment& env,
                                          const LegCosts& sys, const std::vector<LegCosts>& modes,
                                          const std::vector<PublishedChange>& published,
                                          double baseline_iops);

// SMB: `plain` is smb-plain's legs, `modes` any smb-sign-* and smb-enc-*
// legs (1 MiB and the smallest size measured).
common::Result<nlohmann::json> ExplainSmb(const LegCosts& plain,
                                          const std::vector<LegCosts>& modes);

}  // namespace secmode::sim

#endif  // SECMODE_SIM_EXPLAIN_H_
