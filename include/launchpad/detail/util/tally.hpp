#pragma once

#include <atomic>
#include <cstdint>

namespace lp::detail {

// A count that only one thread adds to, with a load and a store: no locked
// instruction, which on a direct call (well under a microsecond) would cost
// several percent. Any thread may read it; a reader sees a count at most one
// add late. A count that goes down (in flight, waiting) wraps below 0 as
// unsigned numbers do, and sums of such counts come out right.
class tally {
 public:
  void add(std::uint64_t n) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void subtract(std::uint64_t n) noexcept { add(0 - n); }
  std::uint64_t get() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

}  // namespace lp::detail
