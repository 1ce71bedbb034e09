#include "cli/interrupt.h"

#include <pthread.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <ctime>

#include "suite/suite.h"

namespace secmode::cli {

Interrupt::Interrupt(std::string command, std::string stopping)
    : command_(std::move(command)), stopping_(std::move(stopping)) {
  sigemptyset(&signals_);
  for (int sig : {SIGINT, SIGTERM}) {
    // A signal this process was started ignoring (a background job of a
    // script) stays ignored: blocked, it would be taken instead.
    struct sigaction now {};
    if (sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_IGN) continue;
    sigaddset(&signals_, sig);
  }
  pthread_sigmask(SIG_BLOCK, &signals_, &saved_);
  thread_ = std::thread([this] { Watch(); });
}

Interrupt::~Interrupt() {
  done_ = true;
  thread_.join();
  // A signal that came after the last wait is taken here, not delivered.
  const timespec none{0, 0};
  for (int sig; (sig = sigtimedwait(&signals_, nullptr, &none)) > 0;) Note(sig);
  pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
}

int Interrupt::ExitStatus() const {
  const int sig = signal();
  return sig == 0 ? 0 : kExitInterruptedBase + sig;
}

void Interrupt::ExitIfInterrupted(const std::string& said) const {
  if (const int sig = signal()) {
    throw CLI::RuntimeError(
        "secmode " + command_ + ": interrupted by " + suite::SignalName(sig) + "; " + said,
        kExitInterruptedBase + sig);
  }
}

void Interrupt::Watch() {
  const timespec tick{0, 100 * 1000 * 1000};
  while (!done_) {
    const int sig = sigtimedwait(&signals_, nullptr, &tick);
    if (sig <= 0) continue;
    if (signal_.load() == 0) {
      Note(sig);
      if (!stopping_.empty()) {
        const std::string say = "\nsecmode " + command_ + ": " + suite::SignalName(sig) + ": " +
                                stopping_ + "; " + suite::SignalName(sig) +
                                " again quits at once, writing nothing\n";
        (void)!write(STDERR_FILENO, say.data(), say.size());
      }
      continue;
    }
    const std::string say = "\nsecmode " + command_ + ": " + suite::SignalName(sig) +
                            " again: quitting now, nothing written\n";
    (void)!write(STDERR_FILENO, say.data(), say.size());
    // Die by the signal itself, as an uncaught one would.
    ::signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    raise(sig);
    _exit(kExitInterruptedBase + sig);
  }
}

void Interrupt::Note(int sig) {
  int expected = 0;
  signal_.compare_exchange_strong(expected, sig);
}

}  // namespace secmode::cli
