// MostOverTime: the most a value reached in each stretch of a capture's
// time, in at most kBins bins of equal width. The width starts at kFirstWidthNs
// and doubles (two neighbours merged into one) whenever a value comes later
// than the last bin ends, so the memory is kBins values however long the
// capture; a value stamped before the first is put in the first bin (a
// capture's time stamps need not rise).
//
// Thread safety: none.
#ifndef SECMODE_TRACE_MOST_OVER_TIME_H_
#define SECMODE_TRACE_MOST_OVER_TIME_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace secmode::trace {

class MostOverTime {
 public:
  static constexpr size_t kBins = 128;
  static constexpr int64_t kFirstWidthNs = 1000000;  // 1 ms

  void Add(int64_t ts_ns, uint32_t value);
  bool empty() const { return bins_.empty(); }
  int64_t start_ns() const { return start_ns_; }
  int64_t width_ns() const { return width_ns_; }
  // Bin i covers [start + i * width, start + (i + 1) * width); a bin no
  // value fell in is nullopt's stand-in, kNone.
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> bins() const;

 private:
  int64_t start_ns_ = 0, width_ns_ = kFirstWidthNs;
  std::vector<uint32_t> bins_;  // value + 1; 0: no value fell in the bin
};

}  // namespace secmode::trace

#endif  // SECMODE_TRACE_MOST_OVER_TIME_H_
