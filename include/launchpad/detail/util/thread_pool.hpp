#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

namespace lp::detail {

// A pool that starts a thread whenever every thread is busy, up to a bound,
// and lets a thread go once it has been idle for `idle_limit`: the threads
// follow the load up and back down. Client futures run on it: a call blocks
// its thread for a round trip, and nested calls must never wait for a thread
// that only they could free. A node's server uses it too
// (serve/listener.hpp says why).
class thread_pool {
 public:
  explicit thread_pool(std::size_t max_threads,
                       std::chrono::milliseconds idle_limit = std::chrono::seconds(2))
      : max_threads_(max_threads), idle_limit_(idle_limit) {}
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() { shutdown(); }

  void enqueue(std::function<void()> job) {
    std::vector<std::thread> retired;
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
      if (jobs_.size() > idle_ && threads_.size() < max_threads_) {
        // The thread finds its own place in the list, to leave it when idle.
        auto place = threads_.emplace(threads_.end());
        *place = std::thread([this, place] { work(place); });
      }
      retired.swap(retired_);
    }
    ready_.notify_one();
    for (auto& thread : retired) thread.join();
  }

  // Runs the jobs already queued, then joins every thread.
  void shutdown() {
    std::list<std::thread> threads;
    std::vector<std::thread> retired;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      threads.swap(threads_);
      retired.swap(retired_);
    }
    ready_.notify_all();
    for (auto& thread : threads) thread.join();
    for (auto& thread : retired) thread.join();
  }

  // Threads alive now, busy or idle.
  std::size_t threads() {
    std::lock_guard lock(mutex_);
    return threads_.size();
  }

 private:
  void work(std::list<std::thread>::iterator place) {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      bool woken = ready_.wait_for(lock, idle_limit_, [&] { return stopping_ || !jobs_.empty(); });
      --idle_;
      if (!woken) {
        // Idle too long: leave. The next enqueue (or shutdown) joins us.
        retired_.push_back(std::move(*place));
        threads_.erase(place);
        return;
      }
      if (jobs_.empty()) return;  // stopping
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  const std::size_t max_threads_;
  const std::chrono::milliseconds idle_limit_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::list<std::thread> threads_;
  std::vector<std::thread> retired_;  // left, not yet joined
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

// The process-wide pool behind client futures.
inline thread_pool& call_pool() {
  static thread_pool pool(256);
  return pool;
}

}  // namespace lp::detail
