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

}  // namespace secmode::common
