// `secmode compare A B`: two sides of saved runs, B against A, with a
// verdict per row from the variation between runs (harness/compare_runs.h),
// drawn as a terminal table or Markdown (render/report_compare.h).
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "harness/compare_runs.h"
#include "harness/results.h"
#include "render/report_compare.h"

namespace secmode::cli {
namespace {

struct CompareArgs {
  std::string a, b;
  double alpha = 0.05;
  bool markdown = false;
};

}  // namespace

CLI::App* AddCompareCommand(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two sides of saved runs row by row: B's figure over A's with its confidence "
      "interval, and a verdict (faster / slower / no significant difference) from Welch's t "
      "test over the runs' figures. A verdict needs 2 or more runs a side (3 or more to find "
      "changes of a few percent): the repetitions inside one run vary less than separate runs "
      "do, so one run a side gets 'too few runs'. Rows on one side only are listed");
  cmd->add_option("A", args->a,
                  "The first side: a run directory or its results.json, or a folder of run "
                  "directories (a set of runs)")
      ->required();
  cmd->add_option("B", args->b, "The second side, compared against A (the same forms)")->required();
  cmd->add_option("--alpha", args->alpha, "Significance level of the test (1e-4 to 0.5)")
      ->default_val(0.05)
      ->check(CLI::Range(1e-4, 0.5));
  cmd->add_flag("--markdown", args->markdown,
                "Print Markdown (headings and tables per kind of row) instead of the terminal "
                "table");
  cmd->callback([args] {
    auto a = harness::ReadRunSet(args->a);
    if (!a.ok()) Fail("compare", a.status().Annotate("A"));
    auto b = harness::ReadRunSet(args->b);
    if (!b.ok()) Fail("compare", b.status().Annotate("B"));
    auto c = harness::CompareRuns(*a, *b, args->alpha);
    if (!c.ok()) Fail("compare", c.status());
    std::cout << (args->markdown ? render::CompareMarkdown(*c) : render::CompareText(*c));
  });
  return cmd;
}

}  // namespace secmode::cli
