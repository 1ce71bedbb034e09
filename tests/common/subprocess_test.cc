#include "common/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "common/files.h"

namespace secmode::common {
namespace {

TEST(SubprocessTest, RunsWithEnvironmentAndCapturesOutput) {
  auto dir = MakeTempDirectory("secmode-sub-test-");
  ASSERT_TRUE(dir.ok());
  Command cmd{
      {"sh", "-c", "echo \"$SECMODE_X\"; exit 3"}, {{"SECMODE_X", "hello"}}, *dir + "/log", ""};
  auto rc = RunAndWait(cmd);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(*rc, 3);
  EXPECT_EQ(*ReadFile(*dir + "/log"), "hello\n");
  RemoveTree(*dir);
}

TEST(SubprocessTest, MissingProgramIsNamed) {
  auto rc = RunAndWait(Command{{"secmode-no-such-program", "--flag"}, {}, "", ""});
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), Code::kUnavailable);
  EXPECT_NE(rc.status().message().find("secmode-no-such-program"), std::string::npos);
}

TEST(SubprocessTest, TimeoutKills) {
  auto rc = RunAndWait(Command{{"sleep", "10"}, {}, "", ""}, 100);
  ASSERT_FALSE(rc.ok());
  EXPECT_NE(rc.status().message().find("timed out"), std::string::npos);
}

TEST(SubprocessTest, OwnProcessGroupLeavesOursAlone) {
  Command cmd{{"sleep", "30"}, {}, "", ""};
  cmd.own_process_group = true;
  auto pid = Spawn(cmd);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  // Spawn returns after the child is set up, so its group is already its own.
  EXPECT_EQ(getpgid(*pid), *pid);
  EXPECT_NE(getpgid(*pid), getpgrp());
  Terminate(*pid, 1000);
  // Gone and reaped: no such process any more.
  errno = 0;
  EXPECT_EQ(kill(*pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace secmode::common
