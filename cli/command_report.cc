// `secmode report DIR`: draws report.md, report.html, micro.csv and the plots again from
// a saved run's results.json (render/run_dir.h).
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/run_directory.h"
#include "harness/results.h"
#include "render/report.h"

namespace secmode::cli {

namespace {

struct ReportArgs {
  std::string dir, out_dir;
  bool headline = false;
};

}  // namespace

CLI::App* AddReportCommand(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Draw report.md, report.html, micro.csv and the plots again from a saved run's results.json "
      "(from any secmode run, on any machine)");
  cmd->add_option("DIR", args->dir, "A run directory holding results.json")->required();
  cmd->add_option("--out", args->out_dir, "Where to write the files (default: DIR itself)");
  cmd->add_flag("--headline", args->headline,
                "Print the README's headline table from DIR's results.json (Markdown on stdout; "
                "`make readme` puts the reference run's into README.md) and write nothing");
  cmd->callback([args] {
    if (args->headline) {
      if (!args->out_dir.empty()) FailUsage("report", "--headline writes no files: drop --out");
      auto results = harness::ReadResultsFile(args->dir);
      if (!results.ok()) Fail("report", results.status());
      std::cout << render::HeadlineMarkdown(*results);
      return;
    }
    PrintWritten("wrote", RenderSavedRunOrFail("report", args->dir, args->out_dir));
  });
  return cmd;
}

}  // namespace secmode::cli
