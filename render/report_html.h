// report.html: report.md as one self-contained page a person would rather
// read. The page is drawn from report.md and the plot files alone (so it
// says exactly what the Markdown says): the Markdown is rendered by
// cmark-gfm (GitHub's CommonMark with its table extension, Debian
// libcmark-gfm-dev), each image of a plot file is replaced by that SVG
// inline (its ids prefixed per plot, so plots never share an id), every
// table is sortable by clicking a column's header (a few lines of inline
// script: numbers as numbers, "-" and empty cells last), and nothing is
// fetched from a network: no fonts, styles or scripts from elsewhere. An
// image that is not a plot file is shown as its URL, and the page's
// Content-Security-Policy forbids every load and every script but its own
// (report.md's strings may come from an untrusted results.json).
// A plot the run could not draw is said so where it would be.
#ifndef SECMODE_RENDER_REPORT_HTML_H_
#define SECMODE_RENDER_REPORT_HTML_H_

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace secmode::render {

// `plots`: file name -> contents, as Rendered::files holds them (only the
// .svg ones are inlined). Fails only when cmark-gfm cannot be set up.
common::Result<std::string> HtmlReport(
    const std::string& report_md, const std::vector<std::pair<std::string, std::string>>& plots);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_HTML_H_
