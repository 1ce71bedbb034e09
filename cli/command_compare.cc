// `secmode compare A B`: two saved runs side by side, B against A, with a
// verdict per row from the repetitions (harness/compare_runs.h), drawn as
// a terminal table or Markdown (render/report_compare.h).
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
      "Compare two saved runs row by row: B's figure over A's, and for the micro figures (and "
      "the end-to-end rows that ran in rounds: their runs' ops/s) the two-sided Mann-Whitney U "
      "test over their repetitions (faster / slower / no significant difference; too few "
      "repetitions below 5 a side); rows in one run only are listed");
  cmd->add_option("A", args->a, "The first run: a run directory or its results.json")->required();
  cmd->add_option("B", args->b, "The second run, compared against A")->required();
  // ALGLIB's U test reports no p below 1e-4: a smaller alpha could never be met.
  cmd->add_option("--alpha", args->alpha, "Significance level of the U test (1e-4 to 0.5)")
      ->default_val(0.05)
      ->check(CLI::Range(1e-4, 0.5));
  cmd->add_flag("--markdown", args->markdown,
                "Print Markdown (headings and tables per kind of row) instead of the terminal "
                "table");
  cmd->callback([args] {
    auto a = harness::ReadResultsFile(args->a);
    if (!a.ok()) Fail("compare", a.status().Annotate("A"));
    auto b = harness::ReadResultsFile(args->b);
    if (!b.ok()) Fail("compare", b.status().Annotate("B"));
    auto c = harness::CompareRuns(*a, *b, args->alpha);
    if (!c.ok()) Fail("compare", c.status());
    std::cout << (args->markdown ? render::CompareMarkdown(*c) : render::CompareText(*c));
  });
  return cmd;
}

}  // namespace secmode::cli
