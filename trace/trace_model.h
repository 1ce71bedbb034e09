// From a trace to the nconnect model (`secmode trace FILE --simulate`): the
// scenario a capture shows for its busiest RPCSEC_GSS context, the
// simulator run on it, and the simulated lags and would-be drops beside the
// trace's.
//
// The scenario (sim/scenario.h) is taken from the trace where the trace
// tells it, every other parameter from `base` (what the caller gives or
// measured: the thread model's cores and scheduler, the crypto cost), and
// each choice is stated as an assumption with what it rests on:
//   nconnect  the most of the context's connections open at once
//   slots     the slot ids its connections' NFSv4.1 session used where
//             SEQUENCE is in clear, else the most of its calls in flight
//             as one was sent (a call never answered counts until its
//             connection ends)
//   rtt_ns    the medians of the handshakes' two gaps added (on either side
//             one of them holds the round trip), else `base`'s
//   service   exponential, with the median response time of the busiest
//             operation of its mode (over every context of that mode) at
//             the capture point, less the round trip where the capture is
//             not the server's (the server's crypto, queueing and the
//             reply's transfer included, which the model adds again)
//   op, io    read or write by which direction carries more of that
//             operation's bytes, less the framing (kRequestOverhead ...)
//   skew      a connection whose calls lag at least twice as far as the
//             others' on average holds each call back by the extra lag
//             times the context's mean gap between calls
//   window    the one its server announced where the INIT's reply was
//             captured, else the one given, else 128 (Linux nfsd's)
//   reaction  discard-context after context-problem replies, else
//             drop-disconnect where the server ended connections with
//             calls outstanding, else drop where calls were sent again or
//             never answered on connections that ended, else
//             drop-disconnect (Linux nfsd's)
//   and the retransmit timeout, re-encode at transmit, the crypto cost,
//   jitter and bandwidth as `base` has them (a capture does not show
//   them), stated too.
//
// The model's lags (sim::ScenarioResult::sent_lags) are in the client's
// order of sending, counted as each transmission begins; a server's capture
// has the order of arrival, which differs by the network's jitter between
// connections. The lags as the server checked them (checked_lags) include
// its threads' reordering after arrival, which no capture shows: their count
// below the server's window is the estimate of the drops the server itself
// counted. Each model count is scaled to the context's calls by the calls it
// counted (transmissions, or calls checked).
//
// Thread safety: none (the trace's distributions compact when read).
#ifndef SECMODE_TRACE_TRACE_MODEL_H_
#define SECMODE_TRACE_TRACE_MODEL_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/recommend.h"
#include "sim/scenario.h"
#include "trace/rpc_trace.h"

namespace secmode::trace {

// One parameter of the scenario and what it rests on.
struct TraceAssumption {
  std::string parameter, value, from;
};

struct TraceScenario {
  size_t context = 0;  // into RpcTrace::contexts
  sim::Scenario scenario;
  std::vector<TraceAssumption> assumptions;
  double calls_per_s = 0;  // the context's DATA calls over its connections' time
};

inline constexpr uint32_t kAssumedWindow = 128;
inline constexpr int64_t kMaxModelOps = 200000;  // simulated calls per seed, at most

// The scenario of the busiest context. `window` is the one given (0: none).
// An error when no context carried DATA calls, or their replies are not in
// the capture (kInvalidArgument, saying what is missing).
common::Result<TraceScenario> ScenarioFromTrace(RpcTrace& t, CaptureSide side, uint32_t window,
                                                const sim::Scenario& base);

// The model run on it with `seeds` seeds (1, 2, ...), and the recommendation
// for the same traffic when `recommend`.
struct TraceModel {
  TraceScenario from;
  std::vector<sim::ScenarioResult> runs;  // one per seed
  bool recommended = false;
  sim::Recommendation recommendation;
};
common::Result<TraceModel> ModelTrace(TraceScenario from, int seeds, bool recommend);

// The model beside the trace (section "model" of the trace's JSON): the
// assumptions, the scenario, the lags (p50, p99, max) and the calls each of
// `windows` would have dropped, in the capture and in the model as sent and
// as checked (the simulated counts scaled to the context's calls, lowest
// and highest over the seeds), the estimate of the server's own drops at
// its window, the rates, and the recommendation. Every string is made here
// or by sim/ (names, numbers, hex): nothing of the capture as text.
nlohmann::json TraceModelJson(RpcTrace& t, const TraceModel& m,
                              const std::vector<uint32_t>& windows);
// That JSON as lines for the terminal.
std::string TraceModelText(const nlohmann::json& model);

}  // namespace secmode::trace

#endif  // SECMODE_TRACE_TRACE_MODEL_H_
