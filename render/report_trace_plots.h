// The plots of section "trace" (report_trace.cc): each RPCSEC_GSS context's
// lag as a distribution with the windows marked, its calls in flight over
// the capture's time, and the response times of the operations and SMB
// commands as distributions. Internal to render/.
#ifndef SECMODE_RENDER_REPORT_TRACE_PLOTS_H_
#define SECMODE_RENDER_REPORT_TRACE_PLOTS_H_

#include <nlohmann/json.hpp>
#include <string>

#include "render/report.h"

namespace secmode::render {

// The plots' Markdown (a heading, an image per plot drawn, or why one could
// not be), their SVG files added to `out`; empty when the section has
// nothing to plot. Every number is read as a number and every string from
// results.json reaches gnuplot only through GnuplotQuote.
std::string TracePlots(const nlohmann::json& section, Rendered& out);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_TRACE_PLOTS_H_
