#pragma once

// malloc_tuning.hpp's share of the library's compiled part: the definitions
// that detail/implementation.hpp gathers (detail/config.hpp says where they
// are compiled).

#include <launchpad/detail/util/malloc_tuning.hpp>

#if defined(__GLIBC__)
#include <malloc.h>
#include <pthread.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>

namespace lp::detail {

namespace malloc_tuning {

using clock = std::chrono::steady_clock;

inline constexpr int kept_mmap_threshold = 128 << 20;
inline constexpr int kept_trim_threshold = 128 << 20;
inline constexpr int returning_trim_threshold = 128 << 10;  // glibc's default
// A wave of departing threads is over once none has left for this long (each
// has ended by then); a wave that goes on is given back at least this often.
inline constexpr std::chrono::milliseconds settled{200};
inline constexpr std::chrono::milliseconds longest_wait{2000};

struct state {
  std::atomic<bool> tuned{false};
  std::atomic<std::size_t> returns{0};
  std::mutex mutex;
  bool returning = false;  // a wave is under way: the threshold is lowered
  std::size_t departures = 0;
  clock::time_point first_departure, last_departure;
};

// Never destroyed: the thread that gives memory back may outlive main().
inline state& the_state() {
  static auto* shared = new state;
  return *shared;
}

#if defined(__GLIBC__)
// On a thread of its own, once the wave has settled: the free pages inside
// every arena go back (malloc_trim), and large blocks are kept again; first
// again for threads that left meanwhile.
inline void give_back() {
  auto& s = the_state();
  for (;;) {
    clock::time_point due;
    std::size_t seen = 0;
    {
      std::lock_guard lock(s.mutex);
      due = std::min(s.last_departure + settled, s.first_departure + longest_wait);
      seen = s.departures;
    }
    if (clock::now() < due) {
      std::this_thread::sleep_until(due);
      continue;
    }
    ::malloc_trim(0);
    s.returns.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(s.mutex);
    if (s.departures == seen) {
      ::mallopt(M_TRIM_THRESHOLD, kept_trim_threshold);
      s.returning = false;
      return;
    }
    s.first_departure = clock::now();
  }
}

// malloc_trim leaves the free top of a thread's arena alone: glibc trims it
// only when a block of 64 KiB or more is freed into that arena while the top
// is past the trim threshold. A departing thread's frees as it ends (its
// buffers, its cache of small blocks) do that under the lowered threshold;
// one such block freed on purpose once its thread_locals are gone trims the
// top whatever they were.
inline void free_a_large_block(void*) {
  char* volatile block = static_cast<char*>(::malloc(std::size_t{64} << 10));
  ::free(block);
}

// glibc runs a thread's pthread key destructors after its thread_local ones.
inline pthread_key_t at_thread_end() {
  static pthread_key_t key = [] {
    pthread_key_t made{};
    ::pthread_key_create(&made, free_a_large_block);
    return made;
  }();
  return key;
}
#endif

}  // namespace malloc_tuning

LP_API void keep_large_blocks() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* chosen :
         {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"})
      if (std::getenv(chosen)) return;
    ::mallopt(M_MMAP_THRESHOLD, malloc_tuning::kept_mmap_threshold);
    ::mallopt(M_TRIM_THRESHOLD, malloc_tuning::kept_trim_threshold);
    malloc_tuning::at_thread_end();
    malloc_tuning::the_state().tuned = true;
  });
#endif
}

LP_API void pool_thread_leaving() {
#if defined(__GLIBC__)
  using namespace malloc_tuning;
  auto& s = the_state();
  if (!s.tuned.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(s.mutex);
  s.last_departure = clock::now();
  ++s.departures;
  if (s.returning) {
    ::pthread_setspecific(at_thread_end(), &s);  // any value but null
    return;
  }
  s.first_departure = s.last_departure;
  try {
    std::thread(give_back).detach();
  } catch (const std::system_error&) {
    return;  // no thread to spare: this wave's memory waits for a later one
  }
  s.returning = true;
  ::mallopt(M_TRIM_THRESHOLD, returning_trim_threshold);
  ::pthread_setspecific(at_thread_end(), &s);
#endif
}

LP_API std::size_t memory_returns() {
  return malloc_tuning::the_state().returns.load(std::memory_order_relaxed);
}

}  // namespace lp::detail
