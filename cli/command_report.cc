// `secmode report DIR`: draws report.md, report.html, micro.csv and the plots again from
// a saved run's results.json (render/run_dir.h).
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "common/format.h"
#include "harness/results.h"
#include "render/report.h"
#include "render/run_dir.h"

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
    auto files = render::RenderSavedRun(args->dir, args->out_dir);
    if (!files.ok()) Fail("report", files.status());
    for (const auto& w : files->warnings) {
      std::cerr << "secmode report: " << common::TerminalText(w) << "\n";
    }
    const std::string out = args->out_dir.empty() ? args->dir : args->out_dir;
    std::cout << "wrote";
    for (const auto& f : files->written) std::cout << " " << out << "/" << f;
    std::cout << "\n";
  });
  return cmd;
}

}  // namespace secmode::cli
