#include "common/format.h"

#include <cstdarg>
#include <cstdio>

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

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace secmode::common
