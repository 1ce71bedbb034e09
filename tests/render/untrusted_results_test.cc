// results.json is untrusted input (SECURITY.md): `secmode report` and
// `secmode merge` draw files received from other machines. The committed
// reference run, with a payload added to every string in it, is drawn with
// the real renderers and the real gnuplot, and then: nothing the payload asks
// for ran; the plots were still drawn (so the strings went through the plot
// scripts); every Markdown table keeps its header's column count; no
// micro.csv cell reads as a spreadsheet formula; report.html forbids remote
// loads and refers to nothing remote; what is printed to a terminal holds no
// control character but its newlines and keeps its lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/files.h"
#include "common/format.h"
#include "harness/compare_runs.h"
#include "render/gnuplot.h"
#include "render/markdown.h"
#include "render/report.h"
#include "render/report_compare.h"
#include "render/report_html.h"
#include "render/report_predict.h"
#include "render/run_dir.h"

namespace secmode::render {
namespace {

using nlohmann::json;

// Every string leaf of `j` (object values and array elements) through `f`,
// with the key it is held under ("" in an array).
void ForEachString(json& j, const std::string& key,
                   const std::function<void(const std::string&, json&)>& f) {
  if (j.is_string()) {
    f(key, j);
  } else if (j.is_object()) {
    for (auto& [k, v] : j.items()) ForEachString(v, k, f);
  } else if (j.is_array()) {
    for (auto& v : j) ForEachString(v, key, f);
  }
}

// Everything a string could try on each sink: a new gnuplot line running a
// command (also after closing a quote), a backquote command and a @macro, a
// table cell's end, a formula, raw HTML and a Markdown image and link to a
// remote host; and for a terminal: ESC sequences (a window title, clearing
// the screen, a cursor move, an OSC 8 hyperlink), C1 controls (U+009B is
// CSI, U+0085 a newline to some terminals) and a carriage return that would
// draw over its line.
std::string Payload(const std::string& pwned) {
  return "\nsystem \"touch " + pwned + "-newline\" #\r\nsystem \"touch " + pwned +
         "-cr\"\n'; system \"touch " + pwned + "-quote\"; x='\n`touch " + pwned +
         "-backquote` @m \\\n| a | b |\t=HYPERLINK(\"http://127.0.0.9/c\") "
         "<img src=http://127.0.0.9/x> ![x](http://127.0.0.9/y) [l](http://127.0.0.9/z) "
         "<http://127.0.0.9/w> \x1b[31m\x1b]2;title\x07\x1b[2J\x1b[1;1H"
         "\x1b]8;;http://127.0.0.9/o\x1b\\link\x1b]8;;\x1b\\ \xc2\x9b"
         "2J\xc2\x85\x7f\rforged";
}

// Printed to a terminal, `out` is plain text: no control character but the
// newlines ending its lines (C0, DEL, or C1 in UTF-8).
void ExpectTerminalSafe(const std::string& out, const std::string& what) {
  for (size_t i = 0; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    const bool c1 = c == 0xc2 && i + 1 < out.size() &&
                    static_cast<unsigned char>(out[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(out[i + 1]) <= 0x9f;
    if ((c < 0x20 && c != '\n') || c == 0x7f || c1) {
      ADD_FAILURE() << what << ": control character " << static_cast<int>(c) << " at " << i
                    << " in: " << out.substr(i > 60 ? i - 60 : 0, 120);
      return;
    }
  }
}

// The strings that say how a section or row is laid out, which the
// renderers read as names (a lab's "protocol" says which fields its rows
// have, a row's "kind" which table and plot it belongs to). A different
// value is a different layout: a wrong type in it is refused (kCorrupt), a
// row of no kind is left out, which is not what this test is about. Every
// other string, the labels matched against names too ("mode", "op",
// "reaction"), gets the payload.
bool KeptAsIs(const std::string& key) {
  return key == "schema" || key == "protocol" || key == "kind";
}

struct Drawn {
  std::string md, csv, html;
  std::set<std::string> plots;
  std::vector<std::string> warnings;
};

Drawn DrawSaved(const json& doc, const std::string& dir) {
  Drawn d;
  EXPECT_TRUE(common::MakeDirectories(dir + "/in").ok());
  EXPECT_TRUE(common::WriteFileAtomically(dir + "/in/results.json", doc.dump(2)).ok());
  auto files = RenderSavedRun(dir + "/in", dir + "/out");
  EXPECT_TRUE(files.ok()) << files.status().ToString();
  if (!files.ok()) return d;
  d.warnings = files->warnings;
  for (const std::string& name : files->written) {
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".svg") == 0) d.plots.insert(name);
  }
  auto read = [&](const char* name) {
    auto text = common::ReadFile(dir + "/out/" + name);
    EXPECT_TRUE(text.ok()) << name;
    return text.ok() ? *text : std::string();
  };
  d.md = read("report.md");
  d.csv = read("micro.csv");
  d.html = read("report.html");
  return d;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The cells of a GFM table row: split at every | not escaped by a backslash,
// without the leading and trailing pipes.
size_t CellCount(const std::string& row) {
  std::vector<std::string> cells(1);
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size()) {
      cells.back() += row.substr(i, 2);
      ++i;
    } else if (row[i] == '|') {
      cells.emplace_back();
    } else {
      cells.back() += row[i];
    }
  }
  auto blank = [](const std::string& c) { return c.find_first_not_of(" \t") == std::string::npos; };
  if (!cells.empty() && blank(cells.front()) && row.find_first_not_of(" \t") < row.size() &&
      row[row.find_first_not_of(" \t")] == '|') {
    cells.erase(cells.begin());
  }
  if (!cells.empty() && blank(cells.back()) && row.find_last_not_of(" \t") < row.size() &&
      row[row.find_last_not_of(" \t")] == '|') {
    cells.pop_back();
  }
  return cells.size();
}

bool IsDelimiterRow(const std::string& line) {
  return line.rfind("|", 0) == 0 && line.find("---") != std::string::npos &&
         line.find_first_not_of("|-: ") == std::string::npos;
}

// Every table's rows (GFM: a table runs from its header to the first blank
// line or heading) have as many cells as its header, and no line starts
// with what follows a newline of the payload; returns the table rows seen.
size_t CheckTables(const std::string& md, const std::string& what) {
  const std::vector<std::string> lines = Lines(md);
  for (const std::string& line : lines) {
    const std::string start = line.substr(std::min(line.size(), line.find_first_not_of(" ")));
    for (const char* after_newline : {"system ", "'; system", "`touch", "| a | b |"}) {
      EXPECT_NE(start.rfind(after_newline, 0), 0u) << what << ": a string added the line\n" << line;
    }
  }
  size_t rows = 0;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind("|", 0) != 0 || !IsDelimiterRow(lines[i + 1])) continue;
    const size_t columns = CellCount(lines[i]);
    for (size_t j = i + 1; j < lines.size() && !lines[j].empty() && lines[j][0] != '#';
         ++j, ++rows) {
      EXPECT_EQ(CellCount(lines[j]), columns) << what << ": a row of the table headed\n"
                                              << lines[i] << "\nhas another column count:\n"
                                              << lines[j];
    }
  }
  return rows;
}

