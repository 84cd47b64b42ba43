#pragma once

// What a node counts of the calls to one of its methods. Every call adds to
// these on its own thread with relaxed atomics and no lock: a scrape reads a
// figure that may lag a call in flight by one, which Prometheus tolerates.

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace lp::detail {

// Upper bounds of the latency buckets, in seconds: from a direct call (tens
// of microseconds) to a call that waited out a long batch or a slow method.
inline constexpr std::array<double, 17> latency_bounds = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,    0.1,    0.25,    0.5,    1,     2.5,    5,     10};

// The same in nanoseconds, what a call counts in: an integer atomic adds in
// one instruction, a floating-point one in a compare-and-swap loop.
inline constexpr auto latency_bounds_ns = [] {
  std::array<std::uint64_t, latency_bounds.size()> ns{};
  for (std::size_t i = 0; i < ns.size(); ++i)
    ns[i] = static_cast<std::uint64_t>(latency_bounds[i] * 1e9 + 0.5);
  return ns;
}();

// Upper bounds of the batch size buckets of a batched method.
inline constexpr std::array<std::uint64_t, 12> batch_bounds = {
    1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096};

// The statuses a call ends with (docs/protocol.md); any other lands in the
// last slot, reported as "other".
inline constexpr std::array<int, 10> call_statuses = {200, 400, 401, 404, 408,
                                                      413, 415, 500, 503, 0};

inline std::size_t status_slot(int status) {
  for (std::size_t i = 0; i + 1 < call_statuses.size(); ++i)
    if (call_statuses[i] == status) return i;
  return call_statuses.size() - 1;
}

// Values and their sum in whole units: nanoseconds, or calls per batch.
template <std::size_t N>
struct histogram {
  // Counts per bucket, not cumulative (the exposition adds them up), with
  // one more for the values above every bound.
  std::array<std::atomic<std::uint64_t>, N + 1> buckets{};
  std::atomic<std::uint64_t> sum{0};

  void add(std::uint64_t value, const std::array<std::uint64_t, N>& bounds) {
    std::size_t i = 0;
    while (i < N && value > bounds[i]) ++i;
    buckets[i].fetch_add(1, std::memory_order_relaxed);
    sum.fetch_add(value, std::memory_order_relaxed);
  }
};

// Aligned so that two methods called from different threads share no line.
struct alignas(64) method_calls {
  std::array<std::atomic<std::uint64_t>, call_statuses.size()> by_status{};
  histogram<latency_bounds.size()> latency;
  std::atomic<std::uint64_t> request_bytes{0}, reply_bytes{0};
  std::atomic<std::int64_t> in_flight{0};
  histogram<batch_bounds.size()> batch_sizes;  // for a batched method

  void begin() { in_flight.fetch_add(1, std::memory_order_relaxed); }

  void end(int status, std::chrono::steady_clock::duration took, std::size_t request,
           std::size_t reply) {
    in_flight.fetch_sub(1, std::memory_order_relaxed);
    by_status[status_slot(status)].fetch_add(1, std::memory_order_relaxed);
    latency.add(static_cast<std::uint64_t>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()),
                latency_bounds_ns);
    request_bytes.fetch_add(request, std::memory_order_relaxed);
    reply_bytes.fetch_add(reply, std::memory_order_relaxed);
  }
};

// Counts one call from its start to its end, wherever it returns.
class call_timer {
 public:
  call_timer(method_calls& calls, std::size_t request_bytes)
      : request_bytes(request_bytes),
        calls_(calls),
        start_(std::chrono::steady_clock::now()) {
    calls_.begin();
  }
  call_timer(const call_timer&) = delete;
  call_timer& operator=(const call_timer&) = delete;
  ~call_timer() {
    calls_.end(status, std::chrono::steady_clock::now() - start_, request_bytes,
               reply_bytes);
  }

  int status = 500;  // until the call says otherwise
  std::size_t request_bytes;
  std::size_t reply_bytes = 0;

 private:
  method_calls& calls_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace lp::detail
