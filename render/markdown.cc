#include "render/markdown.h"

#include <algorithm>
#include <string_view>

#include "common/format.h"

namespace secmode::render {

namespace {

std::string Code(const std::string& s, bool in_cell) {
  std::string body;
  size_t run = 0, longest = 0;
  for (char c : common::TerminalText(s)) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (in_cell && c == '|') body += '\\';
    body += c;
  }
  const std::string fence(longest + 1, '`');
  // A space between the fence and a backquote of the text (CommonMark drops
  // one such space at each end).
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

}  // namespace

std::string MdText(const std::string& s) {
  constexpr std::string_view kSyntax = "\\`*_[]<>|!&~#";
  std::string out;
  for (char c : common::TerminalText(s)) {
    if (kSyntax.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string MdCode(const std::string& s) { return Code(s, false); }

std::string MdCodeCell(const std::string& s) { return Code(s, true); }

}  // namespace secmode::render
