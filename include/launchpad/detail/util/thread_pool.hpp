#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace lp::detail {

// A pool that starts a thread whenever every thread is busy, up to a bound.
// Client futures run on it: a call blocks its thread for a round trip, and
// nested calls must never wait for a thread that only they could free. A
// node's server uses it too (serve/listener.hpp says why).
class thread_pool {
 public:
  explicit thread_pool(std::size_t max_threads) : max_threads_(max_threads) {}
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() { shutdown(); }

  void enqueue(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
      if (jobs_.size() > idle_ && threads_.size() < max_threads_)
        threads_.emplace_back([this] { work(); });
    }
    ready_.notify_one();
  }

  // Runs the jobs already queued, then joins every thread.
  void shutdown() {
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      threads.swap(threads_);
    }
    ready_.notify_all();
    for (auto& thread : threads) thread.join();
  }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  const std::size_t max_threads_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

// The process-wide pool behind client futures.
inline thread_pool& call_pool() {
  static thread_pool pool(256);
  return pool;
}

}  // namespace lp::detail
