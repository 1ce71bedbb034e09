// `secmode merge DIR... --out DIR`: the shards of one nconnect sweep or
// validation (`secmode nconnect --sweep|--validate --shard I/N`, on one
// machine or many), or one `secmode run` per host, joined into one run
// directory (suite/merge.h), written and drawn as any run directory.
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/run_directory.h"
#include "harness/results.h"
#include "suite/merge.h"

namespace secmode::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> shards;
  std::string out_dir;
};

}  // namespace

CLI::App* AddMergeCommand(CLI::App& app) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Join runs made on many machines into one run directory: the shards of one nconnect "
      "sweep or validation (`secmode nconnect --sweep|--validate --shard I/N`, a directory "
      "each, on any hosts) into the whole grid, in grid order (a validation's rows each keep "
      "the host that measured them), or one `secmode run` per host into one report of their "
      "end-to-end rows side by side (ratios within each host); each shard's or host's "
      "machine, time and figures are listed");
  cmd->add_option("DIR", args->shards,
                  "The shards' or hosts' run directories (or results.json files)")
      ->required();
  cmd->add_option("--out", args->out_dir, "Where to write the merged run")->required();
  cmd->callback([args] {
    std::vector<harness::RunResults> shards;
    for (const auto& path : args->shards) {
      auto r = harness::ReadResultsFile(path);
      if (!r.ok()) Fail("merge", r.status());
      shards.push_back(std::move(*r));
    }
    auto merged = suite::MergeRuns(shards);
    if (!merged.ok()) Fail("merge", merged.status());
    merged->results.command = CommandLine();
    const std::vector<std::string> written =
        WriteRunDirectoryOrFail("merge", args->out_dir, merged->results);
    PrintWritten("merged " + std::to_string(shards.size()) + " " +
                     (merged->kind == suite::MergeKind::kHostRuns ? "hosts' runs" : "shards") +
                     " (" + suite::MergeKindName(merged->kind) + "), " +
                     std::to_string(merged->rows) + " rows; results:",
                 written);
  });
  return cmd;
}

}  // namespace secmode::cli