// The fields of a CSV document, as a spreadsheet splits them.
std::vector<std::string> CsvCells(const std::string& csv) {
  std::vector<std::string> cells(1);
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < csv.size(); ++i) {
    const char c = csv[i];
    if (quoted) {
      if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"' && cells.back().empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',' || c == '\n') {
      cells.emplace_back();
      was_quoted = false;
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

bool IsNumber(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() &&
         s.find_first_of("xXnNiI") == std::string::npos;
}

// The values of every src= and href= (also xlink:href=) attribute of the
// tags of an HTML page (text's < is always &lt;, so every < opens a tag).
std::vector<std::string> Urls(const std::string& html) {
  std::vector<std::string> out;
  for (size_t open = html.find('<'); open != std::string::npos; open = html.find('<', open + 1)) {
    const std::string tag = html.substr(open, html.find('>', open) - open);
    for (const std::string attr : {" src=", " href=", ":href="}) {
      for (size_t at = tag.find(attr); at != std::string::npos; at = tag.find(attr, at + 1)) {
        size_t from = at + attr.size();
        const char q = from < tag.size() ? tag[from] : ' ';
        if (q == '"' || q == '\'') {
          ++from;
          out.push_back(tag.substr(from, tag.find(q, from) - from));
        } else {
          out.push_back(tag.substr(from, tag.find_first_of(" \t\n", from) - from));
        }
      }
    }
  }
  return out;
}

// The committed reference run, and a temporary directory removed however
// the test ends.
class UntrustedResultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto text = common::ReadFile(std::string(SECMODE_REFERENCE_DIR) +
                                 "/amd-epyc-2vcpu-2026-12-05/results.json");
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    clean_ = json::parse(*text);
    auto tmp = common::MakeTempDirectory("secmode-untrusted-");
    ASSERT_TRUE(tmp.ok());
    tmp_ = *tmp;
  }
  void TearDown() override {
    if (!tmp_.empty()) (void)common::RemoveTree(tmp_);
  }

  // The reference run with the payload after every string but those kept
  // as they are (KeptAsIs, `names`), and a formula before the micro rows'
  // strings (micro.csv's cells start with them; a micro row's leg is one of
  // four names, or the file is refused on reading).
  json Hostile(const std::set<std::string>& names = {}) {
    json hostile = clean_;
    size_t strings = 0;
    ForEachString(hostile, "", [&](const std::string& key, json& s) {
      if (KeptAsIs(key) || names.count(key)) return;
      ++strings;
      s = s.get<std::string>() + Payload(tmp_ + "/PWNED");
    });
    EXPECT_GT(strings, 100u);
    for (size_t i = 0; i < hostile["micro"].size(); ++i) {
      json& row = hostile["micro"][i];
      row["leg"] = clean_["micro"][i]["leg"];
      for (const char* key : {"mode", "engine", "enctype"}) {
        row[key] = "=HYPERLINK(\"http://127.0.0.9/f\",\"x\")" + row[key].get<std::string>();
      }
    }
    return hostile;
  }

  // No file a payload's command would have made.
  void ExpectNothingRan() {
    for (const auto& e : std::filesystem::recursive_directory_iterator(tmp_)) {
      EXPECT_NE(e.path().filename().string().rfind("PWNED", 0), 0u)
          << "a string of results.json ran a command: " << e.path();
    }
  }

  json clean_;
  std::string tmp_;
};

