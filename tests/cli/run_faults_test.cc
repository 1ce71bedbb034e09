// `secmode run` (the real binary) under faults: SIGINT mid-run (what was
// measured is written and marked interrupted, the realm and servers are gone,
// exit status 130), a second SIGINT (it ends at once), a disk that fills
// before the results are written and a read-only output directory (a clear
// error naming the file and errno; a previous run there is intact); and
// `secmode lab` under SIGINT (it stops after its point, exit status 130, its
// realm, namespaces and servers removed by itself before it ends).
//
// Each run gets a private TMPDIR, so "nothing of that run left behind" is
// checkable: no directory in it afterwards and no process whose command
// line names it (krb5kdc -P <realm dir>/..., the realm's reaper).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/files.h"
#include "tests/support/private_tmpfs.h"
#include "tests/support/processes.h"

#ifndef SECMODE_BIN
#error "SECMODE_BIN must name the secmode binary"
#endif

namespace secmode {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A short run with a realm: sys and krb5p micro rows, then the gss section
// (krb5p) and the e2e section.
const std::vector<std::string> kShortRun = {"run",       "--quick", "--modes",
                                            "sys,krb5p", "--sizes", "4096"};

using testing::WaitUntil;

std::string Read(const std::string& path) {
  auto text = common::ReadFile(path);
  return text.ok() ? *text : "";
}

// `secmode ARGS` started in a process group of its own (as a shell starts a
// foreground job: Ctrl-C goes to the whole group), with TMPDIR=`tmpdir`,
// stdout and stderr to files in `work`.
class Secmode {
 public:
  // `ignore_sigint`: started as a shell starts a background job of a script
  // (SIGINT ignored).
  Secmode(const std::vector<std::string>& args, const std::string& work, const std::string& tmpdir,
          bool ignore_sigint = false)
      : out_(work + "/stdout"), err_(work + "/stderr") {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      signal(SIGINT, ignore_sigint ? SIG_IGN : SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      setenv("TMPDIR", tmpdir.c_str(), 1);
      int out = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out < 0 || err < 0) _exit(126);
      dup2(out, 1);
      dup2(err, 2);
      std::vector<std::string> argv = {SECMODE_BIN};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<char*> c;
      for (auto& a : argv) c.push_back(a.data());
      c.push_back(nullptr);
      execv(SECMODE_BIN, c.data());
      _exit(127);
    }
    if (pid_ > 0) setpgid(pid_, pid_);  // either side may win the race
  }
  ~Secmode() {
    if (pid_ > 0 && !reaped_) {
      kill(-pid_, SIGKILL);
      Wait(10000);
    }
  }

  pid_t pid() const { return pid_; }
  std::string out() const { return Read(out_); }
  std::string err() const { return Read(err_); }
  // Ctrl-C: the signal to the whole process group.
  void SignalGroup(int sig) const { kill(-pid_, sig); }
  // Waits up to `timeout_ms`; true once it has exited (status()).
  bool Wait(int timeout_ms) {
    if (reaped_) return true;
    reaped_ = WaitUntil([&] { return waitpid(pid_, &status_, WNOHANG) == pid_; }, timeout_ms);
    return reaped_;
  }
  int status() const { return status_; }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

// Processes whose command line contains `text`, as "pid: cmdline".
std::vector<std::string> ProcessesNaming(const std::string& text) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = Read("/proc/" + name + "/cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    const std::string stat = Read("/proc/" + name + "/stat");
    const size_t paren = stat.rfind(')');
    const bool zombie = paren != std::string::npos && paren + 2 < stat.size() &&
                        (stat[paren + 2] == 'Z' || stat[paren + 2] == 'X');
    if (!zombie && cmdline.find(text) != std::string::npos) found.push_back(name + ": " + cmdline);
  }
  return found;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "; ") + s;
  return out;
}

// A work directory and a private TMPDIR inside it; removed at the end.
struct Scratch {
  std::string work, tmpdir;
  Scratch() {
    auto dir = common::MakeTempDirectory("secmode-run-faults-");
    if (dir.ok()) {
      work = *dir;
      tmpdir = work + "/tmp";
      fs::create_directory(tmpdir);
    }
  }
  ~Scratch() {
    if (!work.empty()) common::RemoveTree(work);
  }
  // Nothing of the run is left: its TMPDIR is empty and no process names it.
  void ExpectNothingLeft() const {
    EXPECT_TRUE(WaitUntil([&] { return ProcessesNaming(tmpdir).empty(); }, 10000))
        << Join(ProcessesNaming(tmpdir));
    EXPECT_TRUE(WaitUntil([&] { return Entries(tmpdir).empty(); }, 10000)) << Join(Entries(tmpdir));
  }
};

