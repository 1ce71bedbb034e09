// The workload model: what a fio-like job (sim/workload.h) gets under each
// security mode, from the measured costs of the mode's four legs, as a
// closed queueing network solved by exact mean value analysis.
//
// The network, per operation (reads and writes mixed by the job's read
// share, their demands averaged):
//   client CPU   queueing, client_cores servers: the protocol's own CPU per
//                op without security (Environment::client) plus the mode's
//                client-seal (the call) and client-open (the reply) minus
//                sys's, at the payload each message carries
//   link c->s    queueing, one server: the call's bytes / bandwidth
//   server CPU   queueing, server_cores servers (fewer when the server
//                runs on fewer threads, Environment::server_threads):
//                Environment::server plus server-open and server-seal
//                minus sys's
//   link s->c    queueing, one server: the reply's bytes / bandwidth
//   storage      delay: Environment::storage_ns
//   network      delay: the round trip
// A call carries the job's block size when it writes, a reply when it
// reads; otherwise the message has no payload and its legs are looked up at
// the smallest measured size (as suite/e2e_from_legs.h does). Bytes on the
// wire add the mode's own (LegCosts::wire).
//
// Two protocols, each with its baseline: NFS (sys; krb5, krb5i, krb5p are
// its modes) and SMB3 (smb-plain; smb-sign-* and smb-enc-*). A mode's legs
// are taken minus its baseline's, and its change is against the baseline.
//
// Customers: the job's I/Os in flight (Workload::Outstanding), of which at
// most Environment::slots are on the wire (the NFSv4.1 session's slot
// table, or the requests an SMB server's credits allow); the others wait in the client, which adds to their latency and
// not to the rate. A station with c servers is Seidmann's approximation: a
// queue with demand D/c followed by a delay of D(c-1)/c. After the solution,
// each connection carries at most tcp_window_bytes per round trip in each
// direction; where that caps the rate, the rate is the cap and the
// bottleneck says "tcp window".
//
// Outputs per mode: IOPS, MB/s (payload, 10^6 bytes), mean latency (Little's
// law over every I/O in flight), a p99 estimate (the delays and the fixed
// service as they are, the queueing part as if exponential: x ln 100), the
// bottleneck (the most utilised station, or "latency" when none is over
// half busy), and the change against the baseline in percent and in ms.
//
// Thread safety: pure functions of their arguments.
#ifndef SECMODE_SIM_WORKLOAD_MODEL_H_
#define SECMODE_SIM_WORKLOAD_MODEL_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/scenario.h"
#include "sim/workload.h"

