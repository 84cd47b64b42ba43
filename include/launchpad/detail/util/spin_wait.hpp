#pragma once

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <chrono>

namespace lp::detail {

// A short spin before a thread blocks on a socket: it asks the socket
// without blocking, yielding the CPU between asks, for up to `budget`.
//
// Why: a reply, or a caller's next request, usually comes within
// microseconds, and a blocked thread's wake-up is dear where the waker runs
// on another CPU that has gone idle. On a VM that costs about 100 us, ten
// times a small call between two processes (benchmarks/README.md, "Waiting
// without sleeping").
//
// A spin that ends with the socket still quiet burnt its CPU for nothing:
// each such miss in a row doubles the number of waits that block at once
// (up to 1,023), and a spin that finds its socket ready ends the run of
// misses. A peer that is slow, far or idle thus costs one budget in 1,024
// waits. One per socket, used by one thread at a time.
class spin_wait {
 public:
  static constexpr std::chrono::microseconds budget{50};

  // The events of `events` that came on `socket` within the budget, or 0:
  // block now (also when it skips its spin).
  short operator()(int socket, short events) {
    if (skips_ > 0) {
      --skips_;
      return 0;
    }
    auto until = clock::now() + budget;
    do {
      pollfd watched{socket, events, 0};
      if (::poll(&watched, 1, 0) > 0) {
        misses_ = 0;
        return watched.revents;
      }
      ::sched_yield();
    } while (clock::now() < until);
    misses_ = std::min(misses_ + 1, most_misses);
    skips_ = (1 << misses_) - 1;
    return 0;
  }

 private:
  using clock = std::chrono::steady_clock;
  static constexpr int most_misses = 10;
  int misses_ = 0;
  int skips_ = 0;
};

}  // namespace lp::detail
