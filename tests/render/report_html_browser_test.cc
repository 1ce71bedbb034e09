// report.html in a real browser: the committed reference run's report is
// drawn again, opened in headless Chromium (Debian's chromium package, which
// `make test` installs), and checked from the DOM (every plot laid out with
// drawn content, every table with rows, a click on a numeric column's header
// sorts it up, a second click down) and from a screenshot (every plot's
// area holds drawn pixels of several colours, not a blank box). The sort
// checks also prove that the page's Content-Security-Policy lets its own
// script run (by its hash).
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <png.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/files.h"
#include "common/subprocess.h"
#include "harness/results.h"
#include "render/report.h"

namespace secmode::render {
namespace {

// Appended to report.html before </body>, after the page's own script, so it
// sees the page as a reader gets it. Writes its findings as JSON into
// <pre id="secmode-check">, which --dump-dom prints.
constexpr const char* kCheckScript = R"(<script>
(function(){
function num(t){var m=t.replace(/[,\s]/g,'').match(/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/i);return m?parseFloat(m[0]):null;}
var out={plots:[],tables:[],scroll_height:document.documentElement.scrollHeight};
document.querySelectorAll('figure.plot').forEach(function(f){
var svg=f.querySelector('svg');var r=svg?svg.getBoundingClientRect():{x:0,y:0,width:0,height:0};
var b=svg?svg.getBBox():{width:0,height:0};
out.plots.push({name:f.dataset.plot,x:r.x+window.scrollX,y:r.y+window.scrollY,width:r.width,height:r.height,
content_width:b.width,content_height:b.height,shapes:svg?svg.querySelectorAll('path,polyline,polygon,text,rect,circle').length:0});});
document.querySelectorAll('table').forEach(function(t){
var rows=t.tBodies.length?t.tBodies[0].rows.length:0;var res={rows:rows,sortable_column:-1,up:null,down:null};
var head=t.tHead;if(head){
var cells=head.rows[0].cells;
for(var c=0;c<cells.length&&res.sortable_column<0;c++){
var vals=Array.prototype.map.call(t.tBodies[0].rows,function(r){return r.cells[c]?num(r.cells[c].textContent.trim()):null;});
if(vals.every(function(v){return v!==null;})&&new Set(vals).size>=3)res.sortable_column=c;}
if(res.sortable_column>=0){var col=res.sortable_column;
function column(){return Array.prototype.map.call(t.tBodies[0].rows,function(r){return num(r.cells[col].textContent.trim());});}
function ordered(v,up){for(var i=1;i<v.length;i++){if(up?v[i]<v[i-1]:v[i]>v[i-1])return false;}return true;}
cells[col].click();res.up=ordered(column(),true)&&cells[col].getAttribute('aria-sort')==='ascending';
cells[col].click();res.down=ordered(column(),false)&&cells[col].getAttribute('aria-sort')==='descending';}}
out.tables.push(res);});
var pre=document.createElement('pre');pre.id='secmode-check';pre.textContent=JSON.stringify(out);
document.body.appendChild(pre);
})();
</script>)";

// The same page with everything but the plots hidden, for the screenshot.
constexpr const char* kPlotsOnlyStyle =
    "<style>main>:not(figure.plot){display:none!important}figure.plot{margin:0 0 16px}"
    "figcaption{display:none}#secmode-check{display:none}</style>";

constexpr int kWidth = 1280;

struct Browser {
  std::string chromium;
  std::string dir;

  // Runs headless Chromium on `page` with `args`; its stdout and stderr.
  std::string Run(const std::string& page, std::vector<std::string> args, int height) const {
    common::Command c;
    c.argv = {chromium,
              "--headless",
              "--no-sandbox",  // root in a container; the page is our own file
              "--disable-gpu",
              "--disable-breakpad",
              "--no-first-run",
              "--force-device-scale-factor=1",
              "--hide-scrollbars",
              "--user-data-dir=" + dir + "/profile",
              "--window-size=" + std::to_string(kWidth) + "," + std::to_string(height)};
    for (auto& a : args) c.argv.push_back(std::move(a));
    c.argv.push_back("file://" + page);
    c.env = {{"HOME", dir}, {"XDG_CONFIG_HOME", dir}, {"XDG_CACHE_HOME", dir}};
    c.log_path = dir + "/chromium.log";
    std::filesystem::remove(c.log_path);
    auto status = common::RunAndWait(c, 90000);
    EXPECT_TRUE(status.ok() && *status == 0)
        << c.ToString() << ": "
        << (status.ok() ? std::to_string(*status) : status.status().ToString());
    auto log = common::ReadFile(c.log_path);
    return log.ok() ? *log : "";
  }

