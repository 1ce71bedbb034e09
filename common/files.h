// File helpers: atomic writes and private temporary directories.
#ifndef SECMODE_COMMON_FILES_H_
#define SECMODE_COMMON_FILES_H_

#include <string>
#include <string_view>

#include "common/status.h"

namespace secmode::common {

// Writes `contents` to a temporary file next to `path`, fsyncs it and renames
// it over `path`: readers see the old file or the whole new one, never a
// truncated one.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

Result<std::string> ReadFile(const std::string& path);

// The last `max_lines` lines of a file, for error messages; "" if unreadable.
std::string TailOfFile(const std::string& path, int max_lines = 20);

// mkdir -p.
Status MakeDirectories(const std::string& path);

// Creates a fresh private (0700) directory under $TMPDIR or /tmp named
// "<prefix>XXXXXX".
Result<std::string> MakeTempDirectory(const std::string& prefix);

// rm -rf; missing is fine.
Status RemoveTree(const std::string& path);

}  // namespace secmode::common

#endif  // SECMODE_COMMON_FILES_H_
