// Test helpers for files: a private temporary directory removed with its
// object, and a file's text ("" when it cannot be read: the assertion that
// reads it then fails with what it found).
#ifndef SECMODE_TESTS_SUPPORT_TEMP_DIR_H_
#define SECMODE_TESTS_SUPPORT_TEMP_DIR_H_

#include <gtest/gtest.h>

#include <string>

#include "common/files.h"

namespace secmode::testing {

struct TempDir {
  explicit TempDir(const std::string& prefix = "secmode-test") {
    auto d = common::MakeTempDirectory(prefix);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    if (d.ok()) path = *d;
  }
  ~TempDir() {
    if (!path.empty()) (void)common::RemoveTree(path);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path;
};

inline std::string TextOf(const std::string& path) {
  auto text = common::ReadFile(path);
  return text.ok() ? *text : std::string();
}

}  // namespace secmode::testing

#endif  // SECMODE_TESTS_SUPPORT_TEMP_DIR_H_
