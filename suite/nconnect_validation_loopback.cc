// The real side of the nconnect validation on loopback
// (suite/nconnect_validation_loopback.h).
#include "suite/nconnect_validation_loopback.h"

#include <algorithm>

#include "gss/enctype.h"
#include "rpc/server_core.h"
#include "rpc/tcp_server.h"

namespace secmode::suite::loopback {

using common::Result;
using common::Status;

Result<Gss> ParseGss(const ValidationOptions& o) {
  SECMODE_ASSIGN_OR_RETURN(harness::ModeName name, harness::ParseModeName(o.mode));
  const Result<harness::RpcMode> m = harness::RpcModeOf(name);
  if (!m.ok() || !m->kerberos()) {
    return Status::InvalidArgument("nconnect validation needs an RPCSEC_GSS mode (krb5, krb5i, " +
                                   std::string("krb5p), got '") + o.mode + "'");
  }
  return Gss{m->security, m->engine, m->enctype};
}

Result<harness::LocalRpcServer> StartServer(harness::ModeEnvironment& env, const Gss& g,
                                            int64_t window, rpc::WindowPolicy reaction, int workers,
                                            rpc::CallTrace* trace) {
  rpc::ServerOptions so;
  so.engine = g.engine;
  so.window = static_cast<uint32_t>(window);
  so.policy = reaction;
  rpc::TcpServerOptions tcp;
  tcp.workers = workers;
  tcp.trace = trace;
  tcp.thread_scheduling = true;  // the threads' sleeps and waits beside the model's
  return harness::StartLocalRpcServer(env, true, so, tcp);
}

Result<rpc::LoadReport> RunSetupBurst(const rpc::LoadOptions& lo) {
  rpc::LoadOptions burst = lo;
  burst.op = rpc::NfsOp::kRead;
  burst.size = 4096;
  burst.connections = Calibration::kGssSetupBurstConnections;
  burst.slots = Calibration::kGssSetupBurstSlots;
  burst.warmup_seconds = 0;
  burst.seconds = Calibration::kGssSetupBurstSeconds;
  AtLeastCalls(burst, static_cast<uint64_t>(burst.slots));
  return rpc::RunLoad(burst);
}

void AtLeastCalls(rpc::LoadOptions& lo, uint64_t calls) {
  lo.min_ops = calls;
  lo.max_seconds = std::max(lo.seconds, kRunDeadlineSeconds - lo.warmup_seconds);
}

bool RunAgain(const rpc::LoadReport& r, int attempt) {
  return r.steal_fraction >= kCalmSteal && attempt < kCalmAttempts;
}

Result<PerCall> MeasurePerCall(harness::ModeEnvironment& env, const Gss& g, rpc::Security family,
                               int connections, int slots, bool per_connection_context,
                               rpc::NfsOp op, uint32_t size, double seconds, int64_t skew_ns) {
  const int64_t window = std::max<int64_t>(4096, int64_t{slots} * 8);
  rpc::LoadOptions lo;
  lo.security = family;
  lo.engine = g.engine;
  lo.enctype = g.enctype;
  lo.op = op;
  lo.size = size;
  lo.connections = connections;
  lo.slots = slots;
  lo.context_per_connection = per_connection_context;
  lo.seconds = seconds;
  lo.warmup_seconds = seconds / 4;
  AtLeastCalls(lo, kPerCallMinCalls);
  if (skew_ns > 0) {
    lo.skew_connection = 0;
    lo.skew_delay_us = static_cast<uint32_t>(skew_ns / 1000);
  }
  rpc::LoadReport r;
  rpc::ServerCounters counters;
  rpc::TcpServerStats stats;
  int reruns = 0;
  for (int attempt = 1;; ++attempt) {
    SECMODE_ASSIGN_OR_RETURN(auto server, StartServer(env, g, window, rpc::WindowPolicy::kDrop, 0));
    server.Aim(lo);
    SECMODE_ASSIGN_OR_RETURN(r, rpc::RunLoad(lo));
    server.server->Stop();
    counters = server.server->counters();
    stats = server.server->stats();
    if (!RunAgain(r, attempt)) break;
    ++reruns;
  }
  PerCall p;
  p.reruns = reruns;
  const double calls = static_cast<double>(counters.calls);
  p.client_ns = static_cast<double>(r.receivers.cpu_ns) / calls;
  p.server_ns = static_cast<double>(stats.threads.cpu_ns) / calls;
  p.client_reads = static_cast<double>(r.receiver_reads) / calls;
  p.server_reads = static_cast<double>(stats.reads) / calls;
  p.ops_per_s = r.ops_per_second;
  p.p50_ns = r.p50_us * 1e3;
  if (r.sender_calls > 0) {
    p.sender_ns = static_cast<double>(r.sender_cpu_ns) / static_cast<double>(r.sender_calls);
  }
  return p;
}

}  // namespace secmode::suite::loopback
