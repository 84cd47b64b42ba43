#pragma once

// What a node counts of the calls to one of its methods. Every thread that
// answers calls counts into its own share, without a lock or a locked
// instruction; a scrape adds the shares up.

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/util/tally.hpp>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace lp::detail {

// Upper bounds of the latency buckets, in seconds (protocol.toml's: a
// Python node counts in the same buckets).
inline constexpr const auto& latency_bounds = protocol::calls::latency_bounds;

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

// The statuses a call ends with, counted apart (protocol.toml's), then a
// last slot, 0, for any other, reported as "other".
inline constexpr auto call_statuses = [] {
  std::array<int, protocol::calls::statuses.size() + 1> slots{};
  std::copy(protocol::calls::statuses.begin(), protocol::calls::statuses.end(),
            slots.begin());
  return slots;
}();

inline std::size_t status_slot(int status) {
  for (std::size_t i = 0; i + 1 < call_statuses.size(); ++i)
    if (call_statuses[i] == status) return i;
  return call_statuses.size() - 1;
}

// Values and their sum in whole units: nanoseconds, or calls per batch.
// Count is a tally where one thread adds, a plain number where a reader
// adds up what the threads counted.
template <std::size_t N, class Count = std::uint64_t>
struct histogram {
  // Counts per bucket, not cumulative (the exposition adds them up), with
  // one more for the values above every bound.
  std::array<Count, N + 1> buckets{};
  Count sum{};

  void add(std::uint64_t value, const std::array<std::uint64_t, N>& bounds) requires
      std::same_as<Count, tally> {
    std::size_t i = 0;
    while (i < N && value > bounds[i]) ++i;
    buckets[i].add(1);
    sum.add(value);
  }
  template <class Other>
  void add_up(const histogram<N, Other>& other) {
    for (std::size_t i = 0; i <= N; ++i) buckets[i] += other.buckets[i].get();
    sum += other.sum.get();
  }
  std::uint64_t count() const {
    std::uint64_t n = 0;
    for (auto bucket : buckets) n += bucket;
    return n;
  }
};

// The fastest and the slowest call's time, in nanoseconds (fastest above
// slowest until a call has ended): a latency estimate from the buckets
// stays within them, so that a method called once shows that call's time.
template <class Count>
struct latency_extremes;

// One thread's, kept as a tally is: a load and a store, no locked
// instruction.
template <>
struct latency_extremes<tally> {
  std::atomic<std::uint64_t> fastest{UINT64_MAX}, slowest{0};

  void add(std::uint64_t ns) noexcept {
    if (ns < fastest.load(std::memory_order_relaxed))
      fastest.store(ns, std::memory_order_relaxed);
    if (ns > slowest.load(std::memory_order_relaxed))
      slowest.store(ns, std::memory_order_relaxed);
  }
};

template <>
struct latency_extremes<std::uint64_t> {
  std::uint64_t fastest = UINT64_MAX, slowest = 0;

  void add_up(const latency_extremes<tally>& other) {
    fastest = std::min(fastest, other.fastest.load(std::memory_order_relaxed));
    slowest = std::max(slowest, other.slowest.load(std::memory_order_relaxed));
  }
};

// What a node counted of the calls to one method, as a scrape reads it.
template <class Count>
struct call_figures {
  std::array<Count, call_statuses.size()> by_status{};
  histogram<latency_bounds.size(), Count> latency;
  latency_extremes<Count> extremes;
  Count request_bytes{}, reply_bytes{};
  Count in_flight{};                                  // calls begun less calls ended
  histogram<batch_bounds.size(), Count> batch_sizes;  // for a batched method
};

// One thread's share of a method's figures; aligned so that two threads'
// shares share no cache line.
struct alignas(64) call_share : call_figures<tally> {
  void end(int status, std::chrono::steady_clock::duration took, std::size_t request,
           std::size_t reply) {
    in_flight.subtract(1);
    by_status[status_slot(status)].add(1);
    auto ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(took).count());
    extremes.add(ns);
    latency.add(ns, latency_bounds_ns);
    request_bytes.add(request);
    reply_bytes.add(reply);
  }
};

// The figures of one method: a share per thread that counts, added up when
// read.
class method_calls {
 public:
  method_calls() = default;
  method_calls(const method_calls&) = delete;
  method_calls& operator=(const method_calls&) = delete;

  // This thread's share, made on the thread's first call. A small cache per
  // thread finds it without the lock; ids are never reused, so a cached
  // share of a node that has gone is never taken for a new one.
  call_share& mine() {
    struct cached {
      std::uint64_t id = 0;
      call_share* share = nullptr;
    };
    thread_local std::array<cached, 16> cache{};
    auto& slot = cache[id_ % cache.size()];
    if (slot.id != id_) slot = {id_, &share_of(std::this_thread::get_id())};
    return *slot.share;
  }

  call_figures<std::uint64_t> total() const {
    call_figures<std::uint64_t> sum;
    std::lock_guard lock(mutex_);
    for (const auto& [thread, share] : shares_) {
      for (std::size_t i = 0; i < sum.by_status.size(); ++i)
        sum.by_status[i] += share->by_status[i].get();
      sum.latency.add_up(share->latency);
      sum.extremes.add_up(share->extremes);
      sum.request_bytes += share->request_bytes.get();
      sum.reply_bytes += share->reply_bytes.get();
      sum.in_flight += share->in_flight.get();
      sum.batch_sizes.add_up(share->batch_sizes);
    }
    return sum;
  }

 private:
  // A thread that ended leaves its share; a new thread given the same id
  // goes on adding to it, alone, so the shares stay as many as the threads
  // alive at once.
  call_share& share_of(std::thread::id thread) {
    std::lock_guard lock(mutex_);
    for (auto& [owner, share] : shares_)
      if (owner == thread) return *share;
    return *shares_.emplace_back(thread, std::make_unique<call_share>()).second;
  }

  static std::uint64_t next_id() {
    static std::atomic<std::uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  const std::uint64_t id_ = next_id();
  mutable std::mutex mutex_;
  std::vector<std::pair<std::thread::id, std::unique_ptr<call_share>>> shares_;
};

// Counts one call from its start to its end, wherever it returns. It counts
// into the share of the thread that made it, so it ends on that thread.
class call_timer {
 public:
  using clock = std::chrono::steady_clock;

  call_timer(method_calls& calls, std::size_t request_bytes,
             clock::time_point start = clock::now())
      : request_bytes(request_bytes), share_(calls.mine()), start_(start) {
    share_.in_flight.add(1);
  }
  call_timer(const call_timer&) = delete;
  call_timer& operator=(const call_timer&) = delete;
  ~call_timer() {
    if (!stopped_) stop();
  }

  // Counts the call as ended now, and returns when that was.
  clock::time_point stop() {
    auto now = clock::now();
    stopped_ = true;
    share_.end(status, now - start_, request_bytes, reply_bytes);
    return now;
  }

  int status = 500;  // until the call says otherwise
  std::size_t request_bytes;
  std::size_t reply_bytes = 0;

 private:
  call_share& share_;
  clock::time_point start_;
  bool stopped_ = false;
};

}  // namespace lp::detail
