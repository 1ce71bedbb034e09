// The real side of the nconnect validation (suite/nconnect_validation.h) on
// loopback, shared by its calibration and its point runner: the RPCSEC_GSS
// mode it runs, a fresh in-process server with a window and a reaction, and
// one run's CPU per call at each end. Internal to suite/nconnect_validation_*.cc.
//
// Thread safety: as suite/nconnect_validation.h (one validation at a time).
#ifndef SECMODE_SUITE_NCONNECT_VALIDATION_LOOPBACK_H_
#define SECMODE_SUITE_NCONNECT_VALIDATION_LOOPBACK_H_

#include <cstdint>
#include <string>

#include "common/status.h"
#include "gss/protector.h"
#include "harness/local_rpc.h"
#include "harness/modes.h"
#include "rpc/load.h"
#include "rpc/nfs.h"
#include "sim/scenario.h"
#include "suite/nconnect_validation.h"

namespace secmode::suite::loopback {

// The RPCSEC_GSS mode of ValidationOptions::mode: its family, engine and enctype.
struct Gss {
  rpc::Security family = rpc::Security::kKrb5;
  gss::Engine engine = gss::Engine::kMit;
  int32_t enctype = 0;
};

common::Result<Gss> ParseGss(const ValidationOptions& o);

// A fresh in-process server on loopback with `window` and `reaction`, its
// threads' scheduling counted; `trace` (may be null) records every call.
common::Result<harness::LocalRpcServer> StartServer(harness::ModeEnvironment& env, const Gss& g,
                                                    int64_t window, rpc::WindowPolicy reaction,
                                                    int workers, rpc::CallTrace* trace = nullptr);

// CPU per call of each end of a run, from the threads' own CPU time.
struct PerCall {
  double client_ns = 0, server_ns = 0, ops_per_s = 0, p50_ns = 0;
  double client_reads = 0, server_reads = 0;  // socket reads per call, each end
  double sender_ns = 0;  // the delay-line thread's CPU per call it wrote (with a skew)
  int reruns = 0;        // runs made again for the hypervisor's share (kCalmSteal)
};

// kCalmSteal: whether attempt `attempt` of a real run is made again, the
// hypervisor having taken too much of it.
bool RunAgain(const rpc::LoadReport& r, int attempt);

// One run of `family` (sys or the krb5 mode) against a fresh server whose
// window is wider than the slots, so no call can fall out of it, with
// connection 0's sends held `skew_ns` as the point's are, for `seconds` and
// at least kPerCallMinCalls calls (AtLeastCalls); the server is stopped
// before its threads' CPU time is read.
common::Result<PerCall> MeasurePerCall(harness::ModeEnvironment& env, const Gss& g,
                                       rpc::Security family, int connections, int slots,
                                       bool per_connection_context, rpc::NfsOp op, uint32_t size,
                                       double seconds, int64_t skew_ns = 0);

// A run's `seconds` is how long it measures, not a deadline for its
// replies: on a loaded machine a short run may see no reply in its time,
// which would fail it ("no reply ... in N ms") and with it the whole
// validation. Such a run goes on past `seconds` until `calls` were answered
// after its warm-up, for at most kRunDeadlineSeconds in all; only a run
// answered nothing by then fails (a wedged server).
inline constexpr double kRunDeadlineSeconds = 10;
void AtLeastCalls(rpc::LoadOptions& lo, uint64_t calls);

// Calls each MeasurePerCall run answers at least (AtLeastCalls).
inline constexpr uint64_t kPerCallMinCalls = 100;

// The burst of the mode's load each timed context creation follows
// (Calibration::gss_setup_ns), on `lo`'s server, security and contexts:
// Calibration::kGssSetupBurstConnections connections with
// kGssSetupBurstSlots calls outstanding, a 4 KiB READ, for at least
// kGssSetupBurstSeconds and until every slot's call was answered once. Its
// purpose is to leave the load's work behind on the server's threads, so its
// length is no deadline (AtLeastCalls): a server slower than the burst
// lengthens it.
common::Result<rpc::LoadReport> RunSetupBurst(const rpc::LoadOptions& lo);

}  // namespace secmode::suite::loopback

#endif  // SECMODE_SUITE_NCONNECT_VALIDATION_LOOPBACK_H_
