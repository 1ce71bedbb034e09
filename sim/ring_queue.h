// RingQueue: the simulator's queues (a thread's socket and batch, a
// connection's send and reply queues, the run queues): a FIFO that can also
// take an item at its front or in its middle, on one ring whose size is a
// power of two. It grows by doubling and never shrinks, so nothing is
// allocated once it has held the most a run needs (std::deque allocates and
// frees a block every few dozen items as a FIFO moves through it).
// Indexes count from the front. Not thread-safe: one per simulation.
#ifndef SECMODE_SIM_RING_QUEUE_H_
#define SECMODE_SIM_RING_QUEUE_H_

#include <cstddef>
#include <utility>
#include <vector>

namespace secmode::sim {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& operator[](size_t i) { return buf_[(head_ + i) & mask_]; }
  const T& operator[](size_t i) const { return buf_[(head_ + i) & mask_]; }

  // By value: `v` may be an item of this queue, which Grow moves.
  void push_back(T v) {
    if (size_ == capacity_) Grow();
    buf_[(head_ + size_) & mask_] = v;
    ++size_;
  }
  void push_front(T v) {
    if (size_ == capacity_) Grow();
    head_ = (head_ - 1) & mask_;
    buf_[head_] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }
  // Puts v at index i (0 <= i <= size), the items from i on one further back.
  void insert(size_t i, const T& v) {
    push_back(v);
    for (size_t k = size_ - 1; k > i; --k) std::swap((*this)[k], (*this)[k - 1]);
  }
  // Removes the item at index i, the items behind it one forward.
  void erase(size_t i) {
    for (size_t k = i; k + 1 < size_; ++k) (*this)[k] = (*this)[k + 1];
    --size_;
  }
  void swap(RingQueue& other) {
    buf_.swap(other.buf_);
    std::swap(head_, other.head_);
    std::swap(size_, other.size_);
    std::swap(mask_, other.mask_);
    std::swap(capacity_, other.capacity_);
  }

 private:
  [[gnu::noinline]] void Grow() {  // out of line: push_back stays small enough to inline
    const size_t n = buf_.empty() ? 8 : buf_.size() * 2;
    std::vector<T> next(n);
    for (size_t k = 0; k < size_; ++k) next[k] = (*this)[k];
    buf_.swap(next);
    head_ = 0;
    mask_ = n - 1;
    capacity_ = n;
  }
  std::vector<T> buf_;
  size_t head_ = 0, size_ = 0, mask_ = 0;
  size_t capacity_ = 0;  // buf_.size(), without its division by sizeof(T)
};

}  // namespace secmode::sim

#endif  // SECMODE_SIM_RING_QUEUE_H_
