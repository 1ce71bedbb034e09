// Plots with gnuplot (Debian package gnuplot-nox): a script and its data
// files run in a fresh private temporary directory, removed afterwards.
#ifndef SECMODE_RENDER_GNUPLOT_H_
#define SECMODE_RENDER_GNUPLOT_H_

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace secmode::render {

// Runs `script` (which names the `data` files relatively and writes
// `output`) and returns the contents of `output`. Unavailable when gnuplot
// is not installed; an error with gnuplot's own last lines when it fails.
common::Result<std::string> RunGnuplot(const std::string& script,
                                       const std::vector<std::pair<std::string, std::string>>& data,
                                       const std::string& output);

// `s` on one line: every control character (newline, carriage return, NUL,
// tab, DEL) a space. What a plot script or a data file may carry of a string
// from results.json, which is untrusted (SECURITY.md): gnuplot ends a line,
// and with it a quoted string or a data file's comment, at a newline, and
// runs or reads what follows as its own.
std::string GnuplotLine(const std::string& s);

// A gnuplot single-quoted string holding GnuplotLine(s) ('' for '). gnuplot
// neither substitutes backquotes nor expands @macros inside single quotes,
// so no string can run anything through it.
std::string GnuplotQuote(const std::string& s);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_GNUPLOT_H_
