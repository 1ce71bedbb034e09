#include "render/report_trace_plots.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/format.h"
#include "render/gnuplot.h"
#include "render/markdown.h"

namespace secmode::render {

namespace {

using nlohmann::json;

constexpr size_t kMaxSeries = 4;        // contexts in a plot
constexpr size_t kMaxResponses = 8;     // operations and commands in the response plot
constexpr size_t kMaxPoints = 1024;     // read of one series
constexpr size_t kMaxLagBins = 64;      // read of one histogram
constexpr double kMaxWindowMark = 1e6;  // a window marked on the lag plot

struct Series {
  std::string title;
  std::vector<std::pair<double, double>> points;  // x, y; y NaN: no value there
};

double Number(const json& j) { return j.is_number() ? j.get<double>() : std::nan(""); }

// [[q, value], ...] as (value, q): a distribution drawn as the share of the
// samples at or below each value (on a logarithmic axis: values above 0).
// Pairs that are not two finite numbers are left out.
std::vector<std::pair<double, double>> Distribution(const json& quantiles) {
  std::vector<std::pair<double, double>> out;
  if (!quantiles.is_array()) return out;
  for (const json& p : quantiles) {
    if (out.size() >= kMaxPoints) break;
    if (!p.is_array() || p.size() != 2) continue;
    const double q = Number(p[0]), v = Number(p[1]);
    if (!std::isfinite(q) || !std::isfinite(v) || q < 0 || q > 1 || v <= 0) continue;
    out.emplace_back(v, q);
  }
  return out;
}

// The rows of `rows` with the most `count`, at most `n`, most first; they
// point into `rows`, which must outlive them.
std::vector<const json*> Busiest(const json& rows, const char* count, size_t n) {
  std::vector<const json*> out;
  if (!rows.is_array()) return out;
  for (const json& r : rows) {
    if (r.is_object()) out.push_back(&r);
  }
  auto calls = [count](const json* r) {
    const double c = Number(r->value(count, json()));
    return std::isfinite(c) ? c : 0.0;
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const json* a, const json* b) { return calls(a) > calls(b); });
  if (out.size() > n) out.resize(n);
  return out;
}

std::string Str(const json& row, const char* key) {
  const json v = row.value(key, json());
  return v.is_string() ? v.get<std::string>() : std::string("?");
}

// One plot of `series` (each its own block of data.dat) in `style`, after
// the `setup` lines.
common::Result<std::string> Draw(const std::string& setup, const std::vector<Series>& series,
                                 const char* style) {
  std::ostringstream data, script;
  script << "set terminal svg size 800,540 dynamic font 'sans,11'\nset output 'out.svg'\n"
            "set grid\nset termoption noenhanced\nset key below\n"
         << setup << "plot ";
  for (size_t i = 0; i < series.size(); ++i) {
    data << "# series " << i << "\n";
    for (const auto& [x, y] : series[i].points) {
      data << common::Fmt("%.9g", x) << " "
           << (std::isfinite(y) ? common::Fmt("%.9g", y) : std::string("NaN")) << "\n";
    }
    data << "\n\n";
    script << (i ? ", " : "") << "'data.dat' index " << i << " using 1:2 with " << style
           << " lw 2 title " << GnuplotQuote(series[i].title);
  }
  script << "\n";
  return RunGnuplot(script.str(), {{"data.dat", data.str()}}, "out.svg");
}

// A context's calls per lag bin as a series over the bins' indexes (NaN
// where none: the plot's y is logarithmic), and the bins' ranges.
struct LagBin {
  double from = 0, to = -1;  // to < from: the last bin, open
};

std::vector<Series> LagSeries(const std::vector<const json*>& contexts, std::vector<LagBin>* bins) {
  std::vector<Series> out;
  for (const json* x : contexts) {
    const json h = x->value("lag_histogram", json());
    if (!h.is_array() || h.empty()) continue;
    Series s{"context " + Str(*x, "handle") + " (" + Str(*x, "service") + ")", {}};
    std::vector<LagBin> mine;
    bool any = false;
    for (size_t i = 0; i < h.size() && i < kMaxLagBins; ++i) {
      const json b = h[i].is_object() ? h[i] : json::object();
      const double from = Number(b.value("from", json())), to = Number(b.value("to", json()));
      const double calls = Number(b.value("calls", json()));
      if (!std::isfinite(from) || from < 0) break;
      mine.push_back({from, std::isfinite(to) ? to : -1});
      any = any || (std::isfinite(calls) && calls > 0);
      s.points.emplace_back(static_cast<double>(i),
                            std::isfinite(calls) && calls > 0 ? calls : std::nan(""));
    }
    if (!any) continue;
    if (mine.size() > bins->size()) *bins = mine;
    out.push_back(std::move(s));
  }
  return out;
}

// Where window `w` lies on the bins' axis: inside its bin in proportion.
double WindowPosition(const std::vector<LagBin>& bins, double w) {
  for (size_t i = 0; i < bins.size(); ++i) {
    const LagBin& b = bins[i];
    if (w < b.from) break;
    if (b.to < b.from || w <= b.to) {
      const double width = b.to < b.from ? std::max(b.from, 1.0) : b.to - b.from + 1;
      return static_cast<double>(i) - 0.5 + std::min(1.0, (w - b.from) / width);
    }
  }
  return std::nan("");
}

std::string LagBinLabel(const LagBin& b) {
  if (b.to < b.from) return common::Fmt("%.0f+", b.from);
  if (b.to == b.from) return common::Fmt("%.0f", b.from);
  return common::Fmt("%.0f", b.from) + "-" + common::Fmt("%.0f", b.to);
}

std::vector<Series> InFlightSeries(const std::vector<const json*>& contexts) {
  std::vector<Series> out;
  for (const json* x : contexts) {
    const json t = x->value("in_flight_over_time", json());
    if (!t.is_object()) continue;
    const double start = Number(t.value("start_s", json())), bin = Number(t.value("bin_s", json()));
    const json most = t.value("most", json());
    if (!std::isfinite(start) || !std::isfinite(bin) || bin <= 0 || !most.is_array()) continue;
    Series s{"context " + Str(*x, "handle"), {}};
    for (size_t i = 0; i < most.size() && i < kMaxPoints; ++i) {
      const double at = start + (static_cast<double>(i) + 0.5) * bin;
      if (std::isfinite(at)) s.points.emplace_back(at, Number(most[i]));
    }
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  return out;
}

// The busiest RPC operations' and SMB commands' response times, half the
// plot's series each when both have more (the rest to whichever has).
std::vector<Series> ResponseSeries(const json& section) {
  auto series = [](const json& rows, const char* count, bool smb) {
    std::vector<Series> out;
    for (const json* r : Busiest(rows, count, kMaxResponses)) {
      Series s{smb ? "SMB " + Str(*r, "command") + " (" + Str(*r, "protection") + ")"
                   : Str(*r, "operation") + " (" + Str(*r, "mode") + ")",
               Distribution(r->value("response_us_quantiles", json()))};
      if (!s.points.empty()) out.push_back(std::move(s));
    }
    return out;
  };
  const json smb = section.value("smb", json());
  std::vector<Series> rpc = series(section.value("operations", json()), "calls", false);
  std::vector<Series> commands =
      series(smb.is_object() ? smb.value("commands", json()) : json(), "requests", true);
  const size_t half = kMaxResponses / 2;
  rpc.resize(std::min(rpc.size(), std::max(half, kMaxResponses - commands.size())));
  commands.resize(std::min(commands.size(), kMaxResponses - rpc.size()));
  for (Series& s : commands) rpc.push_back(std::move(s));
  return rpc;
}

// An image of the plot drawn, or why it could not be.
void Place(const char* file, const char* alt, const common::Result<std::string>& svg, Rendered& out,
           std::ostringstream& md) {
  if (svg.ok()) {
    out.files.emplace_back(file, *svg);
    md << "![" << alt << "](" << file << ")\n\n";
  } else {
    out.warnings.push_back(std::string("plot ") + file + " failed: " + svg.status().ToString());
    md << "(plot " << file << " could not be drawn: " << MdText(svg.status().ToString())
       << "; the numbers are in the tables and results.json)\n\n";
  }
}

}  // namespace

std::string TracePlots(const json& section, Rendered& out) {
  const json all_contexts = section.value("contexts", json());
  const std::vector<const json*> contexts = Busiest(all_contexts, "calls", kMaxSeries);
  std::vector<LagBin> bins;
  const std::vector<Series> lags = LagSeries(contexts, &bins);
  const std::vector<Series> in_flight = InFlightSeries(contexts);
  const std::vector<Series> responses = ResponseSeries(section);
  if (lags.empty() && in_flight.empty() && responses.empty()) return "";
  std::ostringstream md;
  md << "### Plots\n\n";
  if (!lags.empty()) {
    std::ostringstream setup;
    setup << "set xtics (";
    for (size_t i = 0; i < bins.size(); ++i) {
      setup << (i ? ", " : "") << "'" << LagBinLabel(bins[i]) << "' " << i;
    }
    setup << ") rotate by -45\n";
    const json windows = section.value("windows", json());
    for (const json& w : windows.is_array() ? windows : json::array()) {
      const double v = Number(w);
      const double at = WindowPosition(bins, v);
      if (!std::isfinite(v) || v <= 0 || v > kMaxWindowMark || !std::isfinite(at)) continue;
      setup << "set arrow from " << common::Fmt("%.4f", at) << ", graph 0 to "
            << common::Fmt("%.4f", at) << ", graph 1 nohead dt 2 lc rgb 'gray40'\n"
            << "set label 'W" << common::Fmt("%.0f", v) << "' at " << common::Fmt("%.4f", at)
            << ", graph 0.96 left offset 0.3,0 tc rgb 'gray40'\n";
    }
    setup << "set title 'Lag of each DATA call behind the highest number sent before it "
             "(the busiest contexts; dashed: the windows)'\n"
             "set xlabel 'lag (sequence numbers)'\nset ylabel 'calls'\nset logscale y 10\n"
             "set boxwidth 0.8\nset style fill transparent solid 0.35\n"
             "set xrange [-0.6:"
          << common::Fmt("%.1f", static_cast<double>(bins.size()) - 0.4) << "]\n";
    Place("trace-lag.svg",
          "each context's calls by lag, on a logarithmic scale, the windows dashed: the calls "
          "right of a window's line are those it would have dropped",
          Draw(setup.str(), lags, "boxes"), out, md);
  }
  if (!in_flight.empty()) {
    Place("trace-in-flight.svg",
          "the most calls of each context in flight in each stretch of the capture's time",
          Draw("set title 'Calls in flight (the most in each stretch of time)'\n"
               "set xlabel 'seconds since the capture began'\nset ylabel 'calls in flight'\n"
               "set yrange [0:*]\n",
               in_flight, "lines"),
          out, md);
  }
  if (!responses.empty()) {
    Place("trace-response.svg",
          "response times at the capture point as distributions, per operation or command and "
          "mode",
          Draw("set title 'Response times at the capture point'\nset logscale x 10\n"
               "set xlabel 'microseconds, call to reply'\nset ylabel 'share of the calls at or "
               "below'\nset yrange [0:1.02]\n",
               responses, "steps"),
          out, md);
  }
  return md.str();
}

}  // namespace secmode::render
