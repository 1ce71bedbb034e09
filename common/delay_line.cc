#include "common/delay_line.h"

#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "common/clock.h"

namespace secmode::common {

DelayLine::DelayLine(uint64_t delay_ns, size_t max_bytes, Writer write)
    : delay_ns_(delay_ns), max_bytes_(max_bytes), write_(std::move(write)) {
  thread_ = std::thread([this] { Loop(); });
}

bool DelayLine::Push(Bytes& bytes) {
  std::unique_lock<std::mutex> lock(mu_);
  // One batch larger than the bound still goes, alone.
  room_cv_.wait(lock, [&] {
    return stopping_ || failed_ || queued_bytes_ == 0 || queued_bytes_ + bytes.size() <= max_bytes_;
  });
  if (stopping_ || failed_) return false;
  Item item;
  item.due_ns = NowNs() + delay_ns_;
  item.bytes.swap(bytes);
  if (!spare_.empty()) {
    bytes.swap(spare_.back());
    spare_.pop_back();
    spare_capacity_ -= std::min(spare_capacity_, bytes.capacity());
  }
  queued_bytes_ += item.bytes.size();
  q_.push_back(std::move(item));
  cv_.notify_one();
  return true;
}

void DelayLine::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  room_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t DelayLine::held_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_bytes_ + spare_capacity_;
}

size_t DelayLine::queued_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_bytes_;
}

uint64_t DelayLine::batches_written() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batches_;
}

void DelayLine::Loop() {
  // The delay must not grow by the kernel's default 50 us timer slack.
  prctl(PR_SET_TIMERSLACK, 1UL);
  std::vector<Bytes> due;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !q_.empty(); });
    if (stopping_) break;
    // Stop wakes the wait; a batch pushed meanwhile is due later.
    const uint64_t first_due = q_.front().due_ns;
    if (first_due > NowNs()) {
      cv_.wait_until(lock, SteadyAt(first_due), [&] { return stopping_; });
      if (stopping_) break;
    }
    const uint64_t now = NowNs();
    while (!q_.empty() && q_.front().due_ns <= now) {
      due.push_back(std::move(q_.front().bytes));
      q_.pop_front();
    }
    // The taken bytes count as held until they are written.
    lock.unlock();
    bool ok = true;
    size_t sent_bytes = 0;
    uint64_t written = 0;
    for (Bytes& b : due) {
      sent_bytes += b.size();
      if (!ok) continue;  // after a failed write the rest is dropped
      ok = write_(b);
      if (ok) ++written;
    }
    lock.lock();
    queued_bytes_ -= std::min(queued_bytes_, sent_bytes);
    batches_ += written;
    // Their buffers go back to Push (no allocation per batch).
    for (Bytes& b : due) {
      if (spare_capacity_ + b.capacity() > max_bytes_) break;
      spare_capacity_ += b.capacity();
      b.clear();
      spare_.push_back(std::move(b));
    }
    due.clear();
    room_cv_.notify_all();
    if (!ok) {
      failed_ = true;
      break;
    }
  }
  q_.clear();
  queued_bytes_ = 0;
  room_cv_.notify_all();
}

}  // namespace secmode::common