namespace secmode::sim {

// ns by message size: linear between measured sizes, the smallest size's
// value below it, the last two sizes' slope beyond the largest. Empty: none.
using CostCurve = std::map<int64_t, double>;
common::Result<double> CostAt(const CostCurve& curve, int64_t bytes);

// Bytes a message carries on the wire besides its payload.
struct WireOverhead {
  int64_t call = 0, reply = 0;
};

// One mode's four legs (client-seal, server-open, server-seal, client-open).
struct LegCosts {
  std::string mode;  // sys, krb5, krb5i, krb5p, smb-plain, smb-sign-*, smb-enc-*
  std::string engine, enctype;
  std::map<std::string, CostCurve> legs;
  // ONC RPC's call and reply (kRequestOverhead / kReplyOverhead,
  // sim/scenario.h) unless the mode's protocol says otherwise
  // (harness::LegCostsFromMicro sets SMB's).
  WireOverhead wire = {kRequestOverhead, kReplyOverhead};
  // "krb5p:aes256-cts-hmac-sha1-96:native"; the mode alone without an
  // enctype ("sys", "smb-enc-aes-128-gcm").
  std::string Label() const;
};

// True for smb-plain, smb-sign-* and smb-enc-*.
bool IsSmbMode(const std::string& mode);
// The mode a mode's change is taken against: smb-plain for SMB modes, sys
// for the others.
std::string BaselineOf(const std::string& mode);


// The protocol's own CPU per operation without security, on one end.
// A curve of one size above 0 is used at that size only (an error
// elsewhere: one size says nothing of how the cost grows); a lone point at
// 0 is a cost given for every size.
struct OpCosts {
  CostCurve read, write, metadata;  // ns by payload size (metadata: at 0)
};

// Calls on the wire the model solves for at most (MVA costs one step each).
inline constexpr int64_t kMaxModelSlots = 1 << 20;

struct Environment {
  int64_t rtt_ns = 0;
  double c2s_bytes_per_s = 0;  // 0: not limited
  double s2c_bytes_per_s = 0;
  int connections = 1;
  int64_t slots = 64;  // calls on the wire at once (Linux's NFSv4.1 slot table)
  int client_cores = 1;
  int server_cores = 1;
  // Threads the server does the protocol's and the crypto's work on, 0 for
  // as many as it has cores: the server CPU station has
  // min(server_cores, server_threads) servers. Samba serves an SMB session,
  // all its channels, from one smbd process, whose main thread signs,
  // seals and answers every request (its worker threads read and write the
  // files): 1 for the SMB modes' one session. The whole server demand goes
  // on that thread: the caller gives the thread's own measured CPU, or
  // (where it was not measured) all of the server's, an upper bound.
  int server_threads = 0;
  int64_t storage_ns = 0;
  int64_t tcp_window_bytes = 0;  // per connection and direction; 0: no limit
  OpCosts client, server;
  std::string protocol_cost_source;  // where client and server came from, for the output

  common::Status Validate() const;  // names the bad parameter
  nlohmann::json ToJson() const;
};

struct Station {
  std::string name;
  double demand_s = 0;  // per operation
  int servers = 1;
  bool delay = false;  // no queue (infinite servers)
};

struct MvaResult {
  double throughput = 0;            // operations per second
  double response_s = 0;            // per operation, over the stations
  std::vector<double> residence_s;  // per station
  std::vector<double> utilisation;  // per station (0 for delays)
};
// Exact single-class MVA for `customers` (>= 1), multi-server stations by
// Seidmann's approximation.
MvaResult SolveClosedMva(const std::vector<Station>& stations, int64_t customers);

struct ModePrediction {
  std::string mode;  // LegCosts::Label()
  std::vector<Station> stations;
  std::vector<double> utilisation;
  double iops = 0, mb_per_s = 0, mean_latency_s = 0, p99_latency_s = 0;
  std::string bottleneck;
  bool tcp_window_limited = false;
  double iops_change_pct = 0, latency_change_ms = 0;  // against the baseline
  nlohmann::json ToJson() const;
};

// The mode's four legs minus the baseline's (`sys`: sys or smb-plain) for
// one operation of the job, reads and writes mixed by its read share: ns on
// the client (client-seal + client-open) and on the server (server-open +
// server-seal).
struct LegsExtra {
  double client_ns = 0, server_ns = 0;
};
// The same for one message pair: the call carrying `call_payload` bytes,
// the reply `reply_payload` (each leg's cost by CostAt).
common::Result<LegsExtra> LegsExtraAt(const LegCosts& mode, const LegCosts& sys,
                                      int64_t call_payload, int64_t reply_payload);
common::Result<LegsExtra> LegsExtraPerOp(const Workload& w, const LegCosts& mode,
                                         const LegCosts& sys);

// The baseline first (`sys`: sys or smb-plain, LegCosts of BaselineOf each
// of `modes`), then each of `modes` (the baseline in `modes` is not
// repeated); an error names a mode of the other protocol.
common::Result<std::vector<ModePrediction>> PredictWorkload(const Workload& w,
                                                            const Environment& env,
                                                            const LegCosts& sys,
                                                            const std::vector<LegCosts>& modes);

}  // namespace secmode::sim

#endif  // SECMODE_SIM_WORKLOAD_MODEL_H_
