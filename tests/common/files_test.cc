#include "common/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "tests/support/private_tmpfs.h"

namespace secmode::common {
namespace {

namespace fs = std::filesystem;
using secmode::testing::FillUp;
using secmode::testing::RemountReadOnly;

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

// The names in `dir`.
std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

size_t OpenFds() {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    (void)e;
    ++n;
  }
  return n;
}

// Runs `body` on a private tmpfs of `size` bytes (tests/support/private_tmpfs.h).
void OnTmpfs(size_t size, const std::function<std::string(const std::string&)>& body) {
  auto mp = MakeTempDirectory("secmode-files-tmpfs-");
  ASSERT_TRUE(mp.ok()) << mp.status().ToString();
  const std::string dir = *mp;
  auto outcome = secmode::testing::InPrivateTmpfs(dir, size, [&] { return body(dir); });
  RemoveTree(dir);
  if (outcome.skipped) GTEST_SKIP() << "no private tmpfs: " << outcome.failure;
  EXPECT_EQ(outcome.failure, "");
}

#define CHECK_OR_SAY(cond, what) \
  if (!(cond)) return std::string(what)

TEST(FilesTest, DiskFullKeepsThePreviousFileAndNamesTheErrno) {
  OnTmpfs(64 << 10, [](const std::string& dir) -> std::string {
    const std::string path = dir + "/results.json";
    CHECK_OR_SAY(WriteFileAtomically(path, "previous").ok(), "cannot write the previous file");
    CHECK_OR_SAY(FillUp(dir).ok(), "cannot fill the tmpfs");
    // An empty file still fits, so the check before a run cannot see this.
    CHECK_OR_SAY(CheckWritableDirectory(dir).ok(), "a full tmpfs refused an empty file");
    const size_t fds = OpenFds();
    Status s = WriteFileAtomically(path, std::string(16 << 10, 'n'));
    CHECK_OR_SAY(!s.ok(), "a write to a full disk succeeded");
    CHECK_OR_SAY(s.code() == Code::kIoError, "code: " + s.ToString());
    CHECK_OR_SAY(s.message().find("cannot write " + path + ":") == 0, "path: " + s.message());
    CHECK_OR_SAY(s.message().find("No space left on device (ENOSPC)") != std::string::npos,
                 "errno: " + s.message());
    CHECK_OR_SAY(*ReadFile(path) == "previous", "the previous file changed");
    CHECK_OR_SAY(Names(dir) == (std::set<std::string>{"results.json", "filler"}),
                 "a temporary was left behind");
    CHECK_OR_SAY(OpenFds() == fds, "a descriptor leaked");
    return "";
  });
}

TEST(FilesTest, ReadOnlyDirectoryKeepsThePreviousFileAndNamesTheErrno) {
  OnTmpfs(64 << 10, [](const std::string& dir) -> std::string {
    const std::string path = dir + "/results.json";
    CHECK_OR_SAY(WriteFileAtomically(path, "previous").ok(), "cannot write the previous file");
    CHECK_OR_SAY(RemountReadOnly(dir, 64 << 10).ok(), "cannot remount read-only");
    Status check = CheckWritableDirectory(dir);
    CHECK_OR_SAY(!check.ok(), "a read-only directory passed the check");
    CHECK_OR_SAY(check.message().find("cannot write into " + dir) == 0, check.message());
    CHECK_OR_SAY(check.message().find("(EROFS)") != std::string::npos, check.message());
    Status s = WriteFileAtomically(path, "new");
    CHECK_OR_SAY(!s.ok(), "a write to a read-only mount succeeded");
    CHECK_OR_SAY(s.message().find("cannot write " + path + ":") == 0, s.message());
    CHECK_OR_SAY(s.message().find("Read-only file system (EROFS)") != std::string::npos,
                 s.message());
    CHECK_OR_SAY(*ReadFile(path) == "previous", "the previous file changed");
    CHECK_OR_SAY(Names(dir) == std::set<std::string>{"results.json"}, "a file was added");
    return "";
  });
}

TEST(FilesTest, FilesOfOneDirectoryAreWrittenAllOrNone) {
  OnTmpfs(64 << 10, [](const std::string& dir) -> std::string {
    CHECK_OR_SAY(WriteFilesAtomically(dir, {{"a", "old a"}, {"b", "old b"}}).ok(),
                 "cannot write the previous files");
    CHECK_OR_SAY(FillUp(dir).ok(), "cannot fill the tmpfs");
    // Room for the first new file, not for the second.
    auto size = fs::file_size(dir + "/filler");
    CHECK_OR_SAY(truncate((dir + "/filler").c_str(), static_cast<off_t>(size) - 8192) == 0,
                 "truncate");
    Status s = WriteFilesAtomically(dir, {{"a", "new a"}, {"b", std::string(32 << 10, 'b')}});
    CHECK_OR_SAY(!s.ok(), "the second file fitted");
    CHECK_OR_SAY(s.message().find("cannot write " + dir + "/b:") == 0, s.message());
    CHECK_OR_SAY(*ReadFile(dir + "/a") == "old a", "the first file was replaced alone");
    CHECK_OR_SAY(*ReadFile(dir + "/b") == "old b", "the second file changed");
    CHECK_OR_SAY(Names(dir) == (std::set<std::string>{"a", "b", "filler"}),
                 "a temporary was left behind");
    // With room, both are replaced.
    CHECK_OR_SAY(unlink((dir + "/filler").c_str()) == 0, "unlink");
    CHECK_OR_SAY(WriteFilesAtomically(dir, {{"a", "new a"}, {"b", "new b"}}).ok(), "with room");
    CHECK_OR_SAY(*ReadFile(dir + "/a") == "new a" && *ReadFile(dir + "/b") == "new b", "contents");
    return "";
  });
}

}  // namespace
}  // namespace secmode::common
