// Renderers: everything a person reads of a run, drawn from its results
// (harness::RunResults as read from results.json) and from nothing else, so
// `secmode report DIR` draws the same report again from a saved run.
//
//   report.md   machine and method, the micro tables with ratios taken within
//               the run, the bounds, then one part per section present in
//               RunResults::sections (render/report_<section>.cc)
//   report.html report.md as one self-contained page, plots inline
//   micro.csv   one row per micro measurement
//   *.svg       plots (the nconnect sweep), when gnuplot is installed
//
// A plot that cannot be drawn is said so in the report and in `warnings`;
// the numbers are in the tables either way. A run that was interrupted
// (entries of `errors` with "interrupted") says so at the top of report.md.
#ifndef SECMODE_RENDER_REPORT_H_
#define SECMODE_RENDER_REPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "harness/results.h"

namespace secmode::render {

// The section `secmode trace FILE --out DIR` writes: the trace's JSON
// (trace/rpc_trace.h TraceJson), the run's only section, and no micro rows
// (its report has no table of legs).
inline constexpr const char* kTraceSection = "trace";

struct Rendered {
  std::string report_md;
  std::string report_html;  // report.md as one page (render/report_html.h); "" if not drawn
  std::string micro_csv;
  std::vector<std::pair<std::string, std::string>> files;  // plots: name -> contents
  std::vector<std::string> warnings;
};

// Fails (kCorrupt, naming the value) when a section holds a value of the
// wrong type. A key of RunResults::sections that no renderer draws (a
// results.json from a newer secmode) is named in a note at the end of
// report.md and in `warnings`; the rest is drawn.
common::Result<Rendered> RenderRun(const harness::RunResults& results);
// The suite sections (suite/section.h) the report draws, in report order:
// "micro" from its rows (RunResults::micro), every other from its object in
// RunResults::sections.
std::vector<std::string> DrawnSections();
// Whether the results hold rows of sections whose settings are missing
// (results.json from before `sections` existed), so RenderRun cannot draw
// those parts.
bool HasUndrawnRows(const harness::RunResults& results);

std::string MicroCsv(const harness::RunResults& results);
// A short plain-text table for the terminal: per mode and size, the four
// legs' round trip, request MB/s and the ratio to sys.
std::string SummaryTable(const harness::RunResults& results);
// The README's headline (`secmode report --headline DIR`, `make readme`):
// per mode of the run, the round trip at 4 KiB with its ratio to the
// baseline (sys for NFS modes, smb-plain for SMB modes, both from the same
// run) and the request MB/s at 1 MiB, then the machine, commit and noise
// that made them. Sizes the run lacks are "-".
std::string HeadlineMarkdown(const harness::RunResults& results);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_H_
