// `secmode run`'s progress on a terminal: one line at the bottom, redrawn in
// place at every step and once a second,
//   [ 5/31] measuring krb5i:aes256-cts-hmac-sha1-96:mit · 0:42 elapsed · about 6 min left
// with the run's log (written to log()) printed above it a whole line at a
// time. The line is suite::ProgressLine and the time
// left suite::EstimateSecondsLeft's, said as "about".
// Used only when stdout is a terminal; otherwise the log goes to stderr and
// stdout holds the summary alone.
#ifndef SECMODE_CLI_TERMINAL_PROGRESS_H_
#define SECMODE_CLI_TERMINAL_PROGRESS_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>
#include <thread>
#include <vector>

#include "suite/progress.h"

namespace secmode::cli {

class TerminalProgress : public suite::ProgressListener {
 public:
  explicit TerminalProgress(std::ostream& terminal);
  ~TerminalProgress() override;  // stops redrawing and clears the line
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  std::ostream& log() { return log_; }

  void Planned(const std::vector<suite::ProgressStep>& steps) override;
  void Started(size_t step) override;
  void Finished(size_t step) override;

 private:
  // Collects the log's text and hands each whole line to PrintLine.
  class LineBuffer : public std::streambuf {
   public:
    explicit LineBuffer(TerminalProgress* owner) : owner_(owner) {}

   protected:
    int overflow(int c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;

   private:
    TerminalProgress* owner_;
    std::string pending_;
  };

  void PrintLine(const std::string& line);
  void DrawLocked();
  void Tick();

  std::ostream& terminal_;
  LineBuffer buffer_{this};
  std::ostream log_{&buffer_};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<suite::ProgressStep> steps_;
  size_t current_ = 0;
  bool running_ = false;
  uint64_t start_ns_ = 0, step_start_ns_ = 0;
  double elapsed_done_ = 0, planned_done_ = 0;  // over finished steps
  std::thread ticker_;
};

}  // namespace secmode::cli

#endif  // SECMODE_CLI_TERMINAL_PROGRESS_H_
