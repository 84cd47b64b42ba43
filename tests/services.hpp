#pragma once
// Services shared by the unit tests.
#include <doctest/doctest.h>

#include <atomic>
#include <boost/hana/define_struct.hpp>
#include <chrono>
#include <condition_variable>
#include <launchpad/json.hpp>
#include <launchpad/launchpad.hpp>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace t {

struct Point {
  BOOST_HANA_DEFINE_STRUCT(Point, (double, x), (double, y));
  bool operator==(const Point&) const = default;
};

struct Pixel {
  int r = 0, g = 0, b = 0;
  std::string name;
  bool operator==(const Pixel&) const = default;
  NLOHMANN_DEFINE_TYPE_INTRUSIVE(Pixel, r, g, b, name)
};

struct Counter {
  long add(long x) { return total += x; }
  long get() const { return total; }
  void reset() { total = 0; }
  long total = 0;
};

struct Thrower {
  int fail(const std::string& message) { throw std::runtime_error(message); }
  int fail_oddly() { throw 42; }
};

// Records how many calls ran at once.
struct Overlap {
  int enter() {
    int now = ++inside;
    int seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    --inside;
    return now;
  }
  int max_seen() const { return peak.load(); }
  std::atomic<int> inside{0}, peak{0};
};

// All n callers meet inside the method, which only concurrent handlers allow.
struct Meeting {
  static constexpr bool lp_concurrent_handlers = true;
  bool meet(int n) {
    std::unique_lock lock(mutex);
    ++arrived;
    everyone.notify_all();
    return everyone.wait_for(lock, std::chrono::seconds(10),
                             [&] { return arrived >= n; });
  }
  std::mutex mutex;
  std::condition_variable everyone;
  int arrived = 0;
};

// Sleeps as long as asked; calls may overlap.
struct Sleepy {
  static constexpr bool lp_concurrent_handlers = true;
  int sleep(int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return ms;
  }
};

template <class V>
struct Box {
  V echo(const V& value) const { return value; }
};

}  // namespace t

LP_SERVICE(t::Counter, add, get, reset);
LP_SERVICE(t::Thrower, fail, fail_oddly);
LP_SERVICE(t::Overlap, enter, max_seen);
LP_SERVICE(t::Meeting, meet);
LP_SERVICE(t::Sleepy, sleep);
