#include "render/report_html.h"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

namespace secmode::render {

namespace {

// One deleter per cmark handle type, so each owner holds a unique_ptr.
struct ParserFree {
  void operator()(cmark_parser* p) const { cmark_parser_free(p); }
};
struct NodeFree {
  void operator()(cmark_node* n) const { cmark_node_free(n); }
};
struct CharsFree {
  void operator()(char* s) const { std::free(s); }
};
using ParserPtr = std::unique_ptr<cmark_parser, ParserFree>;
using NodePtr = std::unique_ptr<cmark_node, NodeFree>;
using CharsPtr = std::unique_ptr<char, CharsFree>;

// A plot file's name as report.md links it ("scaling.svg"): a bare file
// name, no scheme, host or directory.
bool IsPlotName(const char* url) {
  const std::string_view u = url ? url : "";
  return u.size() > 4 && u.substr(u.size() - 4) == ".svg" &&
         u.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
             std::string_view::npos;
}

// Every image of the document that is not a plot file becomes its URL as
// text: report.html loads nothing, so nothing in a results.json (which is
// untrusted) can make opening it contact a host. (Plot images are inlined
// by InlinePlots, or said to be missing.)
void KeepOnlyPlotImages(cmark_node* doc) {
  std::vector<cmark_node*> foreign;
  cmark_iter* iter = cmark_iter_new(doc);
  for (cmark_event_type ev; (ev = cmark_iter_next(iter)) != CMARK_EVENT_DONE;) {
    cmark_node* node = cmark_iter_get_node(iter);
    if (ev == CMARK_EVENT_ENTER && cmark_node_get_type(node) == CMARK_NODE_IMAGE) {
      if (!IsPlotName(cmark_node_get_url(node))) foreign.push_back(node);
    }
  }
  cmark_iter_free(iter);
  for (cmark_node* image : foreign) {
    cmark_node* text = cmark_node_new(CMARK_NODE_TEXT);
    const char* url = cmark_node_get_url(image);
    cmark_node_set_literal(text,
                           (std::string("(image not shown: ") + (url ? url : "") + ")").c_str());
    cmark_node_replace(image, text);
    cmark_node_free(image);
  }
}

common::Result<std::string> MarkdownToHtml(const std::string& md) {
  cmark_gfm_core_extensions_ensure_registered();
  ParserPtr parser(cmark_parser_new(CMARK_OPT_DEFAULT));
  cmark_syntax_extension* table = cmark_find_syntax_extension("table");
  if (!parser || !table || !cmark_parser_attach_syntax_extension(parser.get(), table)) {
    return common::Status::Internal("cmark-gfm: cannot set up a parser with its table extension");
  }
  cmark_parser_feed(parser.get(), md.data(), md.size());
  NodePtr doc(cmark_parser_finish(parser.get()));
  if (!doc) return common::Status::Internal("cmark-gfm: cannot parse report.md");
  KeepOnlyPlotImages(doc.get());
  CharsPtr html(cmark_render_html(doc.get(), CMARK_OPT_DEFAULT,
                                  cmark_parser_get_syntax_extensions(parser.get())));
  if (!html) return common::Status::Internal("cmark-gfm: cannot render report.md as HTML");
  return std::string(html.get());
}

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// Prefixes every id of a gnuplot SVG, and every reference to one
// (href="#x", url(#x)), with `prefix`, so several plots inline in one page
// never resolve each other's definitions. Drops what precedes <svg (the XML
// declaration), which has no place inside HTML.
std::string InlineSvg(std::string svg, const std::string& prefix) {
  const size_t start = svg.find("<svg");
  if (start == std::string::npos) return "";
  svg.erase(0, start);
  for (const char q : {'\'', '"'}) {
    for (const char* before : {" id=", "\tid=", "\nid="}) {
      ReplaceAll(svg, std::string(before) + q, std::string(before) + q + prefix);
    }
    ReplaceAll(svg, std::string("href=") + q + "#", std::string("href=") + q + "#" + prefix);
  }
  ReplaceAll(svg, "url(#", "url(#" + prefix);
  return svg;
}

std::string PlotPrefix(int n) {
  std::string prefix = "p";
  prefix += std::to_string(n);
  prefix += '-';
  return prefix;
}

// cmark renders a Markdown image alone in its paragraph as
// <p><img src="NAME" alt="ALT" /></p>; each becomes a figure holding the
// plot itself.
void InlinePlots(std::string& html, const std::map<std::string, const std::string*>& svgs) {
  const std::string open = "<p><img src=\"";
  int n = 0;
  for (size_t at = html.find(open); at != std::string::npos; at = html.find(open, at + 1)) {
    const size_t src_end = html.find('"', at + open.size());
    const size_t alt_at = html.find("alt=\"", src_end);
    const size_t alt_end = alt_at == std::string::npos ? alt_at : html.find('"', alt_at + 5);
    const size_t close = alt_end == std::string::npos ? alt_end : html.find("</p>", alt_end);
    if (src_end == std::string::npos || close == std::string::npos) break;
    const std::string src = html.substr(at + open.size(), src_end - at - open.size());
    const std::string alt = html.substr(alt_at + 5, alt_end - alt_at - 5);
    std::string figure;
    auto it = svgs.find(src);
    if (it != svgs.end()) {
      figure = "<figure class=\"plot\" data-plot=\"" + src + "\">" +
               InlineSvg(*it->second, PlotPrefix(++n)) + "<figcaption>" + alt + " (" + src +
               ")</figcaption></figure>";
    } else {
      figure = "<p class=\"missing-plot\">The plot " + src + " (" + alt +
               ") was not drawn; its numbers are in the tables.</p>";
    }
    html.replace(at, close + 4 - at, figure);
  }
}

// Gives every <h2> an id and returns the table of contents linking them.
std::string NumberSections(std::string& html) {
  std::string toc;
  int n = 0;
  for (size_t at = html.find("<h2>"); at != std::string::npos; at = html.find("<h2>", at + 1)) {
    const size_t end = html.find("</h2>", at);
    if (end == std::string::npos) break;
    std::string id = "s";
    id += std::to_string(++n);
    std::string title = html.substr(at + 4, end - at - 4);
    html.replace(at, 4, "<h2 id=\"" + id + "\">");
    // The heading's text without inline tags (its entities stay escaped).
    std::string text;
    bool in_tag = false;
    for (char c : title) {
      if (c == '<') in_tag = true;
      if (!in_tag) text += c;
      if (c == '>') in_tag = false;
    }
    toc += "<li><a href=\"#" + id + "\">" + text + "</a></li>";
  }
  return toc.empty() ? "" : "<nav><h2>Contents</h2><ul>" + toc + "</ul></nav>";
}

std::string Title(const std::string& md) {
  const size_t at = md.rfind("# ", 0) == 0 ? 0 : md.find("\n# ");
  if (at == std::string::npos) return "secmode report";
  const size_t from = at == 0 ? 2 : at + 3;
  std::string title = md.substr(from, md.find('\n', from) - from);
  std::string escaped;
  for (char c : title) {
    if (c == '<') {
      escaped += "&lt;";
    } else if (c == '>') {
      escaped += "&gt;";
    } else if (c == '&') {
      escaped += "&amp;";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

constexpr const char* kStyle = R"(
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;margin:0;background:#fff}
main{max-width:1180px;margin:0 auto;padding:1em 2em 4em}
h1{font-size:1.7em;border-bottom:2px solid #d0d7de;padding-bottom:.3em}
h2{font-size:1.35em;margin-top:2em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
h3{font-size:1.1em;margin-top:1.6em}
code{font:13px ui-monospace,monospace;background:#f3f4f6;padding:.1em .3em;border-radius:3px}
nav ul{columns:2;padding-left:1.2em}nav h2{margin-top:1em}
.table-wrap{overflow-x:auto;margin:1em 0}
table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}
th,td{border:1px solid #d0d7de;padding:.25em .6em;white-space:nowrap}
th{background:#f6f8fa;position:relative}
th.sortable{cursor:pointer;user-select:none}
th.sortable:hover{background:#eaeef2}
th[aria-sort=ascending]::after{content:" \25b2";font-size:.8em}
th[aria-sort=descending]::after{content:" \25bc";font-size:.8em}
tbody tr:nth-child(even){background:#f9fafb}
figure.plot{margin:1.5em 0}
figure.plot svg{width:100%;max-width:1000px;height:auto;display:block}
figcaption{color:#57606a;font-size:13px;margin-top:.3em}
.missing-plot{color:#9a6700;background:#fff8c5;padding:.5em}
)";

// Sorts a table by the clicked column: numbers (a leading number, thousands
// separators ignored) as numbers when every filled cell of the column has
// one, text otherwise; "-" and empty cells stay last either way.
constexpr const char* kScript = R"(
(function(){
function num(t){var s=t.replace(/[,\s]/g,'').replace(/^[x~<>]+/,'');
var m=s.match(/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/i);return m?parseFloat(m[0]):null;}
function empty(t){return t===''||t==='-';}
document.querySelectorAll('table').forEach(function(table){
var head=table.tHead;if(!head||!table.tBodies.length)return;
var cells=head.rows[0].cells;
Array.prototype.forEach.call(cells,function(th,col){
th.classList.add('sortable');th.tabIndex=0;th.title='sort by this column';
function sort(){
var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
var asc=th.getAttribute('aria-sort')!=='ascending';
Array.prototype.forEach.call(cells,function(c){c.removeAttribute('aria-sort');});
th.setAttribute('aria-sort',asc?'ascending':'descending');
function text(r){return r.cells[col]?r.cells[col].textContent.trim():'';}
var numeric=rows.every(function(r){var t=text(r);return empty(t)||num(t)!==null;});
rows.sort(function(a,b){var x=text(a),y=text(b);
if(empty(x)||empty(y))return empty(x)-empty(y);
var d=numeric?num(x)-num(y):x.localeCompare(y,undefined,{numeric:true});
return asc?d:-d;});
rows.forEach(function(r){body.appendChild(r);});}
th.addEventListener('click',sort);
th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();sort();}});
});});
})();
)";

// The page may load nothing from anywhere (default-src 'none'; images only
// as data: URLs, of which it has none), and may run only kScript, named by
// its hash, so no script that found its way into the page would run. Styles
// may be inline (the page's <style> and the SVGs' attributes): with every
// fetch forbidden, a style can neither load nor run anything.
std::string ContentSecurityPolicy() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  EVP_Digest(kScript, std::string_view(kScript).size(), digest, &digest_len, EVP_sha256(), nullptr);
  unsigned char b64[2 * EVP_MAX_MD_SIZE + 4];
  const int b64_len = EVP_EncodeBlock(b64, digest, static_cast<int>(digest_len));
  return "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "img-src data:; style-src 'unsafe-inline'; script-src 'sha256-" +
         std::string(reinterpret_cast<const char*>(b64), static_cast<size_t>(b64_len)) +
         "'; base-uri 'none'; form-action 'none'\">";
}

}  // namespace

common::Result<std::string> HtmlReport(
    const std::string& report_md, const std::vector<std::pair<std::string, std::string>>& plots) {
  SECMODE_ASSIGN_OR_RETURN(std::string body, MarkdownToHtml(report_md));
  std::map<std::string, const std::string*> svgs;
  for (const auto& [name, contents] : plots) {
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".svg") == 0) svgs[name] = &contents;
  }
  InlinePlots(body, svgs);
  ReplaceAll(body, "<table>", "<div class=\"table-wrap\"><table>");
  ReplaceAll(body, "</table>", "</table></div>");
  const std::string toc = NumberSections(body);
  // The contents go after the first heading and the paragraphs before the
  // first section.
  const size_t first_section = body.find("<h2 id=");
  if (first_section != std::string::npos) body.insert(first_section, toc);
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" +
         ContentSecurityPolicy() + "\n<title>" + Title(report_md) + "</title>\n<style>" + kStyle +
         "</style>\n</head>\n<body>\n<main>\n" + body + "</main>\n<script>" + kScript +
         "</script>\n</body>\n</html>\n";
}

}  // namespace secmode::render
