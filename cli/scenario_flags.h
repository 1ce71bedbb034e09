// The flags of `secmode nconnect` that map 1:1 onto sim::Scenario fields,
// each carrying the name Scenario::Validate uses in its messages, and the
// enum fields' names (--reaction, --op, ...) resolved.
#ifndef SECMODE_CLI_SCENARIO_FLAGS_H_
#define SECMODE_CLI_SCENARIO_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>

#include "common/status.h"
#include "sim/scenario.h"

namespace secmode::cli {

struct ScenarioFlags {
  sim::Scenario s;
  std::string reaction = "drop-disconnect", op = "read", jitter_dist = "exponential",
              service_dist = "exponential", skew_where = "client", server_order = "arrival",
              preempt_victim = "longest";
};

// Adds --connections ... --duration-ns, every field of the scenario, its
// default the flag's.
void AddScenarioFlags(CLI::App* cmd, ScenarioFlags& flags);

// The scenario with its enum fields from their names, then validated
// (Scenario::Validate); fails naming the flag or field.
common::Result<sim::Scenario> ResolveScenario(const ScenarioFlags& flags);

}  // namespace secmode::cli

#endif  // SECMODE_CLI_SCENARIO_FLAGS_H_
