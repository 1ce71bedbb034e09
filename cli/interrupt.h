// SIGINT and SIGTERM for the commands that stop cleanly on them (`secmode
// run`, `lab`, `serve`): one scheme for all three.
//
// While an Interrupt lives, the two signals are blocked in every thread
// (threads started later inherit the mask, so no measurement sees EINTR;
// helper programs are started with an empty mask, common/subprocess.h) and
// one thread takes them with sigtimedwait. The first sets signal(): the
// command (or the library it hands interrupt() to) stops after the step it
// is in and returns normally, so whoever made a KDC, a server, a namespace
// or a temporary directory removes it on the way out, and what was measured
// is written. The second ends the process at once, by that signal (the
// realm's and the lab's reapers still remove what they watch; nothing is
// written). A signal the process was started ignoring (a background job of
// a script) stays ignored.
//
// Construct it before the command starts any thread (a thread started
// before would have the signals unblocked and die of them). One per process
// at a time; signal() and interrupt() may be read from any thread.
#ifndef SECMODE_CLI_INTERRUPT_H_
#define SECMODE_CLI_INTERRUPT_H_

#include <signal.h>

#include <atomic>
#include <string>
#include <thread>

namespace secmode::cli {

// Interrupted by a signal: 128 + the signal (130 for SIGINT, 143 for
// SIGTERM), as a shell reports a command killed by it.
inline constexpr int kExitInterruptedBase = 128;

class Interrupt {
 public:
  // `command` names the command in what it says on stderr; `stopping` is
  // what the first signal makes it do ("stopping after the current step
  // and writing what was measured"), said on stderr with the second
  // signal's effect; empty: the first signal is taken quietly.
  Interrupt(std::string command, std::string stopping);
  ~Interrupt();
  Interrupt(const Interrupt&) = delete;
  Interrupt& operator=(const Interrupt&) = delete;

  // The first signal's number once it came, for the libraries' `interrupt`
  // options (suite::SuiteOptions, suite::LabValidationOptions).
  const std::atomic<int>* interrupt() const { return &signal_; }
  int signal() const { return signal_.load(); }
  // The conventional exit status: 128 + the signal, 0 when none came.
  int ExitStatus() const;
  // When a signal came: throws the CLI11 error main turns into "secmode
  // <command>: interrupted by SIGINT; <said>" and ExitStatus(). Call it
  // after what was measured is written. A command whose ordinary end is
  // the signal (`secmode serve`) does not, and exits 0.
  void ExitIfInterrupted(const std::string& said) const;

 private:
  void Watch();
  void Note(int sig);

  const std::string command_, stopping_;
  sigset_t signals_{};
  sigset_t saved_{};
  std::atomic<int> signal_{0};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace secmode::cli

#endif  // SECMODE_CLI_INTERRUPT_H_
