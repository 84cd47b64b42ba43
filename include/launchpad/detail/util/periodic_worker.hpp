#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

namespace lp::detail {

// A thread that does a round of work, waits until the time the round asked
// for, and does another, until it is stopped. A stop ends the wait at once;
// a round under way runs to its end (one that may take long asks
// stop_requested() between its steps).
class periodic_worker {
 public:
  using clock = std::chrono::steady_clock;

  periodic_worker() = default;
  periodic_worker(const periodic_worker&) = delete;
  periodic_worker& operator=(const periodic_worker&) = delete;
  ~periodic_worker() { stop(); }

  // `round()` runs at once, then whenever the clock::time_point it returned
  // comes. Once per worker.
  template <class Round>
  void start(Round round) {
    thread_ = std::thread([this, round = std::move(round)]() mutable {
      std::unique_lock lock(mutex_);
      while (!stopping_) {
        lock.unlock();
        auto next = round();
        lock.lock();
        changed_.wait_until(lock, next, [&] { return stopping_; });
      }
    });
  }

  // Wakes the worker from its wait, without waiting for it: a caller
  // stopping many workers asks them all first, then joins each.
  void request_stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
  }

  bool stop_requested() const {
    std::lock_guard lock(mutex_);
    return stopping_;
  }

  // Returns once the thread is gone; safe to call twice, or unstarted.
  void stop() {
    request_stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace lp::detail