  nlohmann::json Check(const std::string& page, int height) const {
    const std::string dom = Run(page, {"--dump-dom"}, height);
    const std::string open = "<pre id=\"secmode-check\">";
    const size_t at = dom.find(open);
    if (at == std::string::npos) {
      ADD_FAILURE() << "the check did not run; chromium said:\n" << dom.substr(0, 4000);
      return nlohmann::json::object();
    }
    const size_t end = dom.find("</pre>", at);
    const std::string text = dom.substr(at + open.size(), end - at - open.size());
    // --dump-dom escapes the JSON's quotes and ampersands as text.
    std::string json;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 6, "&quot;") == 0) {
        json += '"';
        i += 5;
      } else if (text.compare(i, 5, "&amp;") == 0) {
        json += '&';
        i += 4;
      } else {
        json += text[i];
      }
    }
    auto j = nlohmann::json::parse(json, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << json;
    return j;
  }
};

struct Rgb {
  int width = 0;
  int height = 0;
  std::vector<unsigned char> pixels;  // RGB, row by row
};

Rgb ReadPng(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  Rgb out;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << path << ": " << image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGB;
  out.pixels.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.pixels.data(), 0, nullptr)) {
    ADD_FAILURE() << path << ": " << image.message;
    out.pixels.clear();
    return out;
  }
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  return out;
}

// "sha256-BASE64" of the text inside <script>...</script>, as a
// Content-Security-Policy names an inline script.
std::string ScriptHash(std::string_view element) {
  const size_t from = element.find('>') + 1;
  const std::string_view body = element.substr(from, element.rfind("</script>") - from);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(body.data(), body.size(), digest, &n, EVP_sha256(), nullptr);
  unsigned char b64[2 * EVP_MAX_MD_SIZE + 4];
  const int len = EVP_EncodeBlock(b64, digest, static_cast<int>(n));
  return "sha256-" + std::string(reinterpret_cast<const char*>(b64), static_cast<size_t>(len));
}

std::string NewestReferenceRun() {
  std::vector<std::string> runs;
  for (const auto& e : std::filesystem::directory_iterator(SECMODE_REFERENCE_DIR)) {
    if (std::filesystem::is_regular_file(e.path() / "results.json")) runs.push_back(e.path());
  }
  std::sort(runs.begin(), runs.end());
  return runs.empty() ? "" : runs.back();
}

