// Attribution of sequence-window violations on real sockets: every call the
// server found below its window (rpc/call_trace.h, verdict kBelowWindow) is
// joined with the client's record of the same call (context, sequence
// number), and its path is cut into four stages:
//
//   encode   numbered -> queued    the numbering thread sealed the call
//   hold     queued   -> written   the call waited in the client: in the
//                                  receiver's batch until the batch was
//                                  flushed, or in the skewed connection's
//                                  delay line
//   socket   written  -> read      the call waited in the connection's socket
//                                  until the server's thread read it
//   check    read     -> checked   the server's thread got to it within the
//                                  records of that read
//
// Each stage is compared with the same stage of every traced call (its
// median): the stage with the largest excess is the violation's cause, named
// with the thread that owned the call there (the client thread that numbered
// or wrote it, the server connection's thread). A call was held while newer
// numbers overtook it; the excess says where and for how long.
#ifndef SECMODE_SUITE_NCONNECT_ATTRIBUTION_H_
#define SECMODE_SUITE_NCONNECT_ATTRIBUTION_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rpc/call_trace.h"

namespace secmode::suite {

struct ViolationCause {
  std::string stage;   // encode, hold, socket, check
  std::string thread;  // e.g. "client receiver", "client sender", "server connection thread"
  int64_t count = 0;
  double median_excess_us = 0, max_excess_us = 0;  // over the stage's median of all calls
  double median_lag = 0;                           // how far below the highest number
};

struct Attribution {
  int64_t calls = 0;                         // checked calls traced
  int64_t violations = 0;                    // below the window
  int64_t matched = 0;                       // violations whose client record was found
  double stage_median_us[4] = {0, 0, 0, 0};  // encode, hold, socket, check of all calls
  double stage_p99_us[4] = {0, 0, 0, 0};
  std::vector<ViolationCause> causes;  // largest count first
  uint64_t dropped_events = 0;         // the trace ran out of room
  nlohmann::json ToJson() const;
};

Attribution AttributeViolations(const rpc::CallTrace& trace);

// How the connections the server closed were replaced, under the run's load:
// the connection events (rpc/call_trace.h) of each client reconnect, joined
// through the first call written on the new connection (and the last one
// written on the old) with the server's events of the same calls. The steps:
//
//   close -> eof             the server shut the old connection; the client's
//                            receiver read the end of its stream
//   eof -> connected         the new connection's connect returned
//   connected -> accepted    the server's accept returned it (negative when
//                            the accept ran first)
//   accepted -> started      its server thread began to run
//   eof -> resent            the lost calls were numbered and written again
//   eof -> first checked     the first call written on the new connection
//                            was checked by the server: the connection's
//                            outage as the server sees it
struct SetupStep {
  std::string name;
  int64_t count = 0;  // reconnects where both ends of the step were recorded
  double median_us = 0, p90_us = 0;
  nlohmann::json ToJson() const;
};

struct ReconnectTimes {
  int64_t reconnects = 0;  // end-of-stream reads by client receivers
  std::vector<SetupStep> steps;
  nlohmann::json ToJson() const;
};

ReconnectTimes AttributeReconnects(const rpc::CallTrace& trace);

// How long the context re-creations of a traced run took under its load:
// from a receiver beginning the GSS exchange (holding the context's lock,
// so the other receivers that need the context wait) to the new context.
// The step is named "began -> done".
SetupStep AttributeRecreations(const rpc::CallTrace& trace);

// How the client's receivers went on after each re-creation: from the new
// context (a re-creation's "done") to each receiver's first call numbered
// after it, every receiver that numbered one before the next re-creation
// began, pooled over the run's re-creations. The receivers that waited for
// the context's lock meanwhile take it one after another (a mutex wakes one
// waiter per release); sim::Scenario::context_lock_wakes_one models that.
// The step is named "done -> each receiver's first call".
SetupStep AttributeResumes(const rpc::CallTrace& trace);

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_NCONNECT_ATTRIBUTION_H_
