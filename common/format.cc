#include "common/format.h"

#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <string_view>

namespace secmode::common {

std::string Sprintf(const char* printf_format, ...) {
  va_list args;
  va_start(args, printf_format);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, printf_format, copy);
  va_end(copy);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, printf_format, args);
  va_end(args);
  return out;
}

std::string Fmt(const char* printf_format, double value) {
  char buf[64];
  snprintf(buf, sizeof buf, printf_format, value);
  return buf;
}

std::string SizeLabel(uint64_t size) {
  if (size >= (1u << 20) && size % (1u << 20) == 0) return std::to_string(size >> 20) + " MiB";
  if (size >= 1024 && size % 1024 == 0) return std::to_string(size >> 10) + " KiB";
  return std::to_string(size) + " B";
}

std::string SkewLabel(int64_t ns) {
  if (ns == 0) return "no skew";
  return Fmt("%g", static_cast<double>(ns) / 1e6) + " ms skew";
}

namespace {

// A decimal number as a spreadsheet reads one: [+-]digits[.digits][e[+-]digits].
bool IsPlainNumber(const std::string& s) {
  size_t i = s[0] == '+' || s[0] == '-' ? 1 : 0;
  const size_t digits_from = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  }
  if (i == digits_from || (i == digits_from + 1 && s[digits_from] == '.')) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t exp_from = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == exp_from) return false;
  }
  return i == s.size();
}

}  // namespace

std::string CsvField(const std::string& s) {
  std::string field = s;
  // A spreadsheet reads a cell starting with one of these as a formula
  // (=HYPERLINK(...), +cmd|...); a leading ' makes it text (OWASP's "CSV
  // injection" advice). A plain number stays a number.
  if (!field.empty() && std::string_view("=+-@\t\r").find(field[0]) != std::string_view::npos &&
      !IsPlainNumber(field)) {
    field.insert(0, 1, '\'');
  }
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

namespace {

// The length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlong
// form, no surrogate, nothing above U+10FFFF), or 0.
size_t Utf8Length(const std::string& s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = at(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > s.size() || at(1) < lo || at(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (at(k) < 0x80 || at(k) > 0xbf) return 0;
  }
  return n;
}

}  // namespace

std::string TerminalText(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8Length(s, i);
    const auto c = static_cast<unsigned char>(s[i]);
    // C0 and DEL, C1 (0xc2 0x80..0x9f), and any byte not in valid UTF-8.
    const bool control = n == 0 || (n == 1 && (c < 0x20 || c == 0x7f)) ||
                         (n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0);
    if (control) {
      out += ' ';
    } else {
      out.append(s, i, n);
    }
    i += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace secmode::common
