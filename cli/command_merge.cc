// `secmode merge DIR... --out DIR`: the shards of one nconnect sweep
// (`secmode nconnect --sweep --shard I/N`, on one machine or many) joined
// into the run the whole grid makes (suite/nconnect_sweep.h), written and
// drawn as any run directory.
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "harness/results.h"
#include "render/run_dir.h"
#include "suite/nconnect_sweep.h"

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
      "Join the shards of one nconnect sweep (`secmode nconnect --sweep --shard I/N` into a "
      "directory each, on any hosts) into one run directory: the rows in grid order, as the "
      "unsharded sweep gives them, and each shard's host, simulator speed and wall time");
  cmd->add_option("DIR", args->shards, "The shards' run directories (or results.json files)")
      ->required();
  cmd->add_option("--out", args->out_dir, "Where to write the merged run")->required();
  cmd->callback([args] {
    std::vector<harness::RunResults> shards;
    for (const auto& path : args->shards) {
      auto r = harness::ReadResultsFile(path);
      if (!r.ok()) Fail("merge", r.status());
      shards.push_back(std::move(*r));
    }
    auto merged = suite::MergeSweepShards(shards);
    if (!merged.ok()) Fail("merge", merged.status());
    merged->command = CommandLine();
    auto files = render::WriteRunDirectory(args->out_dir, *merged);
    if (!files.ok()) Fail("merge", files.status());
    for (const auto& w : files->warnings) std::cerr << "secmode merge: " << w << "\n";
    std::cout << "merged " << shards.size() << " shards, " << merged->nconnect.size()
              << " rows; results:";
    for (const auto& f : files->written) std::cout << " " << args->out_dir << "/" << f;
    std::cout << "\n";
  });
  return cmd;
}

}  // namespace secmode::cli