TEST(ReportHtmlBrowserTest, EveryPlotDrawsAndEveryTableHasRowsAndSorts) {
  Browser b;
  b.chromium = common::FindProgram("chromium");
  if (b.chromium.empty()) GTEST_SKIP() << "chromium is not installed (make test installs it)";
  if (common::FindProgram("gnuplot").empty()) GTEST_SKIP() << "gnuplot is not installed";
  const std::string reference = NewestReferenceRun();
  ASSERT_FALSE(reference.empty()) << "no run in " << SECMODE_REFERENCE_DIR;
  auto saved = harness::ReadResultsFile(reference);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  auto drawn = RenderRun(*saved);
  ASSERT_TRUE(drawn.ok()) << drawn.status().ToString();
  ASSERT_FALSE(drawn->report_html.empty()) << ::testing::PrintToString(drawn->warnings);

  auto tmp = common::MakeTempDirectory("secmode-html-test-");
  ASSERT_TRUE(tmp.ok());
  b.dir = *tmp;
  std::set<std::string> svgs;
  for (const auto& [name, contents] : drawn->files) {
    if (name.ends_with(".svg")) svgs.insert(name);
  }
  ASSERT_GE(svgs.size(), 2u) << "the reference run draws its plots";
  std::string page = drawn->report_html;
  const size_t body_end = page.rfind("</body>");
  ASSERT_NE(body_end, std::string::npos);
  page.insert(body_end, kCheckScript);
  // The page's Content-Security-Policy runs only the scripts it names by
  // hash: the check is added to it (the page's own sort script must still
  // pass by its own hash, or the sort checks below fail).
  const std::string script_src = "script-src ";
  const size_t csp = page.find(script_src);
  ASSERT_NE(csp, std::string::npos) << "report.html has no script-src";
  page.insert(csp + script_src.size(), "'" + ScriptHash(kCheckScript) + "' ");
  ASSERT_TRUE(common::WriteFileAtomically(b.dir + "/report.html", page).ok());

  // The DOM: every plot of the run is on the page, laid out and drawn.
  nlohmann::json dom = b.Check(b.dir + "/report.html", 1000);
  ASSERT_TRUE(dom.contains("plots") && dom.contains("tables")) << dom.dump();
  std::set<std::string> on_page;
  for (const auto& p : dom["plots"]) {
    on_page.insert(p["name"].get<std::string>());
    EXPECT_GT(p["width"].get<double>(), 300) << p.dump();
    EXPECT_GT(p["height"].get<double>(), 150) << p.dump();
    EXPECT_GT(p["content_width"].get<double>(), 100) << p.dump();
    EXPECT_GT(p["shapes"].get<int>(), 20) << p.dump();
  }
  EXPECT_EQ(on_page, svgs);
  // Every table has rows; those with a numeric column sort by it.
  ASSERT_GE(dom["tables"].size(), 10u);
  int sorted = 0;
  for (const auto& t : dom["tables"]) {
    EXPECT_GT(t["rows"].get<int>(), 0) << t.dump();
    if (t["sortable_column"].get<int>() >= 0) {
      EXPECT_TRUE(t["up"].get<bool>()) << t.dump();
      EXPECT_TRUE(t["down"].get<bool>()) << t.dump();
      ++sorted;
    }
  }
  EXPECT_GE(sorted, 5) << dom["tables"].dump();

  // The screenshot: the plots alone, stacked; each one's area holds drawn
  // pixels of several colours.
  std::string plots_only = page;
  plots_only.insert(plots_only.find("</head>"), kPlotsOnlyStyle);
  ASSERT_TRUE(common::WriteFileAtomically(b.dir + "/plots.html", plots_only).ok());
  nlohmann::json laid = b.Check(b.dir + "/plots.html", 1000);
  ASSERT_TRUE(laid.contains("scroll_height")) << laid.dump();
  const int height = std::min(laid["scroll_height"].get<int>() + 16, 16000);
  laid = b.Check(b.dir + "/plots.html", height);
  b.Run(b.dir + "/plots.html", {"--screenshot=" + b.dir + "/plots.png"}, height);
  const Rgb shot = ReadPng(b.dir + "/plots.png");
  ASSERT_EQ(shot.width, kWidth);
  ASSERT_EQ(laid["plots"].size(), svgs.size());
  for (const auto& p : laid["plots"]) {
    const int x0 = std::max(0, static_cast<int>(p["x"].get<double>()));
    const int y0 = std::max(0, static_cast<int>(p["y"].get<double>()));
    const int x1 = std::min(shot.width, static_cast<int>(x0 + p["width"].get<double>()));
    const int y1 = std::min(shot.height, static_cast<int>(y0 + p["height"].get<double>()));
    ASSERT_GT(x1 - x0, 100) << p.dump();
    ASSERT_GT(y1 - y0, 100) << p.dump() << " in a screenshot " << shot.height << " high";
    long inked = 0;
    std::set<int> colours;
    for (int y = y0; y < y1; ++y) {
      for (int x = x0; x < x1; ++x) {
        const unsigned char* px = &shot.pixels[(static_cast<size_t>(y) * shot.width + x) * 3];
        if (px[0] < 200 || px[1] < 200 || px[2] < 200) {
          ++inked;
          colours.insert((px[0] >> 4) << 8 | (px[1] >> 4) << 4 | (px[2] >> 4));
        }
      }
    }
    const double share = static_cast<double>(inked) / ((x1 - x0) * static_cast<double>(y1 - y0));
    EXPECT_GT(share, 0.005) << p["name"] << ": the plot's area is blank";
    EXPECT_GE(colours.size(), 3u) << p["name"] << ": fewer than 3 colours drawn";
  }
  if (HasFailure()) {
    ADD_FAILURE() << "the pages, the screenshot and chromium's log are kept in " << b.dir;
  } else {
    common::RemoveTree(b.dir);
  }
}

}  // namespace
}  // namespace secmode::render
