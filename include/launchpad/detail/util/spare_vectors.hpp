#pragma once

// The storage of large vectors of numbers, used again by the next call.
//
// A node that takes and returns a std::vector of megabytes gets its values
// in memory glibc hands out and takes back on every call: on a server
// thread, whose arena is a heap of at most 64 MiB whatever M_MMAP_THRESHOLD
// says, a block of 64 MiB is mmapped anew each time, and every page of it
// faults and is zeroed by the kernel on its first write. On a VM that costs
// more than two copies of the values, on each side of each call
// (benchmarks/README.md, 12e). So the vector a node returned, once its
// reply no longer needs it, is kept here (wire/result.hpp, write_result),
// and the next
// large array decoded into a std::vector of that element type
// (typed_array::unpack) takes its storage: a steady stream of calls copies
// into memory already faulted in.
//
// Bounded: a vector is kept only from 1 MiB (below that malloc's heap keeps
// the memory anyway), is taken only by a vector of at least half its size,
// at most `most_kept` per element type and `cap` bytes in all are kept, what
// has not been taken for `idle_limit` is freed at the next use of the store,
// and all of it when the threads of a load retire (let_go, called by a pool
// thread that leaves: util/thread_pool.hpp), so that a node's memory
// follows its load down as malloc_tuning.hpp has it.

#include <chrono>
#include <cstddef>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

namespace lp::detail::spare {

using clock = std::chrono::steady_clock;

inline constexpr std::size_t smallest = std::size_t{1} << 20;  // bytes
inline constexpr std::size_t cap = std::size_t{256} << 20;     // bytes, all types
inline constexpr std::size_t most_kept = 4;                    // per element type
inline constexpr auto idle_limit = std::chrono::seconds(30);

// The bytes kept, all element types together, and how to free each type's.
struct account {
  std::mutex mutex;
  std::size_t bytes = 0;
  std::vector<void (*)(account&)> let_go;  // one per element type kept so far
};

// Never destroyed: a vector may come back while the process ends.
inline account& the_account() {
  static auto* shared = new account;
  return *shared;
}

// Frees every vector kept: a load has gone.
inline void let_go() {
  auto& a = the_account();
  std::lock_guard lock(a.mutex);
  for (auto drop : a.let_go) drop(a);
}

template <class T>
class vectors {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                "only vectors of numbers are kept");

 public:
  // Whether a vector of `count` values is worth keeping.
  static bool worth(std::size_t count) { return count >= smallest / sizeof(T); }

  // Gives `out` the storage of a kept vector with room for `count` values
  // and at most twice that, emptied; false if none is kept.
  static bool take(std::size_t count, std::vector<T>& out) {
    auto& a = the_account();
    std::lock_guard lock(a.mutex);
    auto& kept = store();
    drop_idle(a, kept);
    auto best = kept.end();
    for (auto it = kept.begin(); it != kept.end(); ++it)
      if (it->values.capacity() >= count && it->values.capacity() / 2 <= count &&
          (best == kept.end() || it->values.capacity() < best->values.capacity()))
        best = it;
    if (best == kept.end()) return false;
    a.bytes -= best->values.capacity() * sizeof(T);
    out = std::move(best->values);
    out.clear();
    kept.erase(best);
    return true;
  }

  // Keeps the storage of `done` if it is worth it and there is room (else
  // its owner frees it).
  static void put(std::vector<T>&& done) {
    if (!worth(done.capacity())) return;
    auto bytes = done.capacity() * sizeof(T);
    auto& a = the_account();
    std::lock_guard lock(a.mutex);
    auto& kept = store();
    if (!listed_) {
      a.let_go.push_back(&drop_all);
      listed_ = true;
    }
    drop_idle(a, kept);
    if (kept.size() >= most_kept || a.bytes + bytes > cap) return;
    a.bytes += bytes;
    kept.push_back({std::move(done), clock::now()});
  }

 private:
  struct entry {
    std::vector<T> values;
    clock::time_point since;
  };

  // Guarded by the account's mutex, as listed_ is.
  static std::vector<entry>& store() {
    static auto* kept = new std::vector<entry>;
    return *kept;
  }
  static inline bool listed_ = false;

  static void drop_idle(account& a, std::vector<entry>& kept) {
    auto now = clock::now();
    std::erase_if(kept, [&](const entry& e) {
      bool drop = now - e.since > idle_limit;
      if (drop) a.bytes -= e.values.capacity() * sizeof(T);
      return drop;
    });
  }

  static void drop_all(account& a) {
    for (const auto& e : store()) a.bytes -= e.values.capacity() * sizeof(T);
    store().clear();
  }
};

}  // namespace lp::detail::spare
