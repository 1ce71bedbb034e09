// InPrivateTmpfs(): runs a test body in a forked child that has a mount
// namespace of its own with a small tmpfs mounted on a directory, so a test
// can fill a file system (ENOSPC) or make it read-only (EROFS; root ignores
// a 0555 mode, not a read-only mount) without touching the machine: the
// mount is seen by no other process and goes away with the child.
//
// As root the child unshares its mount namespace; otherwise it also makes a
// user namespace (where the kernel allows unprivileged ones). When neither
// works the outcome says skipped and why.
#ifndef SECMODE_TESTS_SUPPORT_PRIVATE_TMPFS_H_
#define SECMODE_TESTS_SUPPORT_PRIVATE_TMPFS_H_

#include <cstddef>
#include <functional>
#include <string>

#include "common/status.h"

namespace secmode::testing {

struct TmpfsOutcome {
  bool skipped = false;  // no namespace could be made: `failure` says why
  std::string failure;   // "" when the body passed
};

// `mount_point` must be an empty directory. `body` runs in the child with
// the tmpfs mounted there and returns "" on success or what went wrong; it
// must not use GoogleTest assertions (they would not reach the parent).
TmpfsOutcome InPrivateTmpfs(const std::string& mount_point, size_t size_bytes,
                            const std::function<std::string()>& body);

// In the body: remounts the tmpfs read-only.
common::Status RemountReadOnly(const std::string& mount_point, size_t size_bytes);

// In the body: writes `dir`/filler until the file system is full (ENOSPC).
common::Status FillUp(const std::string& dir);

}  // namespace secmode::testing

#endif  // SECMODE_TESTS_SUPPORT_PRIVATE_TMPFS_H_