TEST_F(UntrustedResultsTest, NoStringOfResultsJsonRunsOrBreaksWhatIsDrawn) {
  json hostile = Hostile();
  // A section's reason for not running, which the reference run has none of.
  hostile["sections"]["predictions"]["smb_not_run"] = "no Samba" + Payload(tmp_ + "/PWNED");
  // A section no renderer draws, named in a note and a warning.
  hostile["sections"]["newer" + Payload(tmp_ + "/PWNED")] = json::object();
  const Drawn reference = DrawSaved(clean_, tmp_ + "/clean");
  const Drawn drawn = DrawSaved(hostile, tmp_ + "/hostile");
  ExpectNothingRan();
  EXPECT_NE(drawn.md.find("has sections this secmode has no renderer for: `"), std::string::npos);
  // The same plots were drawn, so the strings reached the plot scripts.
  ASSERT_FALSE(reference.plots.empty());
  EXPECT_EQ(drawn.plots, reference.plots);
  for (const std::string& w : drawn.warnings) {
    EXPECT_EQ(w.find("plot"), std::string::npos) << w;
  }

  // Every table keeps its shape and no string added a line. (The rows
  // themselves may differ: a table comparing modes with "sys" finds no
  // "sys" here.)
  ASSERT_GT(CheckTables(reference.md, "clean report.md"), 500u);
  EXPECT_GT(CheckTables(drawn.md, "report.md"), 500u);

  // No spreadsheet formula.
  const std::vector<std::string> cells = CsvCells(drawn.csv);
  ASSERT_GT(cells.size(), 100u);
  for (const std::string& cell : cells) {
    if (cell.empty() || IsNumber(cell)) continue;
    EXPECT_EQ(std::string("=+-@\t\r").find(cell[0]), std::string::npos)
        << "micro.csv cell read as a formula: " << cell;
  }
  EXPECT_EQ(cells.size(), CsvCells(reference.csv).size());

  // report.html loads and links nothing remote, and says so to the browser.
  ASSERT_FALSE(drawn.html.empty());
  for (const Drawn* d : {&reference, &drawn}) {
    EXPECT_NE(d->html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                           "'none'"),
              std::string::npos);
  }
  for (const std::string& url : Urls(drawn.html)) {
    EXPECT_TRUE(url.rfind("#", 0) == 0 || url.rfind("data:image/png;base64,", 0) == 0)
        << "report.html refers to " << url;
  }
  EXPECT_EQ(drawn.html.find("127.0.0.9/x\""), std::string::npos);
  EXPECT_EQ(drawn.html.find("<img"), std::string::npos);
  // No string started a line of report.md (the payload's first line's
  // command would).
  EXPECT_EQ(drawn.md.find("\nsystem"), std::string::npos);

  // The README's headline table, drawn from the same results.
  auto results = harness::FromJson(hostile);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  auto clean_results = harness::FromJson(clean_);
  ASSERT_TRUE(clean_results.ok());
  EXPECT_EQ(CheckTables(HeadlineMarkdown(*results), "headline"),
            CheckTables(HeadlineMarkdown(*clean_results), "clean headline"));
  EXPECT_EQ(HeadlineMarkdown(*results).find("\nsystem"), std::string::npos);
}

