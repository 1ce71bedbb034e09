#include "common/files.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace secmode::common {
namespace {

namespace fs = std::filesystem;

TEST(FilesTest, AtomicWriteReplacesWholeFileAndLeavesNoTemp) {
  auto dir = MakeTempDirectory("secmode-files-test-");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  const std::string path = *dir + "/out.json";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second, longer").ok());
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "second, longer");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(*dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  EXPECT_TRUE(RemoveTree(*dir).ok());
  EXPECT_FALSE(fs::exists(*dir));
}

TEST(FilesTest, WriteIntoMissingDirectoryNamesThePath) {
  Status s = WriteFileAtomically("/nonexistent-secmode-dir/x.json", "x");
  EXPECT_EQ(s.code(), Code::kIoError);
  EXPECT_NE(s.message().find("/nonexistent-secmode-dir/x.json"), std::string::npos);
}

TEST(FilesTest, TailOfFileKeepsLastLines) {
  auto dir = MakeTempDirectory("secmode-files-test-");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(WriteFileAtomically(*dir + "/log", "a\nb\nc\nd\n").ok());
  EXPECT_EQ(TailOfFile(*dir + "/log", 2), "c\nd\n");
  RemoveTree(*dir);
}

}  // namespace
}  // namespace secmode::common
