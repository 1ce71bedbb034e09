// Formatting: numbers, sizes and CSV fields as reports, logs and messages
// print them; the one place such helpers live.
#ifndef SECMODE_COMMON_FORMAT_H_
#define SECMODE_COMMON_FORMAT_H_

#include <cstdint>
#include <string>

namespace secmode::common {

// One number through a printf format with one double conversion ("%.1f").
std::string Fmt(const char* printf_format, double value);
// printf into a std::string, any arguments (checked by the compiler).
std::string Sprintf(const char* printf_format, ...) __attribute__((format(printf, 1, 2)));

// "128 B", "4 KiB", "1 MiB" (binary units only when exact).
std::string SizeLabel(uint64_t bytes);

// "no skew", "2 ms skew".
std::string SkewLabel(int64_t ns);

// A CSV field, safe for any string (it may come from an untrusted
// results.json): one starting with = + - @ tab or carriage return, which a
// spreadsheet would read as a formula, gets a leading ' unless it is a plain
// number ("-1.5" stays a number); then quoted when it holds a comma, quote,
// newline or carriage return.
std::string CsvField(const std::string& s);

// `s` as plain text on one line, safe to print to a terminal whatever it
// holds (it may come from an untrusted results.json): every control
// character a space, i.e. C0 (newline, carriage return, tab, ESC, ...), DEL
// and C1 (U+0080..U+009F, which a terminal reads like ESC sequences), and
// each byte that is not part of valid UTF-8 (a lone 0x9b is CSI to a terminal
// not reading UTF-8) a space too. Other UTF-8 text is kept as it is.
std::string TerminalText(const std::string& s);

}  // namespace secmode::common

#endif  // SECMODE_COMMON_FORMAT_H_