// With the names the renderers match against ("sys", "read", a shared
// context, the baseline) kept, every table of the reference is drawn again,
// each with exactly its rows: no string added or lost one.
TEST_F(UntrustedResultsTest, EveryTableKeepsItsRows) {
  const json hostile = Hostile({"mode", "op", "context", "baseline"});
  const Drawn reference = DrawSaved(clean_, tmp_ + "/clean");
  const Drawn drawn = DrawSaved(hostile, tmp_ + "/hostile");
  ExpectNothingRan();
  EXPECT_EQ(drawn.plots, reference.plots);
  EXPECT_EQ(CheckTables(drawn.md, "report.md"), CheckTables(reference.md, "clean report.md"));
  EXPECT_EQ(CsvCells(drawn.csv).size(), CsvCells(reference.csv).size());
}

// `secmode compare --markdown` of two such runs: the runs' labels, the rows
// both have and the rows only one has.
TEST_F(UntrustedResultsTest, CompareMarkdownKeepsItsTables) {
  auto a = harness::FromJson(Hostile({"mode", "op", "context", "baseline"}));
  auto b = harness::FromJson(Hostile());
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = harness::CompareRuns({*a}, {*b});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_FALSE(c->only_a.empty());
  const std::string md = CompareMarkdown(*c);
  EXPECT_GT(CheckTables(md, "compare"), 2u);
  EXPECT_EQ(md.find("\nsystem"), std::string::npos);
  ExpectTerminalSafe(md, "compare --markdown");
}

// What is printed to a terminal from such runs: `secmode compare`, the
// run's summary table, `secmode predict` and `--explain`. Each keeps the
// lines the clean run's has and holds no control character.
TEST_F(UntrustedResultsTest, TerminalOutputsKeepTheirLines) {
  auto a = harness::FromJson(Hostile({"mode", "op", "context", "baseline"}));
  auto b = harness::FromJson(Hostile());
  auto clean = harness::FromJson(clean_);
  ASSERT_TRUE(a.ok() && b.ok() && clean.ok());
  auto c = harness::CompareRuns({*a}, {*b});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_FALSE(c->only_a.empty());
  const std::string text = CompareText(*c);
  ExpectTerminalSafe(text, "compare");
  // A, B, a blank line, the header, the rows, a blank line, the counts, the
  // note on the rows of one run a side (where to get the A/A noise), the
  // rows in one run only, the method.
  EXPECT_EQ(Lines(text).size(), 8 + c->rows.size() + c->only_a.size() + c->only_b.size());

  const std::string summary = SummaryTable(*b);
  ExpectTerminalSafe(summary, "summary table");
  EXPECT_EQ(Lines(summary).size(), Lines(SummaryTable(*clean)).size());

  // secmode predict's documents (harness/workload_inputs.h) around the
  // reference run's predictions, every string but the modes' names hostile.
  json predict = {{"source",
                   {{"results", "/r/results.json"},
                    {"cpu_model", "cpu"},
                    {"started_at", "2026-12-05T00:00:00Z"}}},
                  {"baseline", "sys"},
                  {"environment", {{"protocol_cost_source", "measured"}}},
                  {"warnings", {"a warning"}},
                  {"predictions", clean_["predictions"]}};
  json explain = {{"source", predict["source"]},
                  {"environment", predict["environment"]},
                  {"workload", "randread"},
                  {"baseline_iops", 1000},
                  {"nfs", {{{"mode", "krb5p"}, {"published_iops", 900}}}},
                  {"smb",
                   {{{"mode", "smb-sign"},
                     {"published", "a source"},
                     {"implied_client_extra_ms_per_mib", 1},
                     {"crypto_share", 0.5}},
                    {{"mode", "smb-encrypt"}, {"unencrypted_mib_per_s_for_10pct", 100}}}},
                  {"notes", {"a note"}}};
  for (auto [doc, draw, what] :
       {std::tuple{predict, &PredictionsText, "predict"}, {explain, &ExplanationText, "explain"}}) {
    json hostile = doc;
    ForEachString(hostile, "", [&](const std::string& key, json& s) {
      if (key != "mode" && key != "baseline") s = s.get<std::string>() + Payload(tmp_ + "/PWNED");
    });
    const std::string drawn = draw(hostile);
    ExpectTerminalSafe(drawn, what);
    EXPECT_EQ(Lines(drawn).size(), Lines(draw(doc)).size()) << what;
  }
}

