// Strings from results.json in Markdown. results.json is untrusted (it may
// come from another machine: SECURITY.md), and report.md is read as it is
// and drawn into report.html, so every string of it that reaches report.md
// goes through one of these: it then stays one piece of text on its line,
// in its table cell, and can start no link, image, HTML or code span.
#ifndef SECMODE_RENDER_MARKDOWN_H_
#define SECMODE_RENDER_MARKDOWN_H_

#include <string>

namespace secmode::render {

// `s` as Markdown text reading exactly `s`: control characters (newline,
// carriage return, tab, ESC, C1, ...: common::TerminalText, as report.md and
// compare --markdown are also printed to terminals) a space, and every character Markdown or a GFM
// table would read as syntax (\ ` * _ [ ] < > | ! & ~ #) escaped with a
// backslash.
std::string MdText(const std::string& s);

// `s` as a code span outside a table (a paragraph, a list item): control
// characters a space, fenced with more backquotes than the longest run of
// them in `s`.
std::string MdCode(const std::string& s);
// The same in a table cell, | escaped too (GFM reads \| as | in a cell,
// also inside code; outside a table it would show the backslash).
std::string MdCodeCell(const std::string& s);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_MARKDOWN_H_
