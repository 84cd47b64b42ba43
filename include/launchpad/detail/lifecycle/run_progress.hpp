#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <launchpad/detail/util/tally.hpp>

namespace lp::detail {

// The signs of life of one node's run(), for its group's health_timeout.
// A run() that loops forever is no hang as long as it keeps touching the
// library (a call, lp::stop_requested(), a metric, lp::heartbeat()); one
// that waits in the library (a call, lp::wait_for_stop()) is not silent
// either: what it waits for is watched apart (the callee's own
// health_timeout, the call's deadline, the stop).
class run_progress {
 public:
  using clock = std::chrono::steady_clock;

  // These run on run()'s own thread, the only one that writes: a sign is a
  // load and a store, no clock read and no locked instruction, so a call
  // or a metric may make one each time.
  void begin() noexcept {
    sign();
    running_.store(true, std::memory_order_relaxed);
  }
  void end() noexcept { running_.store(false, std::memory_order_relaxed); }
  void sign() noexcept { signs_.add(1); }
  void enter_wait() noexcept { waits_.add(1); }
  void leave_wait() noexcept {
    sign();
    waits_.subtract(1);
  }

  // For the watchdog alone, which asks often (a few times per
  // health_timeout): how long it has seen run() make no sign. Zero while
  // run() waits in the library, before it starts and after it returned.
  clock::duration silence(clock::time_point now) noexcept {
    auto signs = signs_.get();
    if (!running_.load(std::memory_order_relaxed) || waits_.get() != 0 ||
        signs != seen_signs_) {
      seen_signs_ = signs;
      quiet_since_ = now;
    }
    return now - quiet_since_;
  }

 private:
  std::atomic<bool> running_{false};
  tally waits_;
  tally signs_;
  // The watchdog's own: the signs it saw last, and since when it has.
  std::uint64_t seen_signs_ = 0;
  clock::time_point quiet_since_{};
};

// The progress of the run() this thread runs; null on any other thread (a
// handler's, main's, or one run() started), whose signs do not count.
inline run_progress*& this_threads_run() {
  thread_local run_progress* progress = nullptr;
  return progress;
}

inline void sign_of_life() noexcept {
  if (auto* progress = this_threads_run()) progress->sign();
}

// Marks a run() that waits in the library for as long as it does.
class library_wait {
 public:
  library_wait() noexcept : progress_(this_threads_run()) {
    if (progress_) progress_->enter_wait();
  }
  library_wait(const library_wait&) = delete;
  library_wait& operator=(const library_wait&) = delete;
  ~library_wait() {
    if (progress_) progress_->leave_wait();
  }

 private:
  run_progress* progress_;
};

// Makes this thread's signs count for `progress` while a run() runs on it.
class watched_run {
 public:
  explicit watched_run(run_progress& progress) noexcept : progress_(progress) {
    this_threads_run() = &progress_;
    progress_.begin();
  }
  watched_run(const watched_run&) = delete;
  watched_run& operator=(const watched_run&) = delete;
  ~watched_run() {
    progress_.end();
    this_threads_run() = nullptr;
  }

 private:
  run_progress& progress_;
};

}  // namespace lp::detail