TEST(RunFaultsTest, SigintWritesWhatWasMeasuredAndLeavesNothingBehind) {
  Scratch s;
  ASSERT_FALSE(s.work.empty());
  const std::string out = s.work + "/out";
  std::vector<std::string> args = kShortRun;
  args.insert(args.end(), {"--out", out});
  Secmode run(args, s.work, s.tmpdir);
  ASSERT_GT(run.pid(), 0);
  // The micro table is measured (both modes) and the realm is up when the
  // gss section starts.
  ASSERT_TRUE(WaitUntil([&] { return run.err().find("section gss") != std::string::npos; }, 120000))
      << run.out() << run.err();
  ASSERT_FALSE(ProcessesNaming(s.tmpdir + "/secmode-realm-").empty()) << "no realm running";
  const auto t0 = std::chrono::steady_clock::now();
  run.SignalGroup(SIGINT);
  ASSERT_TRUE(run.Wait(60000)) << "still running a minute after SIGINT\n" << run.out();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "secmode run ended " << took << " s after SIGINT\n";
  const std::string said = run.out() + run.err();
  ASSERT_TRUE(WIFEXITED(run.status())) << "wait status " << run.status() << "\n" << said;
  EXPECT_EQ(WEXITSTATUS(run.status()), 130) << said;
  EXPECT_NE(run.err().find("interrupted by SIGINT"), std::string::npos) << said;

  // What was measured is written, and results.json says the run stopped.
  auto text = common::ReadFile(out + "/results.json");
  ASSERT_TRUE(text.ok()) << said;
  json doc = json::parse(*text);
  std::map<std::string, int> legs;
  for (const auto& row : doc["micro"]) legs[row["mode"].get<std::string>()] += 1;
  EXPECT_EQ(legs["sys"], 4) << doc["micro"].dump();
  EXPECT_EQ(legs["krb5p"], 4) << doc["micro"].dump();
  bool marked = false;
  for (const auto& e : doc.value("errors", json::array())) {
    if (e.value("interrupted", "") == "SIGINT") marked = true;
  }
  EXPECT_TRUE(marked) << doc.value("errors", json::array()).dump();
  EXPECT_NE(Read(out + "/report.md").find("| interrupted | by SIGINT"), std::string::npos);
  // The realm (its KDC, its reaper, its directory) and the servers are gone.
  s.ExpectNothingLeft();
}

TEST(RunFaultsTest, SecondSigintEndsItAtOnceAndLeavesNothingBehind) {
  Scratch s;
  ASSERT_FALSE(s.work.empty());
  const std::string out = s.work + "/out";
  std::vector<std::string> args = kShortRun;
  args.insert(args.end(), {"--out", out});
  Secmode run(args, s.work, s.tmpdir);
  ASSERT_GT(run.pid(), 0);
  ASSERT_TRUE(WaitUntil([&] { return run.err().find("section gss") != std::string::npos; }, 120000))
      << run.out() << run.err();
  run.SignalGroup(SIGINT);
  // The first was taken (signals of one kind pending at once merge).
  ASSERT_TRUE(
      WaitUntil([&] { return run.err().find("again quits at once") != std::string::npos; }, 10000))
      << run.err();
  const auto t0 = std::chrono::steady_clock::now();
  run.SignalGroup(SIGINT);
  ASSERT_TRUE(run.Wait(10000)) << "still running 10 s after a second SIGINT";
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "secmode run ended " << took << " s after the second SIGINT\n";
  ASSERT_TRUE(WIFSIGNALED(run.status())) << "wait status " << run.status() << "\n" << run.err();
  EXPECT_EQ(WTERMSIG(run.status()), SIGINT);
  EXPECT_NE(run.err().find("quitting now"), std::string::npos) << run.err();
  s.ExpectNothingLeft();
}

