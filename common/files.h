// File helpers: atomic writes and private temporary directories.
#ifndef SECMODE_COMMON_FILES_H_
#define SECMODE_COMMON_FILES_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace secmode::common {

// Writes `contents` to a temporary file next to `path` (a name unique to
// this process and call, created exclusively), fsyncs it and renames it over
// `path`, then fsyncs the directory: readers see the old file or the whole
// new one, never a truncated one. On failure `path` is as it was, the
// temporary is removed, and the error names `path` and the errno ("cannot
// write DIR/results.json: No space left on device (ENOSPC) ...").
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// Several files of one directory (name -> contents), all or none: every file
// is written to its temporary and fsynced first; only when all are written
// are they renamed over their names, in the order given. A failure before
// the renames leaves every file as it was and no temporary behind.
Status WriteFilesAtomically(const std::string& dir,
                            const std::vector<std::pair<std::string, std::string>>& files);

// Whether a file can be created in `dir` now (creates and removes an empty
// temporary): refuses a read-only or missing directory before a long run,
// with the errno. A full disk still takes an empty file, so it shows only
// when the results are written.
Status CheckWritableDirectory(const std::string& dir);

// "No space left on device (ENOSPC)": strerror and the errno's name.
std::string ErrnoText(int err);

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