// report.html's own guard, whatever report.md holds: an image that is not
// a plot file of the run becomes text, a plot file's image its figure.
TEST(UntrustedEscapersTest, HtmlShowsNoImageButThePlots) {
  auto html = HtmlReport(
      "# r\n\n![remote](http://127.0.0.9/y.svg)\n\n| a | b |\n|---|---|\n| "
      "![i](http://127.0.0.9/i.png) | ![d](data:image/png;base64,AAAA) |\n\n![plot](p.svg)\n",
      {{"p.svg", "<svg id=\"x\"></svg>"}});
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  EXPECT_EQ(html->find("<img"), std::string::npos) << *html;
  EXPECT_NE(html->find("(image not shown: http://127.0.0.9/i.png)"), std::string::npos) << *html;
  EXPECT_NE(html->find("(image not shown: http://127.0.0.9/y.svg)"), std::string::npos) << *html;
  EXPECT_NE(html->find("<figure class=\"plot\" data-plot=\"p.svg\">"), std::string::npos);
}

TEST(UntrustedEscapersTest, MarkdownStringsAreText) {
  EXPECT_EQ(MdText("a|b\nc"), "a\\|b c");
  EXPECT_EQ(MdText("![x](http://h/y) <b> `c` *e* _f_ & # ~"),
            "\\!\\[x\\](http://h/y) \\<b\\> \\`c\\` \\*e\\* \\_f\\_ \\& \\# \\~");
  EXPECT_EQ(MdText("krb5p aes256-cts-hmac-sha1-96 (1.2)"), "krb5p aes256-cts-hmac-sha1-96 (1.2)");
  EXPECT_EQ(MdCode("secmode run"), "`secmode run`");
  EXPECT_EQ(MdCodeCell("a`b|c\n"), "``a`b\\|c ``");
  // Outside a table a | is text as it is (\| would show its backslash).
  EXPECT_EQ(MdCode("a`b|c\n"), "``a`b|c ``");
  EXPECT_EQ(MdCode("`x"), "`` `x ``");
}

TEST(UntrustedEscapersTest, TerminalStringsAreText) {
  using common::TerminalText;
  EXPECT_EQ(TerminalText("a\nb\rc\td\x1b[2J\x7f"), "a b c d [2J ");
  EXPECT_EQ(TerminalText("\x1b]8;;http://h\x1b\\x\x1b]8;;\x07"), " ]8;;http://h \\x ]8;; ");
  // C1 controls in UTF-8 (U+0080, U+009B CSI, U+009F), and bytes that are
  // not UTF-8 (a lone 0x9b, an overlong ESC, a cut sequence).
  EXPECT_EQ(TerminalText("a\xc2\x80"
                         "b\xc2\x9b"
                         "2Jc\xc2\x9f"),
            "a b 2Jc ");
  EXPECT_EQ(TerminalText("\x9b"
                         "2J\xc0\x9b\xe2\x82"),
            " 2J    ");
  // Text, also beyond ASCII (U+00A0, é, €, an emoji), stays as it is.
  const std::string text = "krb5p \xc2\xa0\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92 (1.2) | `x`";
  EXPECT_EQ(TerminalText(text), text);
  EXPECT_EQ(MdText("a\xc2\x9b"
                   "b"),
            "a b");
  EXPECT_EQ(MdCode("a\xc2\x9b"
                   "b"),
            "`a b`");
}

TEST(UntrustedEscapersTest, GnuplotStringsStayOnTheirLine) {
  EXPECT_EQ(GnuplotQuote("a'b"), "'a''b'");
  EXPECT_EQ(GnuplotQuote("x\ny\r\tz\x7f"), "'x y  z '");
  EXPECT_EQ(GnuplotLine("# c\n1 2"), "# c 1 2");
}

TEST(UntrustedEscapersTest, CsvFieldsNeverReadAsFormulas) {
  using common::CsvField;
  EXPECT_EQ(CsvField("=1+2"), "'=1+2");
  EXPECT_EQ(CsvField("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(CsvField("+cmd"), "'+cmd");
  EXPECT_EQ(CsvField("-cmd"), "'-cmd");
  EXPECT_EQ(CsvField("\tx"), "'\tx");
  EXPECT_EQ(CsvField("\rx"), "\"'\rx\"");
  EXPECT_EQ(CsvField("=HYPERLINK(\"http://x\",\"y\")"),
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  for (const char* n : {"-1", "-1.5", "+2e-3", "-.5", "0"}) EXPECT_EQ(CsvField(n), n);
  EXPECT_EQ(CsvField("-"), "'-");
  EXPECT_EQ(CsvField("krb5p"), "krb5p");
}

}  // namespace
}  // namespace secmode::render