// Started ignoring SIGINT (a background job of a script), `secmode run`
// keeps ignoring it, and so does its KDC (a process group of its own): the
// run ends normally with every krb5 step measured (krb5p alone: the
// steps after the signal are the ones that need the KDC).
TEST(RunFaultsTest, IgnoredSigintStaysIgnoredByTheRunAndItsKdc) {
  Scratch s;
  ASSERT_FALSE(s.work.empty());
  const std::string out = s.work + "/out";
  std::vector<std::string> args = {"run", "--quick", "--modes", "krb5p", "--sizes", "4096"};
  args.insert(args.end(), {"--out", out});
  Secmode run(args, s.work, s.tmpdir, /*ignore_sigint=*/true);
  ASSERT_GT(run.pid(), 0);
  ASSERT_TRUE(WaitUntil([&] { return run.err().find("section gss") != std::string::npos; }, 120000))
      << run.out() << run.err();
  run.SignalGroup(SIGINT);
  ASSERT_TRUE(run.Wait(300000)) << run.out();
  const std::string said = run.out() + run.err();
  ASSERT_TRUE(WIFEXITED(run.status())) << "wait status " << run.status() << "\n" << said;
  EXPECT_EQ(WEXITSTATUS(run.status()), 0) << said;
  EXPECT_EQ(said.find("Cannot contact any KDC"), std::string::npos) << said;
  auto text = common::ReadFile(out + "/results.json");
  ASSERT_TRUE(text.ok()) << said;
  json doc = json::parse(*text);
  EXPECT_FALSE(doc.contains("errors")) << doc["errors"].dump();
  EXPECT_FALSE(doc["e2e"].empty());
  s.ExpectNothingLeft();
}

// A saved run to take the lab's costs from: the checked-in reference run.
std::string ReferenceRun() {
  const std::string dir = std::string(SECMODE_SOURCE_DIR) + "/results/reference";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (fs::is_regular_file(e.path() / "results.json", ec)) return e.path().string();
  }
  return "";
}

// The lab's network namespaces that `pid` made (lab/net_lab.h names them
// secmode-lab-<pid>-<n>).
std::vector<std::string> NamespacesOf(pid_t pid) {
  std::vector<std::string> found;
  std::error_code ec;
  const std::string prefix = "secmode-lab-" + std::to_string(pid) + "-";
  for (const auto& e : fs::directory_iterator("/run/netns", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) found.push_back(name);
  }
  return found;
}

// `secmode lab` (root; skipped where it has no lab) interrupted by SIGINT
// while it measures: it stops after the point, prints and writes what it
// measured (marked interrupted), exits 130, and by the time it has exited it
// has removed its realm, its lab's namespaces and its servers itself: the
// check is made the moment it ends, before its reapers could have.
TEST(RunFaultsTest, LabSigintStopsAfterThePointAndRemovesItsLabBeforeItEnds) {
  const std::string results = ReferenceRun();
  if (results.empty()) GTEST_SKIP() << "no reference run in the source tree";
  Scratch s;
  ASSERT_FALSE(s.work.empty());
  const std::string out = s.work + "/lab.json";
  Secmode lab({"lab", "--quick", "--modes", "krb5p", "--results", results, "--out", out}, s.work,
              s.tmpdir);
  ASSERT_GT(lab.pid(), 0);
  // The first link measured: the realm, the lab and its servers are up.
  bool ended = false;
  ASSERT_TRUE(WaitUntil(
      [&] {
        ended = lab.Wait(0);
        return ended || lab.err().find("round trip") != std::string::npos;
      },
      120000))
      << lab.err();
  if (ended && lab.err().find("no lab") != std::string::npos) {
    GTEST_SKIP() << lab.err();
  }
  ASSERT_FALSE(ended) << lab.err();
  ASSERT_FALSE(NamespacesOf(lab.pid()).empty()) << "no lab running\n" << lab.err();
  ASSERT_FALSE(ProcessesNaming(s.tmpdir).empty()) << "no realm running";
  lab.SignalGroup(SIGINT);
  ASSERT_TRUE(lab.Wait(60000)) << "still running a minute after SIGINT\n" << lab.err();
  // Nothing of it left the moment it ended.
  const std::vector<std::string> namespaces = NamespacesOf(lab.pid());
  const std::vector<std::string> processes = ProcessesNaming(s.tmpdir);
  const std::vector<std::string> entries = Entries(s.tmpdir);
  const std::string said = lab.out() + lab.err();
  ASSERT_TRUE(WIFEXITED(lab.status())) << "wait status " << lab.status() << "\n" << said;
  EXPECT_EQ(WEXITSTATUS(lab.status()), 130) << said;
  EXPECT_NE(lab.err().find("interrupted by SIGINT"), std::string::npos) << said;
  EXPECT_TRUE(namespaces.empty()) << Join(namespaces);
  EXPECT_TRUE(processes.empty()) << Join(processes);
  EXPECT_TRUE(entries.empty()) << Join(entries);
  // What was measured is written and says it stopped.
  auto text = common::ReadFile(out);
  ASSERT_TRUE(text.ok()) << said;
  const json doc = json::parse(*text);
  EXPECT_TRUE(doc.value("interrupted", false)) << doc.dump(1);
  EXPECT_FALSE(doc.at("links").empty());
  s.ExpectNothingLeft();
}

