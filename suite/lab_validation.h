// The workload model checked on the lab: what sim/workload_model.h predicts
// for each mode beside what a real load measures between the lab's two
// hosts over links with real bandwidth limits (tc tbf) and emulated round
// trips. Two protocols, each against its own server:
//  - NFS: sys, krb5, krb5i and krb5p (native engine), `secmode load`
//    against `secmode serve` (lab/lab_hosts.h), nconnect 4, the round trip
//    half on each end (serve and load --delay-ms);
//  - SMB: smb-plain, smb-sign-aes-cmac and smb-enc-aes-128-gcm by default
//    (the SMB 3.0 signing and the SMB 3.1.1 cipher Windows picks first),
//    smb/load.h against a throwaway Samba AD DC (smb/samba_dc.h) in the
//    lab's server namespace, one session over 1, 4 or 16 channels, the whole
//    round trip on the client (SmbClient::HoldRequests: Samba cannot hold
//    its responses).
// `secmode lab [--smb]` and the `lab` and `smb-lab` sections of `secmode
// run` all call RunLabValidation.
//
// Grids (LabGrid): the links are {round trip} x {bandwidth}; on each, every
// mode x op x size x depth of the grid. NFS's depths are iodepth x numjobs
// over nconnect 4; SMB's are channels x requests in flight per channel (one
// job: fio's iodepth is their product). The full NFS grid:
// RTT {0, 1, 20, 200 ms} x {unshaped, 1 Gbit/s, 100 Mbit/s} x {4 KiB, 1 MiB}
// x {READ, WRITE} x iodepth {1, 64} x numjobs {1, 4} (768 points); the full
// SMB grid the same links and sizes x channels {1, 4, 16}
// x {1, 16} in flight per channel. The default grids keep four links (no
// delay unshaped, 1 ms unshaped, 20 ms at 1 Gbit/s, 200 ms at 100 Mbit/s),
// 4 KiB READ and 1 MiB WRITE, and NFS iodepth 1 and 64 with numjobs 1 (64
// points) or SMB 1 channel x 1, 4 x 16 and 16 x 4 (72
// points); the quick grids three links and the same ops, NFS's two depths,
// SMB's 1 x 1 and 4 x 16. A point the
// model predicts to complete fewer than 10 operations in 6 s is pruned and
// listed, with why.
//
// The model's inputs, all measured, none fitted to the lab:
//  - the legs of each mode (micro rows, harness::LegCostsFromRun) and the
//    protocol's own CPU per op (harness::ProtocolCostsFromRun: the e2e sys
//    rows for NFS, the smb-e2e smb-plain rows for SMB);
//  - the link's round trip as measured on it: one request at a time (NFS a
//    GETATTR, SMB a QUERY_INFO), its median latency minus the same on the
//    undelayed unshaped link (the emulated delay plus what a sleeping
//    thread takes to wake), as a user would give a ping;
//  - each shaped direction's payload rate: the tbf rate times the share of
//    a full frame that is TCP payload (1448 of 1514 bytes: Ethernet, IPv4
//    and TCP with timestamps), kFramePayloadShare;
//  - one core each for client and server (this machine's logical CPUs
//    halved), no storage time, no TCP window limit (the delay is added in
//    user space: TCP does not see it); for SMB, Samba's one thread per
//    session (harness::UseSambaServer).
//
// The agreement rule, stated in the report: the model's assumptions hold
// at a point unless it is CPU-bound, predicted (the model's most used
// station a CPU over half busy, or most of an operation's time CPU: no
// station of a lone call is busier than its share of the call) or measured
// (the machine under a quarter
// idle during the point): the model gives each end its own core and no
// CPU to the network, while in the lab client, server, the kernel's TCP
// and the delay lines share this machine's CPUs. Where they hold, measured
// throughput must be within 25% of the predicted. The modes' order: in each
// group of points that differ only by mode, every pair the model separates
// by 10% or more must be measured in the same order; pairs it puts closer
// are ties and not checked.
//
// Thread safety: RunLabValidation blocks; one at a time per process (it
// uses the realm's environment).
#ifndef SECMODE_SUITE_LAB_VALIDATION_H_
#define SECMODE_SUITE_LAB_VALIDATION_H_

#include <atomic>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "gss/realm.h"
#include "harness/results.h"
#include "lab/lab_hosts.h"

namespace secmode::suite {

inline constexpr double kFramePayloadShare = 1448.0 / 1514.0;
inline constexpr double kLabTolerance = 0.25;    // measured / predicted within 1 +- this
inline constexpr double kLabOrderMargin = 1.10;  // predicted ratio that makes an order
inline constexpr double kLabMinIdle = 0.25;       // measured idle share below: CPU-bound
inline constexpr int kLabConnections = 4;

enum class LabGrid { kQuick, kDefault, kFull };
enum class LabProtocol { kNfs, kSmb };

struct LabValidationOptions {
  LabGrid grid = LabGrid::kDefault;
  LabProtocol protocol = LabProtocol::kNfs;
  // The families to check (the baseline, sys or smb-plain, always first);
  // empty: for NFS sys and every krb5 family the run has native micro rows
  // for, for SMB smb-plain and those of smb-sign-aes-cmac and
  // smb-enc-aes-128-gcm the run measured.
  std::vector<std::string> families;
  std::string secmode_path;  // "" = this process's binary
  // Where the costs come from, as the report names it ("this run", a path).
  std::string cost_source = "this run";
  std::ostream* log = nullptr;
  // A signal number once the run should stop (checked between points).
  const std::atomic<int>* interrupt = nullptr;
};

// sections["lab"] or ["smb-lab"]: {"protocol" (nfs, smb), "grid", "rule",
// "model_inputs", "server", "links": [...], "rows": [...], "pruned": [...],
// "order": [...], "summary": {...}} (each row with its measured and
// predicted throughput, the ratio, whether the model's assumptions hold and
// why not, and whether it agrees). An error when the lab or the server
// cannot be made or the run lacks the costs. `realm` is NFS's (SMB's
// Kerberos is the Samba DC's own): null for SMB.
common::Result<nlohmann::json> RunLabValidation(const harness::RunResults& run, gss::Realm* realm,
                                                const LabValidationOptions& options);

// The family every group of points measures first, whose costs are the
// protocol's own: "sys" for NFS, "smb-plain" for SMB.
std::string LabBaseline(LabProtocol protocol);

// Why RunLabValidation cannot run `protocol` here ("" when it can): no lab
// (lab::LabUnavailableReason), or for SMB no Samba (smb::SambaDc::Available).
std::string LabValidationUnavailableReason(LabProtocol protocol);

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_LAB_VALIDATION_H_
