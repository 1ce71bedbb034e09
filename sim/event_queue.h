// EventQueue: the simulator's future event list, a 4-ary min-heap ordered
// by (time, insertion number): half the levels of a binary heap, and of a
// pop's three comparisons per level the first two do not wait for each other.
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

  // Whether key (time a, order a) comes before (time b, order b): the order
  // events come out in, for keys kept outside the queue too. As one
  // unsigned 128-bit number: one comparison without a branch (times are
  // never negative).
  static bool KeyLess(int64_t time_a, uint64_t order_a, int64_t time_b, uint64_t order_b) {
    using Key = unsigned __int128;
    const Key ka = (Key{static_cast<uint64_t>(time_a)} << 64) | order_a;
    const Key kb = (Key{static_cast<uint64_t>(time_b)} << 64) | order_b;
    return ka < kb;
  }

  // Returns the event's insertion number.
  uint64_t Push(int64_t time, uint32_t kind, uint32_t target, uint32_t tag) {
    const uint64_t order = next_order_++;
    PushWithOrder(time, order, kind, target, tag);
    return order;
  }
  // An insertion number taken now for an event pushed later with
  // PushWithOrder: it comes out among events of its time as if pushed now.
  uint64_t TakeOrder() { return next_order_++; }
  // `order` from TakeOrder, each used at most once.
  void PushWithOrder(int64_t time, uint64_t order, uint32_t kind, uint32_t target, uint32_t tag) {
    const Event e{time, order, kind, target, tag};
    size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {  // sift up
      const size_t parent = (i - 1) / kArity;
      if (!Less(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Bottom-up: the hole at the root goes down to a leaf along the least
  // children (comparisons without a branch at each level), then the last
  // element rises from there (mostly not at all: it was a leaf). The pops
  // come out in the same order as with any correct heap, keys being unique.
  Event Pop() {
    const Event out = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n > 0) {
      size_t i = 0;
      for (size_t child = 1; child < n; child = kArity * i + 1) {
        if (child + kArity <= n) {  // all four children: the least in two rounds
          const size_t a = child + (Less(heap_[child + 1], heap_[child]) ? 1 : 0);
          const size_t b = child + 2 + (Less(heap_[child + 3], heap_[child + 2]) ? 1 : 0);
          child = Less(heap_[b], heap_[a]) ? b : a;
        } else {
          for (size_t k = child + 1; k < n; ++k) child = Less(heap_[k], heap_[child]) ? k : child;
        }
        heap_[i] = heap_[child];
        i = child;
      }
      while (i > 0) {
        const size_t parent = (i - 1) / kArity;
        if (!Less(last, heap_[parent])) break;
        heap_[i] = heap_[parent];
        i = parent;
      }
      heap_[i] = last;
    }
    return out;
  }

 private:
  static constexpr size_t kArity = 4;
  static bool Less(const Event& a, const Event& b) { return KeyLess(a.time, a.order, b.time, b.order); }
  std::vector<Event> heap_;
  uint64_t next_order_ = 0;
};

}  // namespace secmode::sim

#endif  // SECMODE_SIM_EVENT_QUEUE_H_