// Fills the file system under the output directory (a private tmpfs) after
// the pre-run check passed; `secmode run` measures, then cannot write.
TEST(RunFaultsTest, DiskFullWhenResultsAreWrittenKeepsThePreviousRun) {
  Scratch s;
  ASSERT_FALSE(s.work.empty());
  const std::string mount = s.work + "/mnt";
  fs::create_directory(mount);
  auto outcome = secmode::testing::InPrivateTmpfs(mount, 64 << 10, [&]() -> std::string {
    const std::string out = mount + "/out";
    fs::create_directory(out);
    if (!common::WriteFileAtomically(out + "/results.json", "the previous results\n").ok() ||
        !common::WriteFileAtomically(out + "/report.md", "the previous report\n").ok()) {
      return "cannot write the previous run";
    }
    if (!secmode::testing::FillUp(mount).ok()) return "cannot fill the tmpfs";
    std::vector<std::string> args = {"run",     "--quick", "--modes", "sys",
                                     "--sizes", "64",      "--out",   out};
    Secmode run(args, s.work, s.tmpdir);
    if (!run.Wait(300000)) return "secmode run did not end within 5 minutes";
    const std::string said = run.out() + run.err();
    if (!WIFEXITED(run.status()) || WEXITSTATUS(run.status()) != 1) {
      return "wait status " + std::to_string(run.status()) + ", expected exit 1:\n" + said;
    }
    if (said.find("measuring round 3 of 3 ... done") == std::string::npos) return "it measured nothing";
    // The terminal still shows the micro table that could not be saved.
    if (run.out().find("round trip ns") == std::string::npos) return "no table:\n" + said;
    if (run.err().find("cannot write " + out + "/results.json") == std::string::npos ||
        run.err().find("No space left on device (ENOSPC)") == std::string::npos) {
      return "the error names no file or errno:\n" + run.err();
    }
    if (Read(out + "/results.json") != "the previous results\n" ||
        Read(out + "/report.md") != "the previous report\n") {
      return "the previous run changed";
    }
    for (const auto& name : Entries(out)) {
      if (name != "results.json" && name != "report.md") return "left in the directory: " + name;
    }
    return "";
  });
  if (outcome.skipped) GTEST_SKIP() << "no private tmpfs: " << outcome.failure;
  EXPECT_EQ(outcome.failure, "");
  s.ExpectNothingLeft();
}

// A read-only output directory is refused before anything is measured.
TEST(RunFaultsTest, ReadOnlyOutputDirectoryIsRefusedBeforeMeasuring) {
  Scratch s;
  ASSERT_FALSE(s.work.empty());
  const std::string mount = s.work + "/mnt";
  fs::create_directory(mount);
  auto outcome = secmode::testing::InPrivateTmpfs(mount, 64 << 10, [&]() -> std::string {
    const std::string out = mount + "/out";
    fs::create_directory(out);
    if (!common::WriteFileAtomically(out + "/results.json", "the previous results\n").ok()) {
      return "cannot write the previous run";
    }
    if (!secmode::testing::RemountReadOnly(mount, 64 << 10).ok()) return "cannot remount";
    std::vector<std::string> args = {"run",     "--quick", "--modes", "sys",
                                     "--sizes", "64",      "--out",   out};
    Secmode run(args, s.work, s.tmpdir);
    if (!run.Wait(60000)) return "secmode run did not end within a minute";
    const std::string said = run.out() + run.err();
    if (!WIFEXITED(run.status()) || WEXITSTATUS(run.status()) != 1) {
      return "wait status " + std::to_string(run.status()) + ", expected exit 1:\n" + said;
    }
    if (said.find("measuring") != std::string::npos) return "it measured first:\n" + said;
    if (run.err().find("cannot write into " + out) == std::string::npos ||
        run.err().find("Read-only file system (EROFS)") == std::string::npos) {
      return "the error names no directory or errno:\n" + run.err();
    }
    if (Read(out + "/results.json") != "the previous results\n") return "the previous run changed";
    return "";
  });
  if (outcome.skipped) GTEST_SKIP() << "no private tmpfs: " << outcome.failure;
  EXPECT_EQ(outcome.failure, "");
  s.ExpectNothingLeft();
}

}  // namespace
}  // namespace secmode
