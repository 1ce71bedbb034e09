#include "common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace secmode::common {

namespace fs = std::filesystem;

std::string ErrnoText(int err) {
  const char* name = strerrorname_np(err);
  return std::string(strerror(err)) + " (" + (name ? name : "errno " + std::to_string(err)) + ")";
}

namespace {

// A name next to `path` no other writer uses: this process's pid and a
// per-process counter.
std::string TemporaryName(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Makes the renames in `dir` durable. Best effort: some file systems refuse
// fsync on a directory, and the files themselves are already synced.
void SyncDirectory(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd);
  close(fd);
}

// Writes and fsyncs `contents` into a new temporary for `path`; on failure
// removes it and names `path`, the temporary and the errno.
Result<std::string> WriteTemporary(const std::string& path, std::string_view contents) {
  const std::string tmp = TemporaryName(path);
  auto failed = [&](const char* what, int err) {
    return Status::IoError("cannot write " + path + ": " + what + " " + tmp + ": " +
                           ErrnoText(err));
  };
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return failed("creating its temporary", errno);
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return failed("writing its temporary", err);
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    const int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return failed("flushing its temporary", err);
  }
  if (close(fd) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return failed("closing its temporary", err);
  }
  return tmp;
}

Status RenameOver(const std::string& tmp, const std::string& path) {
  if (rename(tmp.c_str(), path.c_str()) == 0) return Status::Ok();
  const int err = errno;
  unlink(tmp.c_str());
  return Status::IoError("cannot write " + path + ": renaming " + tmp +
                         " over it: " + ErrnoText(err));
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  SECMODE_ASSIGN_OR_RETURN(std::string tmp, WriteTemporary(path, contents));
  SECMODE_RETURN_IF_ERROR(RenameOver(tmp, path));
  SyncDirectory(DirectoryOf(path));
  return Status::Ok();
}

Status WriteFilesAtomically(const std::string& dir,
                            const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::pair<std::string, std::string>> written;  // temporary, path
  for (const auto& [name, contents] : files) {
    const std::string path = dir + "/" + name;
    auto tmp = WriteTemporary(path, contents);
    if (!tmp.ok()) {
      for (const auto& w : written) unlink(w.first.c_str());
      return tmp.status();
    }
    written.emplace_back(*tmp, path);
  }
  for (size_t i = 0; i < written.size(); ++i) {
    Status s = RenameOver(written[i].first, written[i].second);
    if (!s.ok()) {
      for (size_t j = i + 1; j < written.size(); ++j) unlink(written[j].first.c_str());
      return s;
    }
  }
  SyncDirectory(dir);
  return Status::Ok();
}

Status CheckWritableDirectory(const std::string& dir) {
  const std::string probe = TemporaryName(dir + "/.secmode-write-check");
  int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::IoError("cannot write into " + dir + ": creating " + probe + ": " +
                           ErrnoText(errno));
  }
  close(fd);
  unlink(probe.c_str());
  return Status::Ok();
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot open " + path + ": " + strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TailOfFile(const std::string& path, int max_lines) {
  std::ifstream in(path);
  if (!in) return "";
  std::deque<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
    if (static_cast<int>(lines.size()) > max_lines) lines.pop_front();
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

Status MakeDirectories(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return Status::IoError("cannot create directory " + path + ": " + ec.message());
  return Status::Ok();
}

Result<std::string> MakeTempDirectory(const std::string& prefix) {
  const char* base = getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return Status::IoError("mkdtemp " + templ + ": " + strerror(errno));
  }
  return std::string(buf.data());
}

Status RemoveTree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return Status::IoError("cannot remove " + path + ": " + ec.message());
  return Status::Ok();
}

}  // namespace secmode::common
