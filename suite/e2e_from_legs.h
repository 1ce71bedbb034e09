// What the measured legs predict for an end-to-end row, set beside what the
// row measured: the per-call CPU demand of a security mode (the demand the
// workload model builds on).
//
// The model, one line: a call of mode M costs the CPU a sys call of the same
// op, size and load costs end to end (the machine's busy CPU time over the
// calls of a sys run in the same run: client, server, kernel, everything
// that is not security; the sys run just before each of the row's runs
// where the section made them, else the sys row's median run over the row
// and its `repeats`), plus, for each of the four legs (client-seal,
// server-open, server-seal, client-open), M's cost minus sys's cost of that
// leg (micro rows, one thread, same enctype and engine) at the payload of
// the message it protects: the call's for client-seal and server-open (a
// WRITE's data, else none), the reply's for the other two (a READ's data,
// else none), each looked up as the workload model does (sim::LegsExtraAt:
// linear between measured sizes, the smallest size's cost below it). The predicted ops/s is the
// row's busy CPU time (logical CPUs x (1 - idle - steal), as measured during the row) over that CPU
// per call. A row whose server dropped calls at its window and that ran again against a server with
// a window nothing fell out of (row.wide_window, suite/section_e2e.cc) is predicted on both runs:
// the second is the call path's own rate, the gap between them what the drops and the resends after
// them cost. A row of an engine that serialises a context's calls (MIT's) may also have
// run with a context per connection against that server (row.context_per_connection):
// predicted the same way, it is the call path's rate without the engine's serialisation.
// Rows one call at a time (latency, not CPU, bounds them) and rows against another
// server (its CPU is not secmode's legs) are left out.
#ifndef SECMODE_SUITE_E2E_FROM_LEGS_H_
#define SECMODE_SUITE_E2E_FROM_LEGS_H_

#include <nlohmann/json.hpp>
#include <vector>

#include "harness/results.h"

namespace secmode::suite {

// |measured / predicted - 1| at most this: the prediction holds.
inline constexpr double kLegsPredictionTolerance = 0.15;

// One row per e2e row of a krb5 family with a sys baseline and micro rows
// for every leg it needs. The baseline (`sys_baseline` says which):
//  - where the row has `sys_just_before` (suite/section_e2e.cc: a sys run
//    of the same load just before each of its runs), each run is predicted
//    from the sys run of its round, and the row's figures are its median
//    pair's (lower middle by measured/predicted; `pairs`,
//    measured_over_predicted_range [min, max]): a run and its baseline come
//    from the same stretch of the machine's state; window, server_window_drops,
//    timeouts and `round` are then that pair's run's; a control with no pair
//    is set against the row's prediction (`sys_baseline` says so);
//  - else the median run of the sys row with the same op, size and load.
// Fields: mode, enctype, engine, op, size, connections, slots,
// call_payload, reply_payload, sys_baseline, sys_cpu_ns_per_call (the
// median pair's sys run, or the sys row's median), sys_runs,
// sys_cpu_ns_per_call_range [min, max], crypto_threads (the row's: "serialised" where one context's
// calls waited for each other), legs_extra_ns, predicted_cpu_ns_per_call,
// measured_cpu_ns_per_call (the median pair's run, or the row's own
// figure: the section makes it its median run's), runs, measured_cpu_ns_per_call_range [min, max] (over
// the row and its repeats), predicted_ops_per_second,
// measured_ops_per_second, measured_over_predicted, within, window,
// server_window_drops, timeouts, call_path_within (on the wide-window run
// when there is one) and, when there is, wide_window {window,
// server_window_drops, measured_cpu_ns_per_call, runs,
// measured_cpu_ns_per_call_range, predicted_ops_per_second,
// measured_ops_per_second, measured_over_predicted, within; paired by
// round with the row's sys runs when it has them, with the paired fields
// above}, and context_per_connection {the same fields} when that run was
// made. A row that
// lacks what it needs is left out (`skipped` lists each with the reason).
struct LegsPrediction {
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json skipped = nlohmann::json::array();
};
LegsPrediction PredictE2eFromLegs(const std::vector<harness::MicroRow>& micro,
                                  const nlohmann::json& e2e, int logical_cpus);

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_E2E_FROM_LEGS_H_
