// `secmode compare A B`: two sides of saved runs, B against A, with a
// verdict per row from the variation between runs (harness/compare_runs.h),
// drawn as a terminal table or Markdown (render/report_compare.h); and
// `secmode noise`, the A/A test of those verdicts (harness/aa_test.h).
#include <iostream>
#include <memory>
#include <optional>

#include "cli/cli.h"
#include "common/format.h"
#include "harness/aa_test.h"
#include "harness/compare_runs.h"
#include "harness/results.h"
#include "render/report_compare.h"
#include "render/report_noise.h"
#include "render/run_dir.h"

namespace secmode::cli {
namespace {

struct CompareArgs {
  std::string a, b;
  double alpha = 0.05;
  bool markdown = false;
  std::string noise;  // a noise.json of `secmode noise`; "" = none
};

struct NoiseArgs {
  harness::AaOptions o;
  size_t rows = 10;
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
      "do, so one run a side gets 'too few runs' (with --noise, also whether its change lies "
      "beyond the run-to-run noise an A/A test measured on this machine). Rows on one side "
      "only are listed");
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
  cmd->add_option("--noise", args->noise,
                  "The noise.json of `secmode noise` (an A/A test on this machine): each row "
                  "with a side of one run is told whether B/A lies beyond the run-to-run noise "
                  "measured there (the row's own, else its table's noisiest), a hint and no "
                  "verdict; a warning where it was measured on another machine or build");
  cmd->callback([args] {
    // The noise.json first: a bad one is refused before the runs are read.
    std::optional<harness::NoiseFile> noise;
    if (!args->noise.empty()) {
      auto n = harness::ReadNoiseFile(args->noise);
      if (!n.ok()) Fail("compare", n.status().Annotate("--noise"));
      noise = std::move(n).value();
    }
    auto a = harness::ReadRunSet(args->a);
    if (!a.ok()) Fail("compare", a.status().Annotate("A"));
    auto b = harness::ReadRunSet(args->b);
    if (!b.ok()) Fail("compare", b.status().Annotate("B"));
    auto c = harness::CompareRuns(*a, *b, args->alpha);
    if (!c.ok()) Fail("compare", c.status());
    if (noise) harness::AddNoise(*noise, *a, *b, &*c);
    std::cout << (args->markdown ? render::CompareMarkdown(*c) : render::CompareText(*c));
  });
  return cmd;
}

CLI::App* AddNoiseCommand(CLI::App& app) {
  auto args = std::make_shared<NoiseArgs>();
  CLI::App* cmd = app.add_subcommand(
      "noise",
      "The A/A test of secmode on this machine: one `secmode run` made 2N times as separate "
      "processes, alternately into side A and side B, then compared as `secmode compare` does. "
      "Nothing differs between the sides, so every 'faster' or 'slower' is a false positive: "
      "prints their rate, each table's run-to-run spread and the change two single runs must "
      "show to stand out of it, and how many nconnect validation points kept their verdict "
      "from run to run and how many turned it over (agrees to disagrees or back); writes "
      "OUT/a/NN and OUT/b/NN (the runs) and OUT/noise.json, which `secmode run --publish` "
      "attaches to the run you publish");
  cmd->add_option("RUN_ARGS", args->o.run_args,
                  "Arguments of `secmode run` after `--` (default: --quick), e.g. `secmode "
                  "noise -- --quick --modes sys,krb5p`; never --out");
  cmd->add_option("--runs-per-side", args->o.runs_per_side,
                  "Runs of each side (at least 2; 3 or more find changes of a few percent)")
      ->default_val(3)
      ->check(CLI::Range(2, 20));
  cmd->add_option("--alpha", args->o.alpha, "Significance level of compare's test (1e-4 to 0.5)")
      ->default_val(0.05)
      ->check(CLI::Range(1e-4, 0.5));
  cmd->add_option("--out", args->o.out,
                  "A new directory for the runs and noise.json (default: "
                  "results/runs/<UTC timestamp>-<hostname>-noise)");
  cmd->add_option("--rows", args->rows, "How many of the noisiest rows to list")
      ->default_val(10)
      ->check(CLI::Range(0, 1000));
  cmd->callback([args] {
    if (args->o.run_args.empty()) args->o.run_args = {"--quick"};
    if (args->o.out.empty()) args->o.out = render::DefaultOutDir() + "-noise";
    auto r = harness::RunAaTest(args->o);
    if (!r.ok()) Fail("noise", r.status());
    std::cout << render::NoiseText(*r, args->rows) << "\nRuns and noise.json in "
              << common::TerminalText(args->o.out) << "\n";
  });
  return cmd;
}

}  // namespace secmode::cli
