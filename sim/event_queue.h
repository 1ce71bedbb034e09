// EventQueue: the simulator's future event list, a binary min-heap ordered
// by (time, insertion number).
//
// The insertion number makes every key unique, so events at the same time
// come out in the order they were scheduled on every platform (a plain
// std::priority_queue leaves ties to the library's heap algorithm). Events
// are small PODs; nothing is allocated per event once the heap has grown.
// Not thread-safe: one per simulation.
#ifndef SECMODE_SIM_EVENT_QUEUE_H_
#define SECMODE_SIM_EVENT_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace secmode::sim {

struct Event {
  int64_t time;     // ns
  uint64_t order;   // set by Push
  uint32_t kind;    // simulator-defined
  uint32_t target;  // a slot, connection or context index
  uint32_t tag;     // attempt / epoch / generation, to recognise stale events
};

class EventQueue {
 public:
  void Reserve(size_t n) { heap_.reserve(n); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  void Push(int64_t time, uint32_t kind, uint32_t target, uint32_t tag) {
    Event e{time, next_order_++, kind, target, tag};
    size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {  // sift up
      size_t parent = (i - 1) / 2;
      if (!Less(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  Event Pop() {
    Event out = heap_.front();
    Event last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n > 0) {  // sift the last element down from the root
      size_t i = 0;
      for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && Less(heap_[child + 1], heap_[child])) ++child;
        if (!Less(heap_[child], last)) break;
        heap_[i] = heap_[child];
        i = child;
      }
      heap_[i] = last;
    }
    return out;
  }

 private:
  static bool Less(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.order < b.order);
  }
  std::vector<Event> heap_;
  uint64_t next_order_ = 0;
};

}  // namespace secmode::sim

#endif  // SECMODE_SIM_EVENT_QUEUE_H_
