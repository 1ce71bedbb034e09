#include "cli/terminal_progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>

#include "common/clock.h"

namespace secmode::cli {

namespace {

size_t TerminalWidth() {
  winsize w{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 20) return w.ws_col;
  return 80;
}

double Seconds(uint64_t from_ns, uint64_t to_ns) {
  return to_ns > from_ns ? static_cast<double>(to_ns - from_ns) / 1e9 : 0;
}

}  // namespace

TerminalProgress::TerminalProgress(std::ostream& terminal) : terminal_(terminal) {
  start_ns_ = common::NowNs();
  ticker_ = std::thread([this] { Tick(); });
}

TerminalProgress::~TerminalProgress() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  ticker_.join();
  std::lock_guard<std::mutex> lock(mu_);
  terminal_ << "\r\033[K" << std::flush;
}

void TerminalProgress::Planned(const std::vector<suite::ProgressStep>& steps) {
  std::lock_guard<std::mutex> lock(mu_);
  steps_ = steps;
  DrawLocked();
}

void TerminalProgress::Started(size_t step) {
  std::lock_guard<std::mutex> lock(mu_);
  current_ = step;
  running_ = true;
  step_start_ns_ = common::NowNs();
  DrawLocked();
}

void TerminalProgress::Finished(size_t step) {
  std::lock_guard<std::mutex> lock(mu_);
  if (step < steps_.size()) {
    elapsed_done_ += Seconds(step_start_ns_, common::NowNs());
    planned_done_ += steps_[step].planned_seconds;
  }
  running_ = false;
  current_ = step + 1;
  DrawLocked();
}

void TerminalProgress::PrintLine(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  terminal_ << "\r\033[K" << line << "\n";
  DrawLocked();
}

void TerminalProgress::DrawLocked() {
  if (steps_.empty()) return;
  const uint64_t now = common::NowNs();
  const size_t current = std::min(current_, steps_.size() - 1);
  const double in_step = running_ ? Seconds(step_start_ns_, now) : 0;
  const double left =
      suite::EstimateSecondsLeft(steps_, current, in_step, elapsed_done_, planned_done_);
  terminal_ << "\r\033[K"
            << ProgressLine(steps_, current, Seconds(start_ns_, now), left, TerminalWidth())
            << std::flush;
}

void TerminalProgress::Tick() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) DrawLocked();
}

int TerminalProgress::LineBuffer::overflow(int c) {
  if (c == traits_type::eof()) return traits_type::not_eof(c);
  const char ch = static_cast<char>(c);
  xsputn(&ch, 1);
  return c;
}

std::streamsize TerminalProgress::LineBuffer::xsputn(const char* s, std::streamsize n) {
  for (std::streamsize i = 0; i < n; ++i) {
    if (s[i] == '\n') {
      owner_->PrintLine(pending_);
      pending_.clear();
    } else {
      pending_ += s[i];
    }
  }
  return n;
}

}  // namespace secmode::cli
