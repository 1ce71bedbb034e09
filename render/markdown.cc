#include "render/markdown.h"

#include <algorithm>
#include <string_view>

namespace secmode::render {

namespace {

bool IsControl(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

}  // namespace

std::string MdText(const std::string& s) {
  constexpr std::string_view kSyntax = "\\`*_[]<>|!&~#";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (IsControl(c)) {
      out += ' ';
      continue;
    }
    if (kSyntax.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string MdCode(const std::string& s) {
  std::string body;
  size_t run = 0, longest = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (IsControl(c)) {
      body += ' ';
    } else if (c == '|') {
      body += "\\|";
    } else {
      body += c;
    }
  }
  const std::string fence(longest + 1, '`');
  // A space between the fence and a backquote of the text (CommonMark drops
  // one such space at each end).
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

}  // namespace secmode::render
